// One HTTP server for all offline sites, each under a path prefix (/shop/, /recipes/, /forms/).
// Sessions: `?grove_session=<id>` on any page sets the `grove_session` cookie; state is kept per session
// in memory and exposed (for judges only) at GET /__grove/state/<session>.
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import type { SiteContext } from './context.ts';
import { registerForms } from './forms/routes.ts';
import { hash32 } from '../sandbox/prng.ts';
import { registerRecipes } from './recipes/routes.ts';
import { registerShop } from './shop/routes.ts';
import { SESSION_ID_RE, SessionStore } from './state.ts';

const SESSION_COOKIE = 'grove_session';
const SESSION_PARAM = 'grove_session';
const SITE_PREFIXES = { shop: '/shop/', recipes: '/recipes/', forms: '/forms/' } as const;

export interface SitesAppOptions {
  log?: Logger;
  /** Simulated server delay of the JSON APIs, [min, max] ms (deterministic per URL). Default [200, 600]. */
  apiDelayMs?: [number, number];
  store?: SessionStore;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

/** Builds the sites app without listening (tests use `inject()`). */
export function buildSitesApp(opts: SitesAppOptions = {}): { app: FastifyInstance; store: SessionStore } {
  const log = opts.log ?? silentLogger;
  const store = opts.store ?? new SessionStore();
  const [dmin, dmax] = opts.apiDelayMs ?? [200, 600];
  const app = Fastify({ logger: false, bodyLimit: 256 * 1024 });

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    done(null, out);
  });

  app.decorateRequest('groveSession', null as never);
  app.addHook('onRequest', async (req, reply) => {
    if (req.url.startsWith('/__grove/')) return;
    const fromQuery = new URL(req.url, 'http://x').searchParams.get(SESSION_PARAM) ?? undefined;
    const fromCookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    let id = [fromQuery, fromCookie].find((v) => v !== undefined && SESSION_ID_RE.test(v));
    if (!id) id = store.newId();
    if (id !== fromCookie) reply.header('set-cookie', `${SESSION_COOKIE}=${id}; Path=/; SameSite=Lax; HttpOnly`);
    req.groveSession = store.getOrCreate(id);
    if (req.method === 'GET') store.visit(req.groveSession, req.url);
  });

  const ctx: SiteContext = {
    store,
    log,
    delay: (key) => {
      const ms = dmax <= dmin ? dmin : dmin + (hash32(key) % (dmax - dmin + 1));
      return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
    },
  };

  app.get<{ Params: { id: string } }>('/__grove/state/:id', async (req, reply) => {
    const s = store.get(req.params.id);
    if (!s) return reply.code(404).send({ error: { code: 'not_found', message: `No session ${req.params.id} on the sites server.` } });
    return reply.header('cache-control', 'no-store').send(s);
  });
  app.get('/__grove/health', async () => ({ ok: true, sessions: store.size }));
  app.get('/', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><title>Grove offline sites</title><h1>Grove offline sites</h1><ul>${Object.entries(SITE_PREFIXES)
          .map(([k, v]) => `<li><a href="${v}">${k}</a></li>`)
          .join('')}</ul>`,
      ),
  );

  registerShop(app, ctx);
  registerRecipes(app, ctx);
  registerForms(app, ctx);

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) log.error({ err, url: req.url }, 'sites: request failed');
    void reply.code(status).type('text/plain').send(status >= 500 ? 'Internal Server Error' : err.message);
  });
  return { app, store };
}

export interface SitesServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  store: SessionStore;
  close(): Promise<void>;
}

/** Starts the offline sites on `host:port` (defaults 127.0.0.1 and an ephemeral port). */
export async function startSites(opts: { port?: number; host?: string; log?: Logger; apiDelayMs?: [number, number] } = {}): Promise<SitesServer> {
  const { app, store } = buildSitesApp({ log: opts.log, apiDelayMs: opts.apiDelayMs });
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 0, host });
  const port = (app.server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  (opts.log ?? silentLogger).info({ port }, 'offline sites listening');
  return { url: `http://${shownHost}:${port}`, port, store, close: () => app.close() };
}
