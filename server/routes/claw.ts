// Claw sandbox routes: tool definitions, tool calls, state, audit log, reset, and grading a built-in task.
import { z } from 'zod';
import { SandboxIdParams } from '../../protocol/api.ts';
import {
  type ClawDetails,
  ClawAuditQuery,
  ClawAuditResponse,
  ClawCallRequest,
  ClawCallResponse,
  ClawGradeRequest,
  ClawResetRequest,
  ClawResetResponse,
  ClawStateResponse,
  ClawToolsResponse,
} from '../../protocol/claw.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { BrowserCreateOptions, ShellCreateOptions } from '../../protocol/sandbox.ts';
import { resolveClawSpec, type ClawSandbox } from '../../claw-env/sandbox.ts';
import { isClawEvalEpisode } from '../../claw-env/claw-eval/episode.ts';
import { gradeClawSandbox, relayedClaw } from '../../claw-env/sandbox-grade.ts';
import { countedStep } from '../../sandbox/step-count.ts';
import type { RouteContext } from '../route.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';

function clawSandbox(ctx: RouteContext, id: string): ClawSandbox {
  const sb = ctx.registry.use(id);
  if (sb.type !== 'claw') throw new GroveError('wrong_sandbox_type', `Sandbox ${id} is a ${sb.type} sandbox; this operation needs a claw sandbox.`);
  // A Claw-Eval task's sandbox has no apps of Grove's (state, audit, reset, pairing): its own routes are /claw-eval/*.
  if (isClawEvalEpisode(sb)) throw new GroveError('wrong_sandbox_type', `Sandbox ${id} runs a Claw-Eval task: use /sandboxes/${id}/claw-eval/tools, /claw-eval/call, /claw-eval/grade or its MCP server.`);
  return sb as ClawSandbox;
}

const ERR = errorResponses(400, 401, 403, 404, 409, 410);

function pairedClaw(ctx: RouteContext, id: string): ClawDetails {
  let sb: ClawSandbox;
  try {
    sb = clawSandbox(ctx, id);
  } catch (err) {
    if (err instanceof GroveError && err.status >= 400 && err.status < 500) throw new GroveError('invalid_request', `claw_sandbox: ${err.message}`);
    throw err;
  }
  const d = sb.details().claw;
  // A claw sandbox on a worker pod that another replica created: its origin and token are that replica's to give.
  if (!d) throw new GroveError('invalid_request', `claw_sandbox: Sandbox ${id} cannot be paired through this server (pair it through the one that created it).`);
  return d;
}

/** Opens a browser spec to exactly the paired Claw sandbox's origin (host:port) and starts it at the login URL. */
export function pairWithClaw(body: BrowserCreateOptions, ctx: RouteContext): void {
  const d = pairedClaw(ctx, body.claw_sandbox!);
  body.network.allow = [...body.network.allow, new URL(d.origin).host];
  body.start_url ??= d.login_url;
}

/** A paired shell sandbox: network through the filtering proxy with the Claw origin opened, and its address and
 * token in the environment. */
export function pairShellWithClaw(body: ShellCreateOptions, ctx: RouteContext): void {
  const d = pairedClaw(ctx, body.claw_sandbox!);
  body.block_network = false;
  body.allow = [...(body.allow ?? []), new URL(d.origin).host];
  body.env = { ...body.env, CLAW_ORIGIN: d.origin, CLAW_TOKEN: d.token };
}

const clawTools = defineRoute({
  id: 'clawTools',
  method: 'GET',
  url: '/sandboxes/:id/claw/tools',
  summary: 'Tool definitions of a Claw sandbox (OpenAI function-calling shape)',
  tags: ['claw'],
  params: SandboxIdParams,
  responses: { 200: { description: 'Tools', schema: ClawToolsResponse }, ...ERR },
  async handler({ params, ctx }) {
    const sb = clawSandbox(ctx, params.id);
    return relayedClaw(sb)?.relayClaw('GET', 'tools') ?? { tools: sb.toolDefs() };
  },
});

const clawCall = defineRoute({
  id: 'clawCall',
  method: 'POST',
  url: '/sandboxes/:id/claw/call',
  summary: 'Call one tool of a Claw sandbox',
  description:
    'Runs the tool against the sandbox state and records it in the audit log. The answer is 200 whenever the call ' +
    'reached the apps: `status` is what the app answered (200, a 4xx for invalid arguments or unknown ids with ' +
    '`error`, or an injected 429/500 that ran nothing). `arguments` may be the JSON text a model produced.',
  tags: ['claw'],
  params: SandboxIdParams,
  body: ClawCallRequest,
  responses: { 200: { description: 'Call result', schema: ClawCallResponse }, ...ERR },
  async handler({ params, body, ctx }) {
    const sb = clawSandbox(ctx, params.id);
    const remote = relayedClaw(sb);
    if (remote) {
      try {
        // Counted here as in process (the worker's answer carries the app's status), as OpenEnv's claw steps on pods.
        return await countedStep(ctx.metrics.countStep, 'claw', 'grove', () => remote.relayClaw('POST', 'call', body), (r) => ((r as { status?: number }).status ?? 500) < 400 ? 'ok' : 'error');
      } finally {
        ctx.registry.touch(params.id);
      }
    }
    let args: unknown = body.arguments;
    if (typeof args === 'string') {
      try {
        args = args.trim() === '' ? {} : JSON.parse(args);
      } catch {
        args = { __unparseable_arguments__: args };
      }
    }
    try {
      const r = await countedStep(ctx.metrics.countStep, 'claw', 'grove', () => sb.call(body.tool, args, body.actor), (c) => (c.status < 400 ? 'ok' : 'error'));
      const out: z.input<typeof ClawCallResponse> = { status: r.status, changes: r.changes, seq: r.entry.seq };
      if (r.status === 200) out.result = r.body;
      else out.error = (r.body as { error: { code: string; message: string } }).error;
      if (r.retryAfter !== undefined) out.retry_after = r.retryAfter;
      return out;
    } finally {
      ctx.registry.touch(params.id);
    }
  },
});

const clawState = defineRoute({
  id: 'clawState',
  method: 'GET',
  url: '/sandboxes/:id/claw/state',
  summary: 'The current state of a Claw sandbox\'s apps',
  tags: ['claw'],
  params: SandboxIdParams,
  responses: { 200: { description: 'State', schema: ClawStateResponse }, ...ERR },
  async handler({ params, ctx }) {
    const sb = clawSandbox(ctx, params.id);
    return relayedClaw(sb)?.relayClaw('GET', 'state') ?? { state: sb.app.state };
  },
});

const clawAudit = defineRoute({
  id: 'clawAudit',
  method: 'GET',
  url: '/sandboxes/:id/claw/audit',
  summary: 'The audit log of a Claw sandbox (every call: who, what, arguments, result)',
  description: '`since` skips entries up to that sequence number.',
  tags: ['claw'],
  params: SandboxIdParams,
  query: ClawAuditQuery,
  responses: { 200: { description: 'Audit entries', schema: ClawAuditResponse }, ...ERR },
  async handler({ params, query, ctx }) {
    const sb = clawSandbox(ctx, params.id);
    return relayedClaw(sb)?.relayClaw('GET', `audit?since=${query.since}`) ?? { entries: sb.app.audit.filter((e) => e.seq > query.since) };
  },
});

const clawReset = defineRoute({
  id: 'clawReset',
  method: 'POST',
  url: '/sandboxes/:id/claw/reset',
  summary: 'Reset a Claw sandbox to its seed (state, clock, fault sequence; the audit log is cleared)',
  description:
    'With `task_id`, a new episode of that built-in task instead: fresh apps from its seed, tools and faults, on the ' +
    'same origin and token (what a runner does between tasks instead of deleting the sandbox and creating another).',
  tags: ['claw'],
  params: SandboxIdParams,
  body: ClawResetRequest,
  responses: { 200: { description: 'Reset', schema: ClawResetResponse }, ...ERR },
  async handler({ params, body, ctx }) {
    const sb = clawSandbox(ctx, params.id);
    // A task id is checked here (a 400 for an unknown one) before a worker is asked.
    const spec = body.task_id === undefined ? null : resolveClawSpec({ type: 'claw', task_id: body.task_id, labels: {} });
    const remote = relayedClaw(sb);
    if (remote) return remote.resetClaw(body);
    if (!spec) sb.app.reset();
    else sb.switchTask(spec);
    return { ok: true as const };
  },
});

const clawGrade = defineRoute({
  id: 'clawGrade',
  method: 'POST',
  url: '/sandboxes/:id/claw/grade',
  summary: 'Grade the sandbox against the task it was created from (no LLM judge here)',
  description: 'Needs a sandbox created with `task_id`. llm_judge checks are skipped (listed in `skipped`).',
  tags: ['claw'],
  params: SandboxIdParams,
  body: ClawGradeRequest,
  responses: { 200: { description: 'Grade', schema: z.record(z.string(), z.unknown()) }, ...ERR },
  async handler({ params, body, ctx }) {
    // On a worker pod: graded here, on the audit log and final state read back from the worker (claw-env/sandbox-grade.ts,
    // the path OpenEnv's claw environment grades its terminal step by).
    const g = await gradeClawSandbox(clawSandbox(ctx, params.id), body.answer);
    if (!g) throw new GroveError('invalid_request', `Sandbox ${params.id} was not created from a task (task_id).`);
    return g;
  },
});

export const clawRoutes = [clawTools, clawCall, clawState, clawAudit, clawReset, clawGrade];
