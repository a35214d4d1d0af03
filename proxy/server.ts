// `grove proxy`: an OpenAI-compatible endpoint that forwards every model call to an upstream server and records
// it. Model calls: `/r/<rollout>/v1/...` or `/v1/...` (rollout.ts says who may record into which rollout); the
// answer streams through unchanged (SSE included) from the raw response, taken over from fastify per call.
// Admin routes (with the admin key): POST /rollouts (issue a per-rollout key), POST /rollouts/:id/reward,
// GET /rollouts/:id/calls. GET /health needs no key. Every error of the proxy's own is in the OpenAI shape with a
// code from errors.ts; bodies are read as bytes (the record keeps what the harness sent) up to MAX_BODY.
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import { PROXY_ERRORS, proxyError, type ProxyErrorCode } from './errors.ts';
import { forwardCall } from './forward.ts';
import { RolloutKeys } from './keys.ts';
import { authorizeCall, parseCall, validRolloutId } from './rollout.ts';
import { readCallsAsync, RecordStore, writeRewardAsync } from './store.ts';
import type { ProxyOptions } from './types.ts';

const MAX_BODY = 64 * 1024 * 1024;

export interface RecordingProxy {
  /** Base URL of the proxy, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** The OpenAI base URL a harness of this rollout uses (`<url>/r/<rollout>/v1`). */
  baseUrlFor(rollout: string): string;
  /** A per-rollout API key (the harness then uses `<url>/v1` with it). */
  issueKey(rollout: string): string;
  store: RecordStore;
  close(): Promise<void>;
}

function sameKey(given: string | undefined, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function fail(reply: FastifyReply, code: ProxyErrorCode, message: string): FastifyReply {
  return reply.code(PROXY_ERRORS[code]).type('application/json').send({ error: { message, type: code, code } });
}

/** An admin body: empty, or a JSON object. */
function adminBody(req: FastifyRequest): Record<string, unknown> | string {
  const body = req.body as Buffer | undefined;
  if (!body?.length) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return 'the body is not JSON';
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'the body must be a JSON object';
}

interface AppContext {
  opts: ProxyOptions;
  store: RecordStore;
  keys: RolloutKeys;
  log: Logger;
  inflight: Set<Promise<void>>;
  url(): string;
}

/** The proxy's fastify app, not listening (tests use `app.inject` for everything that does not reach an upstream). */
export interface ProxyApp {
  app: FastifyInstance;
  keys: RolloutKeys;
  store: RecordStore;
  /** Model calls under way (each resolves once recorded and answered). */
  inflight: Set<Promise<void>>;
}

export async function createProxyApp(opts: ProxyOptions, log: Logger = silentLogger, url: () => string = () => ''): Promise<ProxyApp> {
  const store = await new RecordStore(opts.dir).init();
  const keys = new RolloutKeys(opts.dir);
  const inflight = new Set<Promise<void>>();
  return { app: buildApp({ opts, store, keys, log, inflight, url }), keys, store, inflight };
}

function buildApp(ctx: AppContext): FastifyInstance {
  const { opts, store, keys, log } = ctx;
  const app = Fastify({
    bodyLimit: MAX_BODY,
    keepAliveTimeout: 65_000,
    requestIdHeader: false,
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: (err, _req, reply) => {
      if (err.code === 'FST_ERR_BAD_URL') void fail(reply, 'invalid_path', 'the request path is not valid percent-encoding');
      else void fail(reply, 'invalid_request', `the request could not be read: ${err.message}`);
    },
  });
  // Every body as bytes, whatever its content type: a model call is recorded and forwarded as sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.setNotFoundHandler((req, reply) => fail(reply, 'not_found', `no route ${req.method} ${req.url.split('?')[0].slice(0, 200)}: model calls go to /v1/... or /r/<rollout>/v1/...`));
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail(reply, 'body_too_large', `request bodies are limited to ${MAX_BODY} bytes`);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return fail(reply, 'invalid_request', `the request could not be read: ${err.message}`);
    log.error({ err, url: req.url }, 'proxy request failed');
    return fail(reply, 'proxy_error', 'the proxy failed on this call; it was not recorded');
  });

  // Admin routes.
  const adminOnly = async (req: FastifyRequest, reply: FastifyReply) => {
    const given = (req.headers['x-api-key'] as string | undefined) ?? (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    if (!opts.adminKey) return fail(reply, 'admin_disabled', 'start the proxy with an admin key to use /rollouts');
    if (!sameKey(given, opts.adminKey)) return fail(reply, 'unauthorized', 'missing or wrong admin key');
  };
  const rolloutParam = (req: FastifyRequest, reply: FastifyReply): string | undefined => {
    const id = (req.params as { id: string }).id;
    if (validRolloutId(id)) return id;
    void fail(reply, 'invalid_rollout', 'rollout ids: letters, digits, . _ - (at most 128)');
    return undefined;
  };
  app.get('/health', async () => ({ ok: true }));
  app.post('/rollouts', { preHandler: adminOnly }, async (req, reply) => {
    const body = adminBody(req);
    if (typeof body === 'string') return fail(reply, 'invalid_json', body);
    const id = typeof body.rollout_id === 'string' ? body.rollout_id : `ro_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    if (!validRolloutId(id)) return fail(reply, 'invalid_rollout', 'rollout_id: letters, digits, . _ - (at most 128)');
    const url = ctx.url();
    const apiKey = keys.issue(id);
    await keys.flushed();
    return reply.code(201).send({ rollout_id: id, api_key: apiKey, base_url: `${url}/v1`, path_base_url: `${url}/r/${id}/v1` });
  });
  app.post('/rollouts/:id/reward', { preHandler: adminOnly }, async (req, reply) => {
    const id = rolloutParam(req, reply);
    if (id === undefined) return reply;
    const body = adminBody(req);
    if (typeof body === 'string') return fail(reply, 'invalid_json', body);
    if (typeof body.reward !== 'number' || !Number.isFinite(body.reward)) return fail(reply, 'invalid_reward', 'reward must be a finite number');
    await writeRewardAsync(opts.dir, id, body.reward, body.info);
    return { rollout_id: id, reward: body.reward };
  });
  app.get('/rollouts/:id/calls', { preHandler: adminOnly }, async (req, reply) => {
    const id = rolloutParam(req, reply);
    if (id === undefined) return reply;
    return { calls: await readCallsAsync(opts.dir, id) };
  });
  // Any other /rollouts path: the admin key first, then 404.
  app.all('/rollouts/*', { preHandler: adminOnly }, async (req, reply) => fail(reply, 'not_found', `no admin route ${req.method} ${req.url.split('?')[0].slice(0, 200)}`));

  // Model calls: resolved from the raw URL (rollout.ts), then streamed through on the raw response.
  const modelCall = async (req: FastifyRequest, reply: FastifyReply) => {
    const parsed = parseCall(req.raw.url ?? '/', req.headers);
    if ('error' in parsed) return fail(reply, parsed.error, parsed.message);
    await keys.recall(parsed.keys, parsed.named);
    const call = authorizeCall(parsed, keys, opts.rolloutKeys ?? 'required');
    if ('error' in call) return fail(reply, call.error, call.message);
    reply.hijack();
    const work = forwardCall({ opts, store }, req.raw, reply.raw, call, (req.body as Buffer | undefined) ?? Buffer.alloc(0)).catch((err: unknown) => {
      log.error({ err }, 'proxy call failed');
      proxyError(reply.raw, 'proxy_error', 'the proxy failed on this call; it was not recorded');
    });
    ctx.inflight.add(work);
    await work.finally(() => ctx.inflight.delete(work));
  };
  app.all('/v1/*', modelCall);
  app.all('/r/*', modelCall);
  return app;
}

export async function startProxy(opts: ProxyOptions & { host?: string; port?: number; logger?: Logger }): Promise<RecordingProxy> {
  const log = opts.logger ?? silentLogger;
  let url = '';
  const { app, keys, store, inflight } = await createProxyApp(opts, log, () => url);
  await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const host = opts.host && opts.host !== '0.0.0.0' && opts.host !== '::' ? opts.host : '127.0.0.1';
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ url, upstream: opts.upstream, dir: opts.dir }, 'recording proxy listening');
  return {
    url,
    baseUrlFor: (rollout) => `${url}/r/${encodeURIComponent(rollout)}/v1`,
    issueKey: (rollout) => keys.issue(rollout),
    store,
    close: async () => {
      // Calls under way finish (and are recorded); idle kept-alive connections are closed.
      const closed = app.close();
      app.server.closeIdleConnections();
      await Promise.allSettled([...inflight]);
      app.server.closeIdleConnections();
      await closed;
      await keys.flushed();
      await store.close();
    },
  };
}
