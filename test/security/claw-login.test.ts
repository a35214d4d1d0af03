// Attacker's test (issue 30, item 11 and the cookie's reach): a real Claw app origin over HTTP. `/login?next=` and a
// form's `_back` redirect only to a path of this origin, whatever the spelling; the token cookie authenticates only
// requests this origin's own pages (or the user) make, so a page on another 127.0.0.1 port (same site!) cannot post.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseWorld } from '../../claw-env/fixtures/world.ts';
import { ClawSandbox } from '../../claw-env/sandbox.ts';
import { sameOriginPath } from '../../claw-env/web/redirect.ts';

let sb: ClawSandbox;
let origin = '';
let token = '';

beforeAll(async () => {
  sb = new ClawSandbox('sb_login', { seed: baseWorld(3).state, apps: ['mail', 'todo'], task: null });
  await sb.ready();
  ({ origin, token } = sb.details().claw!);
});
afterAll(async () => {
  await sb?.close();
});

const HOSTILE = [
  '//evil.example/steal',
  '///evil.example',
  '/\\evil.example',
  '\\/evil.example',
  '/\\/evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  ' //evil.example',
  'https://evil.example/x',
  'http:evil.example',
  '//127.0.0.1:1/other-port',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '%2F%2Fevil.example',
  '%2f%2fevil.example',
  '/%2F/evil.example',
  '/%5Cevil.example',
  '%252F%252Fevil.example',
  '/%09/evil.example',
  '/%0d%0aSet-Cookie:%20claw_token=attacker',
  '/\u2028/evil.example',
  'evil.example',
  '',
];

async function login(next: string): Promise<Response> {
  return fetch(`${origin}/login?token=${encodeURIComponent(token)}&next=${encodeURIComponent(next)}`, { redirect: 'manual' });
}

describe('Claw redirects', () => {
  it('/login?next= sends every foreign spelling home, and keeps same-origin paths', async () => {
    for (const next of HOSTILE) {
      const r = await login(next);
      expect(r.status, JSON.stringify(next)).toBe(303);
      const to = new URL(r.headers.get('location')!, origin);
      expect(to.origin, JSON.stringify(next)).toBe(origin);
      expect(r.headers.get('location'), JSON.stringify(next)).toBe('/');
      expect(r.headers.getSetCookie().join('\n')).not.toContain('attacker');
    }
    for (const [next, want] of [['/mail', '/mail'], ['/mail?folder=sent&q=from%3Amaya#top', '/mail?folder=sent&q=from%3Amaya#top'], ['/todo/../mail', '/mail']]) {
      expect((await login(next)).headers.get('location')).toBe(want);
    }
    // The same rule as a function, against the origin's own parse.
    for (const next of HOSTILE) expect(new URL(sameOriginPath(next, origin), origin).origin).toBe(origin);
  });

  it("a form's _back is held to the same rule", async () => {
    for (const back of HOSTILE) {
      const r = await fetch(`${origin}/ui/call/todo_create`, {
        method: 'POST',
        redirect: 'manual',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _back: back, 'a.title': 'back test' }),
      });
      expect(r.status, JSON.stringify(back)).toBe(303);
      expect(r.headers.get('location'), JSON.stringify(back)).toBe('/');
    }
  });
});

describe('the token cookie', () => {
  const post = (headers: Record<string, string>) =>
    fetch(`${origin}/ui/call/todo_create`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `claw_token=${token}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ _back: '/todo', 'a.title': 'planted by another page' }),
    });

  it('authenticates only requests from this origin', async () => {
    const other = origin.replace(/:\d+$/, ':1');
    for (const headers of <Record<string, string>[]>[{ origin: other }, { origin: 'http://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site', origin }]) {
      const r = await post(headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      const api = await fetch(`${origin}/api/state`, { headers: { cookie: `claw_token=${token}`, ...headers } });
      expect(api.status, JSON.stringify(headers)).toBe(401);
    }
    expect(sb.app.state.todos.some((t) => t.title === 'planted by another page')).toBe(false);
    // This origin's own pages, a typed URL, and a non-browser client with the cookie are served.
    for (const headers of <Record<string, string>[]>[{ origin, 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }, {}]) {
      expect((await post(headers)).status, JSON.stringify(headers)).toBe(303);
    }
    // A bearer token is not a browser credential: no Origin rule for it.
    const bearer = await fetch(`${origin}/api/state`, { headers: { authorization: `Bearer ${token}`, origin: 'http://evil.example' } });
    expect(bearer.status).toBe(200);
  });

  it('is set HttpOnly and SameSite=Strict, and a malformed cookie is a 401, not a crash', async () => {
    const set = (await login('/')).headers.getSetCookie()[0];
    expect(set).toMatch(/^claw_token=[^;]+; Path=\/; HttpOnly; SameSite=Strict$/);
    for (const cookie of ['claw_token=%ZZ', 'claw_token=', 'claw_token', '=;;==', `claw_token=${'a'.repeat(5000)}`]) {
      const r = await fetch(`${origin}/mail`, { headers: { cookie } });
      expect(r.status, cookie).toBe(401);
    }
  });
});
