// Tab titles from the browser process (browser-env/tab-title.ts): the observation shows the
// title the action left, a page without a title shows '' (not the URL Chromium shows in its place), and a step with
// a capture does not ask the page for its title at all when the browser holds it.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayBeUrlTitle } from '../../browser-env/tab-title.ts';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

const BTN = 'position:absolute;left:10px;top:10px;width:200px;height:40px';
// document.title read through the DOM is counted: a read by the observation shows in the count.
const COUNTED = `<script>
  let reads = 0;
  const d = Object.getOwnPropertyDescriptor(Document.prototype, 'title');
  Object.defineProperty(document, 'title', { get() { reads++; return d.get.call(this); }, set(v) { d.set.call(this, v); } });
  window.titleReads = () => reads;
</script>`;

let fx: Fixture;
let te: TestEnv;
const net = () => ({ allow: [`127.0.0.1:${fx.port}`] });

beforeAll(async () => {
  fx = await startFixture({
    '/counted': html(`<button style="${BTN}" onclick="document.title = 'clicked ' + Date.now()">go</button>`, COUNTED),
    '/untitled': `<!doctype html><html><body><button style="${BTN}" onclick="document.body.dataset.x = 1">go</button></body></html>`,
    '/long': html(`<button style="${BTN}" onclick="document.title = 'x'.repeat(5000)">go</button>`),
    '/later': html(`<button style="${BTN}" onclick="setTimeout(() => { document.title = 'later' }, 300)">go</button>`),
    // A single-page app: the title element's text is replaced, the title removed, the URL changed without a new document.
    '/spa': `<!doctype html><html><head><title>spa start</title></head><body>
      <button style="${BTN}" onclick="document.querySelector('title').textContent = 'spa ' + (++window.k)">text</button>
      <button style="position:absolute;left:10px;top:60px;width:200px;height:40px" onclick="history.pushState({}, '', '/spa/next')">push</button>
      <button style="position:absolute;left:10px;top:110px;width:200px;height:40px" onclick="document.querySelector('title')?.remove()">drop</button>
      <a style="position:absolute;left:10px;top:160px" href="/untitled">away</a>
      <script>window.k = 0</script></body></html>`,
  });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

describe('tab titles', () => {
  for (const settle of [false, true]) {
    it(`the title a click set is in that step's observation, read without asking the page (settle ${settle})`, async () => {
      const sb = await te.create({ start_url: fx.url('/counted'), network: net(), settle });
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
        expect(r.observation.last_action_error).toBeNull();
        expect(r.observation.title).toMatch(/^clicked \d+$/);
        expect(r.observation.tabs[0].title).toBe(r.observation.title);
        seen.add(r.observation.title);
      }
      // Every step saw its own click's title, not the one before.
      expect(seen.size).toBe(5);
      if (!settle) {
        // No capture step read document.title in the page; the screenshot-less step asks it once (no capture to
        // order the browser's title after). (With settle, the settle script reads it in every step.)
        const r = await sb.step([{ action: 'scroll', x: 100, y: 100, dy: 1 }], { screenshot: 'none' });
        expect(r.observation.last_action_error).toBeNull();
        const page = (sb as unknown as { s: { page: Page } }).s.page;
        expect(await page.evaluate(() => (window as unknown as { titleReads(): number }).titleReads())).toBe(1);
      }
      await sb.close();
    });
  }

  it("a page without a title shows '', not the URL the browser shows for it", async () => {
    const sb = await te.create({ start_url: fx.url('/untitled'), network: net() });
    const r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    expect(r.observation.url).toBe(fx.url('/untitled'));
    expect(r.observation.title).toBe('');
    const blank = await te.create({ network: net() });
    expect((await blank.observe({})).title).toBe('');
    await sb.close();
    await blank.close();
  });

  it('a title longer than the browser keeps is read whole from the page', async () => {
    const sb = await te.create({ start_url: fx.url('/long'), network: net(), settle: false });
    const r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    expect(r.observation.title.length).toBe(5000);
    expect(r.observation.title).toBe('x'.repeat(5000));
    await sb.close();
  });

  it('a title set by a timer during a wait is in the observation after it', async () => {
    const sb = await te.create({ start_url: fx.url('/later'), network: net(), settle: false });
    const r = await sb.step([{ action: 'click', x: 100, y: 30 }, { action: 'wait', ms: 800 }]);
    expect(r.observation.title).toBe('later');
    await sb.close();
  });
});

describe('titles the page tells (title-watch.ts)', () => {
  /** The sandbox's page and what it told, next to what the page itself says. */
  const told = (sb: unknown) => {
    const s = (sb as { s: { page: Page; titles: { get(p: Page): string | undefined } } }).s;
    return { told: s.titles.get(s.page), page: s.page };
  };

  it('follow every change of the title without a question to the browser, and are void after the document is replaced', async () => {
    const sb = await te.create({ start_url: fx.url('/spa'), network: net(), settle: false });
    const steps: [number, string][] = [[30, 'spa 1'], [30, 'spa 2'], [80, 'spa 2'], [30, 'spa 3'], [130, '']];
    for (const [y, title] of steps) {
      const r = await sb.step([{ action: 'click', x: 100, y }]);
      expect(r.observation.last_action_error).toBeNull();
      expect(r.observation.title).toBe(title);
      const t = told(sb);
      // The observation's title is the one the page told: no round trip was needed for it.
      expect(t.told).toBe(title);
      expect(await t.page.evaluate(() => document.title)).toBe(title);
    }
    expect(told(sb).page.url()).toBe(fx.url('/spa/next'));
    // The binding the page calls is not left on window for page scripts.
    expect(await told(sb).page.evaluate(() => typeof (window as unknown as Record<string, unknown>).__groveTitle)).toBe('undefined');
    // A new document: its own (empty) title, not the old one.
    const r = await sb.step([{ action: 'click', x: 20, y: 165 }], { screenshot: 'none' });
    expect(r.observation.url).toBe(fx.url('/untitled'));
    const next = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    expect(next.observation.title).toBe('');
    expect(told(sb).told).toBe('');
    await sb.close();
  });

  it('an error page shows the title the page has', async () => {
    const sb = await te.create({ start_url: fx.url('/spa'), network: { allow: [`127.0.0.1:${fx.port}`, '127.0.0.1:1'] }, settle: false });
    const r = await sb.step([{ action: 'goto', url: 'http://127.0.0.1:1/' }]);
    expect(r.observation.url.startsWith('chrome-error:') || r.observation.url === 'http://127.0.0.1:1/').toBe(true);
    expect(r.observation.title).toBe(await told(sb).page.evaluate(() => document.title));
    expect(r.observation.title).not.toBe('spa start');
    await sb.close();
  });
});

describe('mayBeUrlTitle', () => {
  it("tells Chromium's stand-in for a missing title from a real one", () => {
    expect(mayBeUrlTitle('', 'http://a.test/')).toBe(true);
    expect(mayBeUrlTitle('127.0.0.1:8123/untitled', 'http://127.0.0.1:8123/untitled')).toBe(true);
    expect(mayBeUrlTitle('https://example.com/x', 'https://example.com/x')).toBe(true);
    expect(mayBeUrlTitle('about:blank', 'about:blank')).toBe(true);
    expect(mayBeUrlTitle('data:text/html,<p>hi', 'data:text/html,<p>hi')).toBe(true);
    expect(mayBeUrlTitle('bücher.example/', 'http://xn--bcher-kva.example/')).toBe(true);
    expect(mayBeUrlTitle('example.com/a', 'http://www.example.com/a')).toBe(true);
    expect(mayBeUrlTitle('REG-3001 | Harbor Hub', 'http://127.0.0.1:8123/forms/done/REG-3001')).toBe(false);
    expect(mayBeUrlTitle('Note: a title', 'http://a.test/')).toBe(false);
  });
});
