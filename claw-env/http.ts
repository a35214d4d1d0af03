// The per-sandbox origin: one HTTP server on 127.0.0.1 (ephemeral port) per Claw sandbox, serving the apps'
// tool API (/api/...) and the web UI, both behind the sandbox's token (Bearer header, X-Claw-Token, or the
// cookie /login?token=... sets). A browser sandbox paired with it is opened to exactly this origin.
// Hostile content (a seeded mail's `<script>`) is escaped in every page and no script runs on this origin (web/html.ts:
// PAGE_CSP); the cookie is HttpOnly and SameSite=Strict, and a request it authenticates must come from this origin
// (127.0.0.1 pages on other ports are same-site, so SameSite alone does not stop them); redirects stay on it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { ClawApp } from './app.ts';
import { inputJsonSchema } from './tool.ts';
import { openAiTool } from './tools.ts';
import { ALL_TOOLS } from './tools.ts';
import { esc, page, PAGE_CSP, SECURITY_HEADERS, type PageCtx, type Raw } from './web/html.ts';
import { sameOriginPath } from './web/redirect.ts';
import { calendarEvent, calendarFreeBusy, calendarNew, calendarWeek } from './web/calendar.ts';
import { mailCompose, mailList, mailMessage } from './web/mail.ts';
import { contactPage, contactsPage, docPage, docsPage, todoPage } from './web/other.ts';
import { WebError } from './web/read.ts';
import { iso } from './time.ts';
import { readLimitedBody } from '../sandbox/http-body.ts';

const MAX_BODY = 1 << 20;
const hash = (s: string) => createHash('sha256').update(s).digest();

export interface ClawServer {
  origin: string;
  close(): Promise<void>;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  // A declared length over the limit is answered before reading (a streamed one is cut: readLimitedBody).
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) throw new WebError(413, 'Request body too large.');
  const body = await readLimitedBody(req, MAX_BODY);
  if (body === null) throw new WebError(413, 'Request body too large.');
  return body.toString('utf8');
}

function cookie(req: http.IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Leaf JSON-schema type of a dotted path in a tool's input schema. */
function leafType(schema: any, path: string[]): string | undefined {
  let s = schema;
  for (const p of path) {
    s = s?.properties?.[p];
    if (s?.anyOf) s = s.anyOf.find((x: any) => x.type !== 'null') ?? s.anyOf[0];
  }
  return s?.type;
}

/** Form fields "a.<path>" → tool arguments, typed by the tool's schema (arrays comma-separated). Empty = absent. */
function formArgs(toolName: string, form: URLSearchParams): Record<string, unknown> {
  const tool = ALL_TOOLS.find((t) => t.name === toolName);
  const schema = tool ? inputJsonSchema(tool) : {};
  const args: Record<string, any> = Object.create(null);
  for (const [k, v] of form) {
    if (!k.startsWith('a.') || v.trim() === '') continue;
    const path = k.slice(2).split('.');
    // Field names are the client's: a `__proto__` segment must not reach Object.prototype.
    if (path.some((p) => p === '__proto__' || p === 'constructor' || p === 'prototype' || p === '')) continue;
    const type = leafType(schema, path);
    const value = type === 'array' ? v.split(',').map((x) => x.trim()).filter(Boolean) : type === 'boolean' ? v === 'true' || v === 'on' : type === 'integer' || type === 'number' ? Number(v) : v;
    let o = args;
    for (const p of path.slice(0, -1)) {
      if (typeof o[p] !== 'object' || o[p] === null) o[p] = Object.create(null);
      o = o[p];
    }
    o[path[path.length - 1]] = value;
  }
  return args;
}

/** Whether a browser request comes from `origin` itself (or from no page: typed, or not a browser). */
function sameOriginRequest(req: http.IncomingMessage, origin: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const from = req.headers.origin;
  return from === undefined || from === origin;
}

export function startClawServer(app: ClawApp, token: string): Promise<ClawServer> {
  const expected = hash(token);
  let origin = '';
  const check = (given: unknown): boolean => typeof given === 'string' && timingSafeEqual(hash(given), expected);
  const authed = (req: http.IncomingMessage): boolean => {
    const auth = req.headers.authorization;
    const header = (auth?.startsWith('Bearer ') ? auth.slice(7) : undefined) ?? req.headers['x-claw-token'];
    if (header !== undefined) return check(header);
    // The cookie is what a browser sends on its own: only for requests this origin's pages (or the user) made.
    return check(cookie(req, 'claw_token')) && sameOriginRequest(req, origin);
  };
  const pageCtx = (): PageCtx => ({ user: app.state.user.email, now: iso(app.clock.now()), apps: app.apps });
  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS, ...headers });
    res.end(JSON.stringify(body));
  };
  const htmlOut = (res: http.ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': PAGE_CSP, ...SECURITY_HEADERS, ...headers });
    res.end(text);
  };
  const delay = (ms: number | undefined) => (ms ? new Promise((ok) => setTimeout(ok, ms)) : undefined);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      // The request target as a path of this origin (`//x` is not a host here).
      url = new URL(`http://claw.local${(req.url ?? '/').startsWith('/') ? req.url : `/${req.url}`}`);
    } catch {
      throw new WebError(400, 'The URL could not be parsed.');
    }
    const p = url.pathname;
    if (p === '/login' && req.method === 'GET') {
      const t = url.searchParams.get('token') ?? '';
      if (!timingSafeEqual(hash(t), expected)) return htmlOut(res, 401, page('Sign in failed', '', pageCtx(), { html: '<p>Wrong or missing token.</p>' } as Raw));
      res.writeHead(303, { location: sameOriginPath(url.searchParams.get('next'), origin), 'set-cookie': `claw_token=${encodeURIComponent(t)}; Path=/; HttpOnly; SameSite=Strict`, ...SECURITY_HEADERS });
      return void res.end();
    }
    if (!authed(req)) {
      if (p.startsWith('/api/')) return json(res, 401, { error: { code: 'unauthenticated', message: 'Send the sandbox token: Authorization: Bearer <token>.' } });
      return htmlOut(res, 401, page('Not signed in', '', pageCtx(), { html: '<p>Open /login?token=… first.</p>' } as Raw));
    }
    // --- tool API
    if (p === '/api/tools' && req.method === 'GET') return json(res, 200, { tools: ALL_TOOLS.filter((t) => app.offers(t)).map(openAiTool) });
    const m = /^\/api\/tools\/([\w.-]+)$/.exec(p);
    if (m && req.method === 'POST') {
      const text = await readBody(req);
      let args: unknown = {};
      try {
        args = text.trim() ? JSON.parse(text) : {};
      } catch {
        return json(res, 400, { error: { code: 'invalid_argument', message: 'The body is not valid JSON.' } });
      }
      const r = app.call(m[1], args, String(req.headers['x-claw-actor'] ?? 'tool').slice(0, 40));
      await delay(r.delayMs);
      return json(res, r.status, r.body, r.retryAfter ? { 'retry-after': String(r.retryAfter) } : {});
    }
    if (p === '/api/state' && req.method === 'GET') return json(res, 200, { state: app.state });
    if (p === '/api/audit' && req.method === 'GET') return json(res, 200, { entries: app.audit });
    if (p === '/api/reset' && req.method === 'POST') {
      app.reset();
      return json(res, 200, { ok: true });
    }
    // --- web UI
    const ui = /^\/ui\/call\/([\w-]+)$/.exec(p);
    if (ui && req.method === 'POST') {
      const form = new URLSearchParams(await readBody(req));
      const back = sameOriginPath(form.get('_back'), origin);
      const r = app.call(ui[1], formArgs(ui[1], form), 'web');
      await delay(r.delayMs);
      if (r.status === 200) {
        res.writeHead(303, { location: back, ...SECURITY_HEADERS });
        return void res.end();
      }
      const e = (r.body as { error: { message: string } }).error;
      return htmlOut(res, r.status, page('Action failed', '', pageCtx(), { html: `<p><a href="${esc(back)}">Back</a></p>` } as Raw, e.message), r.retryAfter ? { 'retry-after': String(r.retryAfter) } : {});
    }
    if (req.method !== 'GET') return htmlOut(res, 405, page('Not allowed', '', pageCtx(), { html: '' } as Raw));
    let view: { title: string; body: Raw } | null = null;
    let active = p.split('/')[1] ?? '';
    let seg: string[];
    try {
      seg = p.split('/').map(decodeURIComponent);
    } catch {
      throw new WebError(400, 'The URL could not be decoded.');
    }
    if (p === '/') {
      active = '';
      view = { title: 'Home', body: { html: `<ul>${app.apps.map((a) => `<li><a href="/${esc(a)}">${esc(a)}</a></li>`).join('')}</ul>` } as Raw };
    } else if (p === '/mail' && app.apps.includes('mail')) view = mailList(app, url);
    else if (p === '/mail/compose' && app.apps.includes('mail')) view = mailCompose();
    else if (seg[1] === 'mail' && seg[2] === 'message' && seg[3] && app.apps.includes('mail')) view = mailMessage(app, seg[3]);
    else if (p === '/calendar' && app.apps.includes('calendar')) view = calendarWeek(app, url);
    else if (p === '/calendar/new' && app.apps.includes('calendar')) view = calendarNew(app);
    else if (p === '/calendar/freebusy' && app.apps.includes('calendar')) view = calendarFreeBusy(app, url);
    else if (seg[1] === 'calendar' && seg[2] === 'event' && seg[3] && app.apps.includes('calendar')) view = calendarEvent(app, seg[3]);
    else if (p === '/contacts' && app.apps.includes('contacts')) view = contactsPage(app, url);
    else if (seg[1] === 'contacts' && seg[2] && app.apps.includes('contacts')) view = contactPage(app, seg[2]);
    else if (p === '/docs' && app.apps.includes('docs')) view = docsPage(app, url);
    else if (seg[1] === 'docs' && seg[2] && app.apps.includes('docs')) view = docPage(app, seg[2]);
    else if (p === '/todo' && app.apps.includes('todo')) view = todoPage(app, url);
    if (!view) return htmlOut(res, 404, page('Not found', '', pageCtx(), { html: `<p>No page ${esc(p)}.</p>` } as Raw));
    return htmlOut(res, 200, page(view.title, active, pageCtx(), view.body));
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof WebError) {
        const headers: Record<string, string> = { ...(err.retryAfter ? { 'retry-after': String(err.retryAfter) } : {}), ...(err.status === 413 ? { connection: 'close' } : {}) };
        if ((req.url ?? '').startsWith('/api/')) return json(res, err.status, { error: { code: 'error', message: err.message } }, headers);
        return htmlOut(res, err.status, page('Error', '', pageCtx(), { html: '<p><a href="/">Home</a></p>' } as Raw, err.message), headers);
      }
      json(res, 500, { error: { code: 'internal', message: 'Internal error.' } });
    });
  });
  server.keepAliveTimeout = 5000;
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      origin = `http://127.0.0.1:${port}`;
      ok({
        origin,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
