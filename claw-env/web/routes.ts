// The web UI's routes on the Claw origins' fastify instance (claw-env/http.ts): server-rendered pages read through
// the tools, and POST /ui/call/<tool> for their forms. Which sandbox a request is for comes from `site(request)`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClawApp } from '../app.ts';
import { inputJsonSchema } from '../tool.ts';
import { ALL_TOOLS } from '../tools.ts';
import { calendarEvent, calendarFreeBusy, calendarNew, calendarWeek } from './calendar.ts';
import { html, type Raw } from './html.ts';
import { mailCompose, mailList, mailMessage } from './mail.ts';
import { contactPage, contactsPage, docPage, docsPage, todoPage } from './other.ts';
import { WebError } from './read.ts';
import { sameOriginPath } from './redirect.ts';

export interface Site {
  app: ClawApp;
  origin: string;
}

export interface WebRouteHelpers {
  site(request: FastifyRequest): Site;
  /** A full page (title, nav tab, body, optional error banner) with the page headers. */
  sendPage(reply: FastifyReply, site: Site, status: number, title: string, active: string, body: Raw, error?: string): FastifyReply;
  delay(ms: number | undefined): Promise<void> | undefined;
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
export function formArgs(toolName: string, form: URLSearchParams): Record<string, unknown> {
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

type View = { title: string; body: Raw };
type Page = (app: ClawApp, url: URL, id: string) => View;

/** Page routes: path, the app that must be offered ('' = always), and the view. */
const PAGES: [string, string, Page][] = [
  ['/', '', (app) => ({ title: 'Home', body: html`<ul>${app.apps.map((a) => html`<li><a href="/${a}">${a}</a></li>`)}</ul>` })],
  ['/mail', 'mail', (app, url) => mailList(app, url)],
  ['/mail/compose', 'mail', () => mailCompose()],
  ['/mail/message/:id', 'mail', (app, _url, id) => mailMessage(app, id)],
  ['/calendar', 'calendar', (app, url) => calendarWeek(app, url)],
  ['/calendar/new', 'calendar', (app) => calendarNew(app)],
  ['/calendar/freebusy', 'calendar', (app, url) => calendarFreeBusy(app, url)],
  ['/calendar/event/:id', 'calendar', (app, _url, id) => calendarEvent(app, id)],
  ['/contacts', 'contacts', (app, url) => contactsPage(app, url)],
  ['/contacts/:id', 'contacts', (app, _url, id) => contactPage(app, id)],
  ['/docs', 'docs', (app, url) => docsPage(app, url)],
  ['/docs/:id', 'docs', (app, _url, id) => docPage(app, id)],
  ['/todo', 'todo', (app, url) => todoPage(app, url)],
];

export function webRoutes(f: FastifyInstance, h: WebRouteHelpers): void {
  for (const [path, appName, view] of PAGES) {
    f.get(path, async (request, reply) => {
      const s = h.site(request);
      if (appName && !(s.app.apps as readonly string[]).includes(appName)) throw new WebError(404, `No page ${request.url.split('?')[0]}.`);
      const url = new URL(request.url, 'http://claw.local');
      const v = view(s.app, url, (request.params as { id?: string }).id ?? '');
      return h.sendPage(reply, s, 200, v.title, appName, v.body);
    });
  }

  f.post('/ui/call/:tool', async (request, reply) => {
    const s = h.site(request);
    const tool = (request.params as { tool: string }).tool;
    const form = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
    const back = sameOriginPath(form.get('_back'), s.origin);
    const r = s.app.call(tool, formArgs(tool, form), 'web');
    await h.delay(r.delayMs);
    if (r.status === 200) return reply.code(303).header('location', back).send();
    const e = (r.body as { error: { message: string } }).error;
    if (r.retryAfter) reply.header('retry-after', String(r.retryAfter));
    return h.sendPage(reply, s, r.status, 'Action failed', '', html`<p><a href="${back}">Back</a></p>`, e.message);
  });
}

/** The answer for a path no route serves: 404, or 405 for a method pages do not take. */
export function notFoundPage(request: FastifyRequest): WebError {
  if (request.method !== 'GET' && request.method !== 'HEAD') return new WebError(405, 'Not allowed.');
  return new WebError(404, `No page ${request.url.split('?')[0].slice(0, 300)}.`);
}
