// buildApp composes the core (registry + backend), auth, error handling, metrics and the routes into a
// fastify instance without listening; server.ts boots it. Tests call buildApp and app.inject().
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ERROR_CATALOG, GroveError, type ErrorCode } from '../protocol/errors.ts';
import type { GroveConfig } from '../sandbox/config.ts';
import { LocalBackend, type LocalEnvironments } from '../sandbox/local-backend.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { SandboxRegistry } from '../sandbox/registry.ts';
import { Admission } from '../sandbox/admission.ts';
import { StepHooks } from '../sandbox/step-hook.ts';
import { lazyChildLogger } from './lazy-logger.ts';
import type { Backend, Clock } from '../sandbox/types.ts';
import { EpisodeService } from '../episodes/service.ts';
import { Metrics } from './metrics.ts';
import { buildOpenApi } from './openapi.ts';
import type { AnyRoute, RouteContext } from './route.ts';
import { ORCHARD_PREFIX, orchardPlugin } from './orchard/plugin.ts';
import { ORCHARD_GUI_PREFIX, orchardGuiPlugin } from './orchard-gui/plugin.ts';
import { attachPtySockets } from './pty-socket.ts';
import { OPENENV_PREFIX, OPENENV_WS_PATH, openEnvServer } from '../openenv/plugin.ts';
import { stepChannel } from './step-socket.ts';
import { ROUTES } from './routes/index.ts';
import { hostAllowedWithoutAuth, originAllowedWithoutAuth } from '../sandbox/host-guard.ts';
import { RecordingBrowserEnvironment } from './recording.ts';
import { ClawEnvironment } from '../claw-env/sandbox.ts';
import { parseInput } from './validation.ts';
import { registerStreamUpload } from './stream-upload.ts';
import { mcpPlugin, SandboxTokens } from '../mcp/plugin.ts';
import { runBrowserStep } from './browser-step.ts';
import type { StepRequest } from '../protocol/api.ts';
import type { Action } from '../protocol/action.ts';

export interface BuildAppOptions {
  config: GroveConfig;
  /** A ready-made backend (e.g. kubernetes). Takes precedence over `environments`. */
  backend?: Backend;
  /**
   * Environment factories composed into a LocalBackend ({ browser: await createBrowserEnvironment(...) }), or a
   * function building them with the app's logger (called once, after the fastify instance exists).
   */
  environments?: LocalEnvironments | ((log: Logger) => Promise<LocalEnvironments>);
  /** Library logger; defaults to fastify's logger when `logger` is on, else silent. */
  log?: Logger;
  /** Turn on fastify's (pino) request logging at config.logLevel. Off by default (tests). */
  logger?: boolean;
  /** Where that log goes (default stdout); the embedded server of `grove run` logs to stderr, beside its progress. */
  logStream?: NodeJS.WritableStream;
  /** Time source for the registry (tests). */
  clock?: Clock;
  /** Extra routes (tests, or plugins of other environments). */
  extraRoutes?: AnyRoute[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: boolean;
  }
  interface FastifyInstance {
    grove: RouteContext;
  }
}

/** A sandbox whose offline sites run beside it (k8s/remote-sandbox.ts). */
interface SiteStateReader {
  siteState(session: string): Promise<unknown>;
}

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** The error body every failure answers with. */
function sendError(reply: FastifyReply, status: number, code: string, message: string, details?: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: details === undefined ? { code, message } : { code, message, details } });
}

export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = opts;
  // --- auth: X-API-Key on every route except those marked auth:false; compared in constant time. Without a
  // key (--no-auth) only loopback Host values are served: no DNS rebinding from a web page (sandbox/host-guard.ts).
  const expected = config.authDisabled || !config.apiKey ? null : sha256(config.apiKey);
  const denied = (headers: FastifyRequest['headers']): GroveError | null => {
    if (!expected) {
      if (!config.authDisabled) return null;
      if (!hostAllowedWithoutAuth(headers.host, config.host)) return new GroveError('forbidden_host', `Host "${String(headers.host ?? '').slice(0, 100)}" is not served while authentication is off: use a loopback address (127.0.0.1, localhost).`);
      // A page on another site sends its Origin (every WebSocket handshake, every non-GET request): refused.
      if (!originAllowedWithoutAuth(headers.origin, config.host)) return new GroveError('forbidden_origin', `Origin "${String(headers.origin).slice(0, 100)}" is not served while authentication is off: only loopback pages may use a local Grove.`);
      return null;
    }
    const given = headers['x-api-key'];
    if (typeof given !== 'string' || given === '') return new GroveError('unauthorized');
    // Hashing first gives equal-length buffers, so timingSafeEqual never throws on a length mismatch.
    if (!timingSafeEqual(sha256(given), expected)) return new GroveError('forbidden');
    return null;
  };
  const metrics = new Metrics();
  const app = Fastify({
    logger: opts.logger ? { level: config.logLevel, ...(opts.logStream ? { stream: opts.logStream } : {}) } : false,
    bodyLimit: config.bodyLimit,
    // Longer ids reach the routes (and their auth and validation) instead of fastify's bare 404.
    routerOptions: { maxParamLength: 1000 },
    // Errors fastify raises before routing (an undecodable URL such as /sandboxes/%ZZ) skip the hooks: the key is
    // checked here too, and the answer has the one error shape.
    frameworkErrors: (err, request, reply) => {
      const e = denied(request.headers) ?? new GroveError('invalid_request', `The request URL could not be decoded (${err.message}).`);
      metrics.error(e.code);
      void sendError(reply, e.status, e.code, e.message);
    },
    // Ids are generated by the registry; request ids only correlate log lines.
    requestIdHeader: false,
    // One debug line per request (below) instead of two info lines: a busy RL run makes thousands.
    logController: new LogController({ disableRequestLogging: true }),
    // No pino child per request unless fastify logs for it (server/lazy-logger.ts).
    childLoggerFactory: lazyChildLogger,
  });
  const log: Logger = opts.log ?? (opts.logger ? app.log : silentLogger);
  // The sandboxes' step hooks: the registry runs them; recording attaches to them (server/recording.ts).
  const hooks = new StepHooks(log);
  let backend: Backend;
  let sitesBeside = false;
  if (opts.backend) backend = opts.backend;
  else {
    const envs = typeof opts.environments === 'function' ? await opts.environments(log) : { ...opts.environments };
    // `record` / `record_har` / `replay_har` sandboxes are recorded (or replayed) here, where model output is known.
    sitesBeside = envs.browser?.sitesBesideSandboxes === true;
    if (envs.browser) envs.browser = new RecordingBrowserEnvironment(envs.browser, config.recordingsDir, log, hooks, envs.shared);
    // Claw sandboxes need nothing but this process: always available on the local backend.
    envs.claw ??= new ClawEnvironment();
    backend = new LocalBackend(envs);
  }
  const registry = new SandboxRegistry({
    backend,
    maxSandboxes: config.maxSandboxes,
    defaultTtlSeconds: config.defaultTtlSeconds,
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    reaperIntervalMs: config.reaperIntervalMs,
    clock: opts.clock,
    log,
    hooks,
    // Admission control where this process runs the browsers (a kubernetes backend's pods are its capacity).
    admission: opts.backend
      ? undefined
      : new Admission({
          maxStarting: config.maxStarting,
          startQueue: config.startQueue,
          loopLagMs: config.overloadLoopLagMs,
          captureMs: config.overloadCaptureMs,
          stepShare: config.overloadStepShare,
          // What the browsers' capture gates measured they serve (browser-env/capture-gate.ts, the pool's stat).
          captureCapacity: () => backend.stats().browser_capture_capacity,
        }),
  });
  metrics.attach(registry);
  const judge = config.judgeUrl && config.judgeModel ? { baseURL: config.judgeUrl, model: config.judgeModel, apiKey: config.judgeApiKey } : undefined;
  // Offline sites beside each sandbox (worker pods): a session's state is read back through its sandbox.
  const siteState = sitesBeside ? (id: string, session: string) => (registry.use(id) as Partial<SiteStateReader>).siteState?.(session) ?? Promise.resolve(undefined) : undefined;
  const episodes = new EpisodeService({ taskFiles: config.taskFiles, judge, log, siteState });
  registry.onEvent((e) => {
    if (e.type === 'closed') episodes.forget(e.id);
    else if (e.type === 'failed') episodes.sandboxFailed(e.id, `sandbox creation failed (${e.code})`);
  });
  const routes = [...ROUTES, ...(opts.extraRoutes ?? [])];
  // MCP sandbox tokens derive from the API key (replicas agree), or from a secret of this process without one.
  const mcpTokens = new SandboxTokens(config.apiKey ?? randomBytes(32).toString('base64url'));
  let doc: unknown;
  const ctx: RouteContext = {
    config,
    registry,
    metrics,
    log,
    episodes,
    version: VERSION,
    startedAt: Date.now(),
    openapi: () => (doc ??= buildOpenApi(routes, VERSION)),
    mcpTokens,
  };
  app.decorate('grove', ctx);

  app.addHook('onRequest', async (request: FastifyRequest) => {
    // /health answers anyone (the Host guard too would only hide liveness from a load balancer).
    if (request.routeOptions.config?.auth === false) return;
    const e = denied(request.headers);
    if (e) throw e;
  });

  // Sandboxes other servers created (the kubernetes backend's replicas): catch up with the shared state before a
  // route looks an id up that this server does not know yet.
  if (backend.shared) {
    app.addHook('preHandler', async (request: FastifyRequest) => {
      const p = request.params as { id?: unknown; sandbox_id?: unknown } | undefined;
      const id = typeof p?.id === 'string' ? p.id : typeof p?.sandbox_id === 'string' ? p.sandbox_id : undefined;
      if (id !== undefined) await registry.sync(id);
    });
  }

  // An empty body with `content-type: application/json` (DELETE or heartbeat from many HTTP libraries) is no
  // body, not a 400; anything else goes through fastify's own JSON parser (prototype-poisoning checks included).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    json(request, body as string, done);
  });

  app.addHook('onResponse', async (request, reply) => {
    // The request line's record is built only when it is written (this hook runs for every step).
    if (log.isLevelEnabled?.('debug') !== false) log.debug({ method: request.method, url: request.url.replace(/^\/orchard-gui\/[^/]+/, '/orchard-gui/***').replace(/^\/openenv\/[^/]+(?=\/[^/]+\/)/, '/openenv/***'), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    metrics.requests.inc({
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    });
  });

  // --- one error handler: stable codes, readable 4xx messages, no internals in 5xx bodies.
  app.setErrorHandler((err: FastifyError | GroveError | Error, request, reply) => {
    if (err instanceof GroveError) {
      metrics.error(err.code);
      if (err.retryAfter !== undefined) reply.header('retry-after', String(err.retryAfter));
      // 503s (capacity, shutdown) are expected back-pressure, not faults: one warn line, no stack.
      if (err.status === 503) log.warn({ url: request.url, code: err.code }, err.message);
      else if (err.status >= 500) log.error({ err, url: request.url, code: err.code }, 'request failed');
      else log.debug({ url: request.url, code: err.code, msg: err.message }, 'request rejected');
      return sendError(reply, err.status, err.code, err.message, err.clientDetails);
    }
    const status = (err as FastifyError).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // fastify's own client errors (bad JSON, body too large, unsupported media type): safe to show.
      const code: ErrorCode = status === 413 ? 'payload_too_large' : status === 404 ? 'not_found' : 'invalid_request';
      metrics.error(code);
      const message = status === 413 ? `${ERROR_CATALOG.payload_too_large.message} Limit: ${config.bodyLimit} bytes.` : err.message;
      return sendError(reply, status, code, message);
    }
    metrics.error('internal_error');
    log.error({ err, stack: err.stack, url: request.url, method: request.method }, 'internal error');
    return sendError(reply, 500, 'internal_error', ERROR_CATALOG.internal_error.message);
  });

  app.setNotFoundHandler((request, reply) => {
    metrics.error('not_found');
    return sendError(reply, 404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
  });

  for (const r of routes) registerRoute(app, r, ctx);
  // Large files into shell sandboxes as raw streams, outside the JSON body limit (server/stream-upload.ts).
  registerStreamUpload(app, ctx);
  // Orchard Env's API on the same core, for its SDK unchanged (errors in FastAPI's {"detail": ...} shape).
  void app.register(orchardPlugin(ctx), { prefix: ORCHARD_PREFIX });
  // Orchard-GUI's per-browser env-server protocol, one base URL per env (server/orchard-gui/plugin.ts).
  void app.register(orchardGuiPlugin(ctx), { prefix: ORCHARD_GUI_PREFIX });
  // An MCP tool server per sandbox at /sandboxes/{id}/mcp, opened by the sandbox's own token (mcp/plugin.ts);
  // each call is a step (grove_steps_total, transport mcp), counted where it is answered: its browser step is not counted again.
  const browserStep = (id: string, actions: Action[]) => runBrowserStep(ctx, id, { actions } as StepRequest, 'base64', null);
  const steps = { count: metrics.countStep, transport: 'mcp' as const };
  void app.register(mcpPlugin({ host: { registry, log, browserStep, steps }, tokens: mcpTokens, version: VERSION, log }));
  // Terminals (WebSocket upgrades) get the same check as HTTP (key; with auth off, Host and Origin);
  // `?api_key=` is accepted there for clients without headers. The step channel (server/step-socket.ts) too.
  // OpenEnv's protocol (HTTP and its /ws sessions) over the same core, for its own clients unchanged (openenv/).
  // Its browser steps run the step route's own code (server/browser-step.ts), counted under OpenEnv's transport.
  const openenv = openEnvServer({
    config, registry, episodes, log, version: VERSION, denied, meter: metrics.openenv,
    browserStep: (id, body, capture, count) => runBrowserStep(ctx, id, body, capture, count),
  });
  void app.register(openenv.routes, { prefix: OPENENV_PREFIX });
  app.addHook('preClose', () => openenv.close());
  attachPtySockets(app, ctx, (headers, queryKey) => denied(queryKey !== undefined && !headers['x-api-key'] ? { ...headers, 'x-api-key': queryKey } : headers), [
    stepChannel(app, ctx),
    { path: OPENENV_WS_PATH, checksItself: true, handle: (req, socket, head) => void openenv.upgrade(req, socket, head) },
  ]);

  app.addHook('onReady', async () => {
    registry.start();
  });
  // While in-flight requests drain, refuse new sandboxes and report shutting_down on /health.
  app.addHook('preClose', async () => {
    registry.beginShutdown();
  });
  // Closing the app closes every sandbox, then the environments (browser pool).
  app.addHook('onClose', async () => {
    await registry.shutdown();
    await backend.shutdown();
    await episodes.close();
  });
  return app;
}

function registerRoute(app: FastifyInstance, r: AnyRoute, ctx: RouteContext): void {
  app.route({
    method: r.method,
    url: r.url,
    config: { auth: r.auth !== false },
    handler: async (request, reply) => {
      const params = r.params ? parseInput(r.params, request.params, 'params') : undefined;
      const query = r.query ? parseInput(r.query, request.query, 'query') : undefined;
      const body = r.body ? parseInput(r.body, request.body ?? {}, 'body', r.bodyErrorCode) : undefined;
      const result = await r.handler({ params, query, body, request, reply, ctx });
      if (reply.sent) return reply;
      return reply.send(result);
    },
  });
}
