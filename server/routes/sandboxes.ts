// Sandbox lifecycle routes: create, list, info, wait, heartbeat, delete.
import { SandboxIdParams, SandboxList, SandboxListQuery, WaitQuery } from '../../protocol/api.ts';
import { CreateSandboxBody, SandboxInfo } from '../../protocol/sandbox.ts';
import { checkStartUrl } from '../../browser-env/url-policy.ts';
import { checkRecordingOptions } from '../recording.ts';
import { resolveClawSpec } from '../../claw-env/sandbox.ts';
import { pairShellWithClaw, pairWithClaw } from './claw.ts';
import { errorResponses, labelFilter } from './common.ts';
import { defineRoute, type RouteContext } from '../route.ts';

/** Creates one sandbox from a validated body (shared by the single and the batch create). */
export async function createOne(ctx: RouteContext, body: CreateSandboxBody): Promise<SandboxInfo> {
  // A Claw sandbox's spec (task, fixture) is checked now, and a paired browser gets exactly its origin.
  if (body.type === 'claw') resolveClawSpec(body);
  if (body.type === 'shell' && body.claw_sandbox !== undefined) {
    // As for a browser (below): another server sharing the sandboxes may hold the claw sandbox.
    await ctx.registry.sync(body.claw_sandbox);
    pairShellWithClaw(body, ctx);
  }
  if (body.type !== 'browser') return ctx.registry.create(body);
  // A scheme no sandbox may open (file:, chrome:, javascript:…) is a 400 now, not a sandbox that failed to start.
  checkStartUrl(body.start_url);
  // Recording options that cannot work answer 400 now, not as a failed sandbox later.
  await checkRecordingOptions(body, ctx.config.recordingsDir);
  if (body.claw_sandbox !== undefined) {
    // Another server sharing the sandboxes may hold it (kubernetes replicas): adopted here, its details read.
    await ctx.registry.sync(body.claw_sandbox);
    pairWithClaw(body, ctx);
  }
  // A task fills in the start URL (offline sites: a fresh session) and the episode's state.
  const prepared = await ctx.episodes.prepare(body);
  const info = ctx.registry.create(prepared.body);
  ctx.episodes.attach(info.sandbox_id, prepared.state);
  return info;
}

const createSandbox = defineRoute({
  id: 'createSandbox',
  method: 'POST',
  url: '/sandboxes',
  summary: 'Create a sandbox',
  description:
    'Starts creating a sandbox in the background and answers at once (status `creating`, or `ready` when a warm one was ' +
    'taken). Wait for it with GET /sandboxes/{id}/wait. Over the live-sandbox limit: 503 capacity_exhausted with Retry-After. ' +
    'With `record: true` the episode is written to `<recordingsDir>/<sandbox_id>/` (closed on delete); `replay_har` must ' +
    'name a HAR inside the recordings directory, else 400.',
  tags: ['sandboxes'],
  body: CreateSandboxBody,
  responses: { 201: { description: 'Sandbox accepted', schema: SandboxInfo }, ...errorResponses(400, 401, 403, 503) },
  async handler({ body, reply, ctx }) {
    const info = await createOne(ctx, body);
    reply.code(201);
    return info;
  },
});

const listSandboxes = defineRoute({
  id: 'listSandboxes',
  method: 'GET',
  url: '/sandboxes',
  summary: 'List sandboxes that are not closed',
  description: 'Filter by labels with `label=key=value` (repeatable; all must match), e.g. to clean up after a crashed trainer.',
  tags: ['sandboxes'],
  query: SandboxListQuery,
  responses: { 200: { description: 'Sandboxes', schema: SandboxList }, ...errorResponses(400, 401, 403) },
  async handler({ query, ctx }) {
    const match = labelFilter(query.label);
    ctx.registry.syncAll();
    return { sandboxes: ctx.registry.list().filter(match) };
  },
});

const getSandbox = defineRoute({
  id: 'getSandbox',
  method: 'GET',
  url: '/sandboxes/:id',
  summary: 'Sandbox info (also for recently closed sandboxes, with status `closed`)',
  tags: ['sandboxes'],
  params: SandboxIdParams,
  responses: { 200: { description: 'Sandbox info', schema: SandboxInfo }, ...errorResponses(401, 403, 404) },
  async handler({ params, ctx }) {
    return ctx.registry.info(params.id);
  },
});

const waitSandbox = defineRoute({
  id: 'waitSandbox',
  method: 'GET',
  url: '/sandboxes/:id/wait',
  summary: 'Wait until the sandbox is ready or failed',
  description: 'Answers when the sandbox leaves `creating`, or after `timeout` seconds with the status it has then.',
  tags: ['sandboxes'],
  params: SandboxIdParams,
  query: WaitQuery,
  responses: { 200: { description: 'Sandbox info', schema: SandboxInfo }, ...errorResponses(400, 401, 403, 404) },
  async handler({ params, query, ctx }) {
    return ctx.registry.wait(params.id, query.timeout * 1000);
  },
});

const heartbeat = defineRoute({
  id: 'heartbeat',
  method: 'POST',
  url: '/sandboxes/:id/heartbeat',
  summary: 'Keep an idle sandbox alive (extends the idle deadline, not the TTL)',
  tags: ['sandboxes'],
  params: SandboxIdParams,
  responses: { 200: { description: 'Sandbox info', schema: SandboxInfo }, ...errorResponses(401, 403, 404, 410) },
  async handler({ params, ctx }) {
    return ctx.registry.heartbeat(params.id);
  },
});

const deleteSandbox = defineRoute({
  id: 'deleteSandbox',
  method: 'DELETE',
  url: '/sandboxes/:id',
  summary: 'Close a sandbox (idempotent)',
  description:
    'Closes the sandbox and frees its resources; answers 204 also when it was already closed (deleted or expired). ' +
    'An id this server never issued (or forgot) answers 404 sandbox_not_found.',
  tags: ['sandboxes'],
  params: SandboxIdParams,
  responses: { 204: { description: 'Closed' }, ...errorResponses(401, 403, 404) },
  async handler({ params, reply, ctx }) {
    await ctx.registry.delete(params.id);
    reply.code(204);
    return undefined;
  },
});

export const sandboxRoutes = [createSandbox, listSandboxes, getSandbox, waitSandbox, heartbeat, deleteSandbox];
