// OpenEnv's HTTP routes for each environment, under /openenv/<key>/<env>/… (key in the path) and /openenv/<env>/…
// (X-API-Key): POST /reset and /step (stateless, as OpenEnv's: each call runs in a fresh episode that is closed
// after it), GET /state, /health, /schema, /metadata, /tasks, and POST /mcp (JSON-RPC). Answers in FastAPI's shapes:
// 422 {"detail": [pydantic errors]} for a malformed body or action, {"detail": "..."} otherwise.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GroveError } from '../protocol/errors.ts';
import type { OpenEnvAdapter } from './envs/types.ts';
import { openEnvErrorOf, parseOr } from './envs/base.ts';
import type { Authorize } from './auth.ts';
import type { OpenEnvHost } from './host.ts';
import { handleRpc } from './mcp.ts';
import { openEpisode } from './metered.ts';
import { runStep } from './actions.ts';
import type { Sessions } from './sessions.ts';
import { type OpenEnvError, ResetArgs, RPC, rpcError, StepBody } from './wire.ts';

class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly retryAfter?: number,
  ) {
    super(typeof detail === 'string' ? detail : 'request failed');
  }
}

const STATUS: Record<string, number> = { VALIDATION_ERROR: 422, CAPACITY_REACHED: 503, FACTORY_ERROR: 503, EXECUTION_ERROR: 500 };

function schemaOf(s: z.ZodType): Record<string, unknown> {
  const j = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete j.$schema;
  return j;
}

const STATE_SCHEMA = {
  type: 'object',
  title: 'State',
  additionalProperties: true,
  properties: { episode_id: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null }, step_count: { type: 'integer', minimum: 0, default: 0 } },
};

export interface HttpDeps {
  host: OpenEnvHost;
  adapters: Map<string, OpenEnvAdapter>;
  sessions: Sessions;
  authorize: Authorize;
}

export function openEnvRoutes(d: HttpDeps) {
  const schemas = new Map<string, unknown>();

  const count = (env: string, code: string) => d.host.meter?.error(env, 'http', code);

  function envOf(request: FastifyRequest): OpenEnvAdapter {
    const p = request.params as { key?: string; env?: string };
    const a = d.adapters.get(p.env ?? '');
    const denied = d.authorize(request.headers, p.key);
    if (denied) {
      count(a?.name ?? 'unknown', denied.code);
      throw new HttpAnswer(denied.status, denied.message);
    }
    if (!a) {
      count('unknown', 'not_found');
      throw new HttpAnswer(404, 'Not Found');
    }
    return a;
  }

  /** A request body parsed with `schema`, else FastAPI's 422 (counted as VALIDATION_ERROR). */
  function bodyOf<S extends z.ZodType>(a: OpenEnvAdapter, schema: S, body: unknown): z.output<S> {
    try {
      return httpParse(schema, body);
    } catch (err) {
      count(a.name, 'VALIDATION_ERROR');
      throw err;
    }
  }

  /** One episode for one call, closed after it (OpenEnv's HTTP /reset and /step). */
  async function oneShot<T>(a: OpenEnvAdapter, fn: (e: ReturnType<OpenEnvAdapter['open']>) => Promise<T>): Promise<T> {
    const episode = openEpisode(a, d.host, 60, 'http');
    try {
      return await fn(episode);
    } catch (err) {
      const e = openEnvErrorOf(err);
      count(a.name, e.code);
      if (e.code === 'VALIDATION_ERROR') throw new HttpAnswer(422, e.detail ?? [{ type: 'value_error', loc: ['body'], msg: e.message }]);
      if (e.message === 'Internal Server Error') d.host.log.error({ err }, 'openenv request failed');
      throw new HttpAnswer(STATUS[e.code] ?? 500, e.message, e.code === 'CAPACITY_REACHED' ? 5 : undefined);
    } finally {
      await episode.close();
    }
  }

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.setErrorHandler((err: FastifyError | HttpAnswer | GroveError | Error, request, reply: FastifyReply) => {
      if (err instanceof HttpAnswer) {
        if (err.retryAfter !== undefined) reply.header('retry-after', String(err.retryAfter));
        return reply.code(err.status).send({ detail: err.detail });
      }
      const status = (err as FastifyError).statusCode;
      if (typeof status === 'number' && status > 400 && status < 500) return reply.code(status).send({ detail: err.message });
      d.host.log.error({ err, url: request.url.replace(/^\/openenv\/[^/]+(?=\/[^/]+\/)/, '/openenv/***') }, 'openenv internal error');
      return reply.code(500).type('text/plain; charset=utf-8').send('Internal Server Error');
    });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }));
    // JSON bodies are parsed here (fastify's parser, prototype-poisoning checks included), and an undecodable one
    // reaches the route: /mcp answers it with JSON-RPC's parse error, the other routes with FastAPI's 422.
    const json = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (typeof body !== 'string' || body.trim() === '') return done(null, undefined);
      json(request, body, (err: Error | null, value?: unknown) => done(null, err ? new BadJson(err.message) : value));
    });
    const open = { config: { auth: false } };
    for (const base of ['/:key/:env', '/:env']) {
      app.post(`${base}/reset`, open, async (request) => {
        const a = envOf(request);
        const args = bodyOf(a, ResetArgs, request.body ?? {});
        return oneShot(a, (e) => e.reset(args));
      });
      app.post(`${base}/step`, open, async (request) => {
        const a = envOf(request);
        const body = bodyOf(a, StepBody, request.body ?? {});
        return oneShot(a, async (e) => {
          await e.reset({});
          return runStep(e, body.action, body.timeout_s ?? undefined);
        });
      });
      // A fresh environment's state (no episode): what OpenEnv's stateless GET /state answers.
      app.get(`${base}/state`, open, async (request) => {
        envOf(request);
        return { episode_id: null, step_count: 0 };
      });
      app.get(`${base}/health`, open, async (request) => {
        envOf(request);
        return { status: 'healthy' };
      });
      app.get(`${base}/schema`, open, async (request) => {
        const a = envOf(request);
        let s = schemas.get(a.name);
        if (!s) {
          s = { action: schemaOf(a.action), observation: schemaOf(a.observation), state: STATE_SCHEMA };
          schemas.set(a.name, s);
        }
        return s;
      });
      app.get(`${base}/metadata`, open, async (request) => {
        const a = envOf(request);
        return { name: `grove-${a.name}`, description: a.description, readme_content: null, version: d.host.version, author: 'Grove', documentation_url: null };
      });
      app.get(`${base}/tasks`, open, async (request) => {
        const a = envOf(request);
        const tasks = await a.tasks(d.host);
        return { env: a.name, count: tasks.length, tasks };
      });
      app.post(`${base}/mcp`, open, async (request) => {
        const a = envOf(request);
        if (request.body === undefined || request.body instanceof BadJson) {
          d.host.meter?.error(a.name, 'mcp', 'PARSE_ERROR');
          return rpcError(null, RPC.PARSE_ERROR, 'Parse error');
        }
        return handleRpc(request.body, { adapter: a, host: d.host, sessions: d.sessions, transport: 'mcp' });
      });
    }
  };
}

/** A body that is not JSON (kept for the route to answer in its protocol's shape). */
class BadJson {
  constructor(readonly message: string) {}
}

/** A request body parsed with `schema`, else FastAPI's 422 with pydantic's error list. */
function httpParse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body instanceof BadJson) throw new HttpAnswer(422, [{ type: 'json_invalid', loc: ['body'], msg: 'JSON decode error', ctx: { error: body.message } }]);
  try {
    return parseOr(schema, body, ['body'], 'request body');
  } catch (err) {
    throw new HttpAnswer(422, (err as OpenEnvError).detail ?? [{ type: 'value_error', loc: ['body'], msg: (err as Error).message }]);
  }
}
