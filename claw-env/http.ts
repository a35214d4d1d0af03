// The per-sandbox origins: one HTTP server on 127.0.0.1 (ephemeral port) per Claw sandbox, serving the apps' tool
// API (/api/...) and the web UI, both behind the sandbox's token (Bearer header, X-Claw-Token, or the cookie
// /login?token=... sets). A browser sandbox paired with it is opened to exactly this origin.
// The servers are plain node:http listeners (a sandbox costs a socket, not a framework instance); they all hand their
// requests to one fastify instance, which finds the sandbox by the port the request came in on.
// Hostile content (a seeded mail's `<script>`) is escaped in every page and no script runs on these origins
// (web/html.ts: PAGE_CSP); the cookie is HttpOnly and SameSite=Strict, and a request it authenticates must come
// from its own origin (127.0.0.1 pages on other ports are same-site, so SameSite alone does not stop them);
// redirects stay on the origin (web/redirect.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ClawApp } from './app.ts';
import { iso } from './time.ts';
import { ALL_TOOLS, openAiTool } from './tools.ts';
import { page, PAGE_CSP, SECURITY_HEADERS, type Raw } from './web/html.ts';
import { WebError } from './web/read.ts';
import { sameOriginPath } from './web/redirect.ts';
import { notFoundPage, webRoutes, type Site } from './web/routes.ts';

const MAX_BODY = 1 << 20;
const hash = (s: string) => createHash('sha256').update(s).digest();

export interface ClawServer {
  origin: string;
  /** Serves another app on the same origin and token (a sandbox reset to another task). */
  setApp(app: ClawApp): void;
  close(): Promise<void>;
}

interface ClawSite extends Site {
  expected: Buffer;
}

/** The live origins, by the local port their server listens on. */
const SITES = new Map<number, ClawSite>();

function siteOf(request: FastifyRequest): ClawSite {
  const s = SITES.get(request.raw.socket.localPort ?? 0);
  if (!s) throw new WebError(404, 'This Claw sandbox is closed.');
  return s;
}

function matches(given: unknown, expected: Buffer): boolean {
  return typeof given === 'string' && timingSafeEqual(hash(given), expected);
}

/** Whether a browser request comes from `origin` itself (or from no page: typed, or not a browser). */
function sameOriginRequest(request: FastifyRequest, origin: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const from = request.headers.origin;
  return from === undefined || from === origin;
}

function authed(request: FastifyRequest, s: ClawSite): boolean {
  const auth = request.headers.authorization;
  const header = (auth?.startsWith('Bearer ') ? auth.slice(7) : undefined) ?? request.headers['x-claw-token'];
  if (header !== undefined) return matches(header, s.expected);
  // The cookie is what a browser sends on its own: only for requests this origin's pages (or the user) made.
  return matches(request.cookies.claw_token, s.expected) && sameOriginRequest(request, s.origin);
}

const isApi = (request: FastifyRequest) => request.url.startsWith('/api/');

function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).headers(SECURITY_HEADERS).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

function sendPage(reply: FastifyReply, s: Site | undefined, status: number, title: string, active: string, body: Raw, error?: string): FastifyReply {
  const ctx = s ? { user: s.app.state.user.email, now: iso(s.app.clock.now()), apps: s.app.apps } : { user: '', now: '', apps: [] };
  return reply.code(status).headers(SECURITY_HEADERS).header('content-security-policy', PAGE_CSP).type('text/html; charset=utf-8').send(page(title, active, ctx, body, error));
}

const TITLES: Record<number, string> = { 401: 'Not signed in', 404: 'Not found', 405: 'Not allowed' };

/** Any failure as this origin answers it: JSON under /api/, a page elsewhere; never a stack. */
function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string, code = 'error'): FastifyReply {
  if (status === 413) reply.header('connection', 'close');
  if (isApi(request)) return sendJson(reply, status, { error: { code, message } });
  // The page shell names the user and the apps: only to a client this origin knows.
  const s = SITES.get(request.raw.socket.localPort ?? 0);
  return sendPage(reply, s && request.cookies && authed(request, s) ? s : undefined, status, TITLES[status] ?? 'Error', '', { html: '<p><a href="/">Home</a></p>' } as Raw, message);
}

function build(): FastifyInstance {
  const f = Fastify({
    logger: false,
    bodyLimit: MAX_BODY,
    requestIdHeader: false,
    routerOptions: { maxParamLength: 1000 },
    // An undecodable URL (/mail/message/%ZZ) is the client's mistake.
    frameworkErrors: (err, request, reply) => void sendError(request, reply, 400, `The URL could not be read (${err.message}).`, 'invalid_request'),
  });
  void f.register(fastifyCookie);
  // Bodies are read as text and parsed by the route that knows their form (JSON tool calls, urlencoded forms).
  f.removeAllContentTypeParsers();
  f.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  f.addHook('onRequest', async (request) => {
    const s = siteOf(request);
    if (request.url === '/login' || request.url.startsWith('/login?')) return;
    if (!authed(request, s)) {
      throw isApi(request) ? Object.assign(new WebError(401, 'Send the sandbox token: Authorization: Bearer <token>.'), { code: 'unauthenticated' }) : new WebError(401, 'Open /login?token=… first.');
    }
  });

  f.setErrorHandler((err: FastifyError | WebError, request, reply) => {
    if (err instanceof WebError) {
      if (err.retryAfter) reply.header('retry-after', String(err.retryAfter));
      return sendError(request, reply, err.status, err.message, (err as { code?: string }).code);
    }
    const status = (err as FastifyError).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) return sendError(request, reply, status, status === 413 ? 'Request body too large.' : err.message, 'invalid_request');
    return sendError(request, reply, 500, 'Internal error.', 'internal');
  });
  f.setNotFoundHandler(async (request) => {
    throw isApi(request) ? Object.assign(new WebError(404, `No route ${request.method} ${request.url.split('?')[0].slice(0, 300)}.`), { code: 'not_found' }) : notFoundPage(request);
  });

  f.get('/login', async (request, reply) => {
    const s = siteOf(request);
    const q = request.query as { token?: unknown; next?: unknown };
    if (!matches(typeof q.token === 'string' ? q.token : '', s.expected)) return sendPage(reply, s, 401, 'Sign in failed', '', { html: '<p>Wrong or missing token.</p>' } as Raw);
    reply.setCookie('claw_token', q.token as string, { path: '/', httpOnly: true, sameSite: 'strict' });
    return reply.code(303).headers(SECURITY_HEADERS).header('location', sameOriginPath(typeof q.next === 'string' ? q.next : null, s.origin)).send();
  });

  // --- tool API
  f.get('/api/tools', async (request, reply) => {
    const { app } = siteOf(request);
    return sendJson(reply, 200, { tools: ALL_TOOLS.filter((t) => app.offers(t)).map(openAiTool) });
  });
  f.post('/api/tools/:name', async (request, reply) => {
    const { app } = siteOf(request);
    const text = typeof request.body === 'string' ? request.body : '';
    let args: unknown = {};
    try {
      args = text.trim() ? JSON.parse(text) : {};
    } catch {
      return sendJson(reply, 400, { error: { code: 'invalid_argument', message: 'The body is not valid JSON.' } });
    }
    const r = app.call((request.params as { name: string }).name, args, String(request.headers['x-claw-actor'] ?? 'tool').slice(0, 40));
    await delay(r.delayMs);
    if (r.retryAfter) reply.header('retry-after', String(r.retryAfter));
    return sendJson(reply, r.status, r.body);
  });
  f.get('/api/state', async (request, reply) => sendJson(reply, 200, { state: siteOf(request).app.state }));
  f.get('/api/audit', async (request, reply) => sendJson(reply, 200, { entries: siteOf(request).app.audit }));
  f.post('/api/reset', async (request, reply) => {
    siteOf(request).app.reset();
    return sendJson(reply, 200, { ok: true });
  });

  // --- web UI
  webRoutes(f, { site: siteOf, sendPage, delay });
  return f;
}

const delay = (ms: number | undefined) => (ms ? new Promise<void>((ok) => setTimeout(ok, ms)) : undefined);

let shared: Promise<FastifyInstance> | undefined;

/** The one fastify instance every Claw origin routes through (built on first use, never listening itself). */
function clawFastify(): Promise<FastifyInstance> {
  shared ??= (async () => {
    const f = build();
    await f.ready();
    return f;
  })();
  return shared;
}

export async function startClawServer(app: ClawApp, token: string): Promise<ClawServer> {
  const f = await clawFastify();
  const server = http.createServer((req, res) => f.routing(req, res));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const site: ClawSite = { app, origin, expected: hash(token) };
  SITES.set(port, site);
  return {
    origin,
    setApp: (next) => {
      site.app = next;
    },
    close: () =>
      new Promise<void>((done) => {
        SITES.delete(port);
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
