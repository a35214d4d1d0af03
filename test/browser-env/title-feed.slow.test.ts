// The title feed (browser-env/title-script.ts + title-feed.ts) on real Chromium: the page reports every change of
// its title through the binding, without being asked, and a report is only used for the URL it was made for.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TitleFeed } from '../../browser-env/title-feed.ts';
import { TITLE_INIT_SCRIPT } from '../../browser-env/title-script.ts';
import { html, startFixture, type Fixture } from './support.ts';

let fx: Fixture;
let browser: Browser;

beforeAll(async () => {
  fx = await startFixture({
    '/a': html('<button id="b" onclick="document.title = \'clicked\'">b</button>'),
    '/late': html('<p>late</p>', '<script>setTimeout(() => { document.title = "from a timer" }, 150)</script>'),
    '/swap': html(
      '<p>swap</p>',
      '<script>setTimeout(() => { const t = document.createElement("title"); t.textContent = "swapped element"; document.querySelector("title").replaceWith(t) }, 100)</script>',
    ),
    '/untitled': '<!doctype html><html><head></head><body><script>setTimeout(() => { document.title = "set later" }, 100)</script></body></html>',
    '/spa': html('<p>spa</p>'),
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
});

afterAll(async () => {
  await browser?.close();
  await fx?.close();
});

async function open(): Promise<{ ctx: BrowserContext; page: Page; feed: TitleFeed }> {
  const ctx = await browser.newContext();
  const feed = new TitleFeed();
  await feed.install(ctx);
  await ctx.addInitScript(TITLE_INIT_SCRIPT);
  const page = await ctx.newPage();
  return { ctx, page, feed };
}

/** Polls what the feed holds (the page is never asked by the test). */
async function reported(feed: TitleFeed, page: Page, want: string | undefined): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    if (feed.current(page) === want) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return feed.current(page);
}

describe('title feed', () => {
  it('reports the title of each document and every change to it, however it is made', async () => {
    const { ctx, page, feed } = await open();
    try {
      await page.goto(fx.url('/a'));
      expect(await reported(feed, page, 'fixture')).toBe('fixture');
      await page.click('#b');
      expect(await reported(feed, page, 'clicked')).toBe('clicked');
      await page.goto(fx.url('/late'));
      expect(await reported(feed, page, 'from a timer')).toBe('from a timer');
      await page.goto(fx.url('/swap'));
      expect(await reported(feed, page, 'swapped element')).toBe('swapped element');
      // The replaced element is watched in turn.
      await page.evaluate(() => { document.querySelector('title')!.textContent = 'edited text'; });
      expect(await reported(feed, page, 'edited text')).toBe('edited text');
      await page.goto(fx.url('/untitled'));
      expect(await reported(feed, page, 'set later')).toBe('set later');
      // A reload: the same URL, a new document; what the old one reported is not its title.
      await page.reload();
      expect(feed.current(page)).not.toBe('set later');
      expect(await reported(feed, page, 'set later')).toBe('set later');
    } finally {
      await ctx.close();
    }
  });

  it('holds no title for a URL it was not reported for: a same-document navigation, an error page', async () => {
    const { ctx, page, feed } = await open();
    try {
      await page.goto(fx.url('/spa'));
      expect(await reported(feed, page, 'fixture')).toBe('fixture');
      await page.evaluate(() => history.pushState(null, '', '/spa/next'));
      expect(page.url()).toBe(fx.url('/spa/next'));
      expect(feed.current(page)).toBeUndefined();
      // After any navigation the feed takes no report from a document it saw before it (Playwright may deliver
      // the old document's last reports after the navigation): the same document's change waits for a re-read,
      // as the tabs do it (tabs.ts), and later changes are taken again.
      await page.evaluate(() => { document.title = 'next'; });
      expect(await reported(feed, page, 'next')).toBeUndefined();
      const [title, origin] = await page.evaluate(() => [document.title, performance.timeOrigin] as const);
      feed.remember(page, title, origin);
      expect(feed.current(page)).toBe('next');
      await page.evaluate(() => { document.title = 'next again'; });
      expect(await reported(feed, page, 'next again')).toBe('next again');
      // A refused connection: Chromium's error page reports its own title too (its template fills it in at load).
      await page.goto('http://127.0.0.1:9/').catch(() => {});
      for (let i = 0; i < 100 && page.url() === fx.url('/spa/next'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(page.url()).not.toBe(fx.url('/spa/next'));
      const shown = await page.title();
      expect(shown).not.toBe('next');
      expect(await reported(feed, page, shown)).toBe(shown);
    } finally {
      await ctx.close();
    }
  });

  it('a report is cut to 4096 characters and only a top frame reports', async () => {
    const { ctx, page, feed } = await open();
    try {
      await page.goto(fx.url('/a'));
      expect(await reported(feed, page, 'fixture')).toBe('fixture');
      const url = page.url();
      await page.evaluate((u) => (window as unknown as Record<string, (a: string, b: string, c: number) => Promise<void>>).__groveTitleFeed(u, 'x'.repeat(100_000), performance.timeOrigin), url);
      expect((await reported(feed, page, 'x'.repeat(4096)))?.length).toBe(4096);
      // An iframe's title (same origin: the same binding in its window) is not the page's.
      await page.evaluate((u) => {
        const f = document.createElement('iframe');
        f.src = u;
        document.body.append(f);
        return new Promise((r) => f.addEventListener('load', r));
      }, fx.url('/late'));
      await new Promise((r) => setTimeout(r, 400));
      expect(feed.current(page)).toBe('x'.repeat(4096));
    } finally {
      await ctx.close();
    }
  });
});
