// Orchard-GUI's per-browser env-server protocol (POST /reset, POST /step with [{name, args}] tool calls,
// POST /exit, GET /health) served on Grove's sandboxes, so its remote client (clients/remote_env.py) runs
// unchanged against Grove. /reset carries no environment id, so each env has its own base URL:
//   http://HOST:PORT/orchard-gui/<api key>/<env name>
// (the client sends no headers: the API key is a path segment, compared in constant time; with auth off any
// segment works). Each env is one sandbox at a time; its requests run one after another, as the original's
// lock makes them. Errors answer FastAPI's {"detail": ...} shape with the original's status codes.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ERROR_CATALOG, GroveError } from '../../protocol/errors.ts';
import type { FocusedElement, Observation, ResolvedAction, SomElement } from '../../protocol/observation.ts';
import { BrowserCreateOptions } from '../../protocol/sandbox.ts';
import type { BrowserSandbox } from '../../browser-env/types.ts';
import { parseModelOutput } from '../../vlm-client/formats/index.ts';
import type { RouteContext } from '../route.ts';
import { browserSandbox } from '../routes/common.ts';
import { TOOL_NAMES } from '../../vlm-client/formats/orchard-tools.ts';
import { callText, cssPoints, observationOf, onGrid, ResetBody, sandboxFor, StepBody, type EnvConfig } from './convert.ts';
import { domChanges, invalidCall, refuse, toolResponse, unknownTool, type PageFacts } from './feedback.ts';

export const ORCHARD_GUI_PREFIX = '/orchard-gui';

interface Env {
  sandboxId: string;
  taskId: string;
  config: EnvConfig;
  toolList: unknown[];
  policy: string;
  steps: number;
  lastUsed: number;
  /** The last observation's SoM list and focused element: what a call's response and the DOM-change line compare. */
  som: SomElement[];
  focused: FocusedElement | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
  }
}

const Params = z.object({ key: z.string().min(1).max(500), env: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/) });

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export function orchardGuiPlugin(ctx: RouteContext) {
  const envs = new Map<string, Env>();
  /** Per-env promise chain: one request at a time per env (the original's asyncio lock). */
  const queues = new Map<string, Promise<unknown>>();
  const busy = new Set<string>();
  const expected = ctx.config.authDisabled || !ctx.config.apiKey ? null : sha256(ctx.config.apiKey);

  function envName(request: FastifyRequest): string {
    const p = Params.safeParse(request.params);
    if (!p.success) throw new HttpError(404, 'Not Found');
    if (expected && !timingSafeEqual(sha256(p.data.key), expected)) throw new HttpError(403, 'Wrong API key in the env URL (/orchard-gui/<api key>/<env>).');
    return p.data.env;
  }

  function serial<T>(env: string, fn: () => Promise<T>): Promise<T> {
    const prev = queues.get(env) ?? Promise.resolve();
    const run = prev.then(async () => {
      busy.add(env);
      try {
        return await fn();
      } finally {
        busy.delete(env);
      }
    });
    const settled = run.catch(() => undefined);
    queues.set(env, settled);
    void settled.then(() => {
      if (queues.get(env) === settled) queues.delete(env);
    });
    return run;
  }

  async function observe(sb: BrowserSandbox): Promise<Observation> {
    const obs = await sb.observe({ screenshot: 'base64', som: true });
    // The element list and the capture run under short deadlines and come back empty when the page is slow to
    // answer (a loaded machine): a second look before telling the model there is nothing on the screen.
    if (obs.som?.length && obs.screenshot?.base64) return obs;
    return sb.observe({ screenshot: 'base64', som: true });
  }

  async function reset(env: string, body: ResetBody): Promise<object> {
    if (envs.has(env)) throw new HttpError(400, 'Unexpected /reset call: Env already exists.');
    const spec = BrowserCreateOptions.parse(sandboxFor(body, env));
    const info = ctx.registry.create(spec);
    const fail = async (what: string): Promise<never> => {
      await ctx.registry.delete(info.sandbox_id).catch(() => undefined);
      throw new HttpError(500, { message: `/reset failed for task ${body.task_id}: ${what}` });
    };
    const ready = await ctx.registry.wait(info.sandbox_id, 120_000);
    if (ready.status !== 'ready') return fail(ready.error ? `${ready.error.code}: ${ready.error.message}` : `sandbox ${ready.status}`);
    const sb = browserSandbox(ctx, info.sandbox_id);
    // web_env retries the start page up to max_retries times.
    let error = sb.startError;
    for (let i = 1; error && i < body.env_config.max_retries; i++) {
      const r = await sb.step([{ action: 'goto', url: spec.start_url as string }], { screenshot: 'none' });
      error = r.observation.last_action_error;
    }
    if (error) return fail(`Failed to navigate to ${spec.start_url} after ${body.env_config.max_retries} attempts: ${error.code}: ${error.message}`);
    const obs = await observe(sb);
    envs.set(env, {
      sandboxId: info.sandbox_id, taskId: body.task_id, config: body.env_config, toolList: body.tool_list, policy: body.policy,
      steps: 0, lastUsed: Date.now(), som: obs.som ?? [], focused: obs.focused ?? null,
    });
    return {
      observation: await observationOf(obs, body.env_config),
      info: { tool_list: body.tool_list, policy: body.policy, env_message: 'Browser environment reset successfully.', tool_response: [] },
    };
  }

  async function step(env: string, calls: z.infer<typeof StepBody>['actions']): Promise<object> {
    const e = envs.get(env);
    if (!e) throw new HttpError(400, 'env not initialized – call /reset first');
    const sb = browserSandbox(ctx, e.sandboxId);
    const toolResponses: { tool_name: string; tool_response: string }[] = [];
    let terminated = false;
    const start = await sb.pageState();
    let facts: PageFacts = { url: start.url, tabs: start.tabs, som: e.som, focused: e.focused };
    for (const [i, call] of calls.entries()) {
      const respond = (text: string) => toolResponses.push({ tool_name: call.name, tool_response: text });
      // As web_env: the episode is terminated when the last call is a successful `done`.
      terminated = false;
      if (!TOOL_NAMES.includes(call.name)) {
        respond(unknownTool(call.name));
        continue;
      }
      const refused = refuse(call.name, call.args, facts);
      if (refused) {
        respond(refused);
        continue;
      }
      await sb.syncParseContext?.();
      const parsed = parseModelOutput('orchard', callText(onGrid(call, e.config)), sb.parseContext());
      if (!parsed.ok) {
        respond(invalidCall(call.name, parsed.error.replace(/^\S+ \(call \d+\): /, '')));
        continue;
      }
      // The element list (and focus) after a call is what the next call's response names; the last call's comes
      // with the step's observation. A write reports the field it typed into.
      const som = i < calls.length - 1 || call.name === 'write';
      const r = await sb.step(parsed.actions, { screenshot: 'none', som });
      const resolved: ResolvedAction[] = r.actions;
      const after: PageFacts = { url: r.observation.url, tabs: r.observation.tabs, som: r.observation.som ?? facts.som, focused: r.observation.focused ?? null };
      respond(toolResponse({ name: call.name, args: call.args, css: cssPoints(call, e.config), before: facts, after, resolved }));
      facts = after;
      terminated = call.name === 'done' && resolved.every((a) => a.error === null);
    }
    ctx.registry.touch(e.sandboxId);
    e.steps++;
    e.lastUsed = Date.now();
    const obs = await observe(sb);
    const truncated = !terminated && e.config.max_steps !== undefined && e.steps >= e.config.max_steps;
    const dom = domChanges(e.som, obs.som ?? []);
    e.som = obs.som ?? [];
    e.focused = obs.focused ?? null;
    return {
      observation: await observationOf(obs, e.config),
      reward: 0.0,
      terminated,
      truncated,
      info: { tool_list: e.toolList, policy: e.policy, env_message: `Start to execute actions....${dom ? ` ${dom}` : ''}`, tool_responses: toolResponses },
    };
  }

  async function exit(env: string): Promise<object> {
    const e = envs.get(env);
    if (!e) throw new HttpError(400, 'env not initialized – call /reset first');
    envs.delete(env);
    await ctx.registry.delete(e.sandboxId);
    return { status: 'ok' };
  }

  function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
    const r = schema.safeParse(value ?? {});
    if (r.success) return r.data;
    throw new HttpError(422, r.error.issues.map((i) => ({ loc: ['body', ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))], msg: i.message, type: i.code })));
  }

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.setErrorHandler((err: FastifyError | GroveError | HttpError | Error, request, reply: FastifyReply) => {
      if (err instanceof HttpError) return reply.code(err.status).send({ detail: err.detail });
      if (err instanceof GroveError) {
        ctx.metrics.error(err.code);
        if (err.status >= 500) ctx.log.error({ err, url: request.url.replace(/^\/orchard-gui\/[^/]+/, '/orchard-gui/***') }, 'orchard-gui request failed');
        return reply.code(err.status).send({ detail: err.message, error: { code: err.code, message: err.message } });
      }
      const status = (err as FastifyError).statusCode;
      if (typeof status === 'number' && status >= 400 && status < 500) return reply.code(status).send({ detail: err.message });
      ctx.log.error({ err }, 'orchard-gui internal error');
      return reply.code(500).send({ detail: ERROR_CATALOG.internal_error.message });
    });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }));
    // The key is checked here (the client cannot send an X-API-Key header): routes opt out of the header check.
    const open = { config: { auth: false } };
    app.post('/:key/:env/reset', open, async (request) => {
      const env = envName(request);
      const body = parseBody(ResetBody, request.body);
      return serial(env, () => reset(env, body));
    });
    app.post('/:key/:env/step', open, async (request) => {
      const env = envName(request);
      const body = parseBody(StepBody, request.body);
      return serial(env, () => step(env, body.actions));
    });
    app.post('/:key/:env/exit', open, async (request) => {
      const env = envName(request);
      return serial(env, () => exit(env));
    });
    app.get('/:key/:env/health', open, async (request) => {
      const env = envName(request);
      const e = envs.get(env);
      return { initialized: e !== undefined, task_id: e?.taskId ?? null, locked: busy.has(env), idle_secs: e ? Math.round((Date.now() - e.lastUsed) / 100) / 10 : null };
    });
    // A sandbox that closed under an env (expired, deleted) frees the env for a new /reset.
    ctx.registry.onEvent((ev) => {
      if (ev.type !== 'closed') return;
      for (const [name, e] of envs) if (e.sandboxId === ev.id) envs.delete(name);
    });
  };
}
