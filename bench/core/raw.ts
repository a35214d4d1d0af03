// The raw baseline: in-process Playwright and CDP doing the same click + capture as a Grove step, on the same
// fixture page with the same Chromium flags. Kept open for a whole comparison, so that its blocks can be
// interleaved with Grove's: a machine that drifts (thermal, page cache, another tenant) then moves both alike.
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, now, VIEWPORT } from './stats.ts';

export const N_CONC = 16;

async function rawClickCapture(page: Page, cdp: CDPSession, i: number): Promise<void> {
  const col = i % 8;
  const x = 8 + (col + 0.5) * ((VIEWPORT.width - 16) / 8);
  await page.mouse.click(x, 40);
  // The same CDP parameters Grove's observation uses (browser-env/observe.ts), so the ratio compares like with like.
  await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, captureBeyondViewport: false, optimizeForSpeed: true });
}

export function launchRaw(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

export type Raw = Awaited<ReturnType<typeof startRaw>>;

export async function startRaw(fixtureUrl: string) {
  const browser = await launchRaw();
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  const page = await ctx.newPage();
  await page.goto(fixtureUrl);
  const cdp = await ctx.newCDPSession(page);
  let i = 0;
  let conc: { c: BrowserContext; p: Page; cdp: CDPSession }[] = [];
  return {
    browser,
    /** n sequential click+capture steps, each timed. */
    async steps(n: number): Promise<number[]> {
      const lat: number[] = [];
      for (let k = 0; k < n; k++) {
        const t = now();
        await rawClickCapture(page, cdp, i++);
        lat.push(now() - t);
      }
      return lat;
    },
    async openConcurrent(): Promise<void> {
      conc = await Promise.all(Array.from({ length: N_CONC }, async () => {
        const c = await browser.newContext({ viewport: VIEWPORT });
        const p = await c.newPage();
        await p.goto(fixtureUrl);
        return { c, p, cdp: await c.newCDPSession(p) };
      }));
    },
    /** n steps in each of the N_CONC contexts at once; returns the wall time in ms. */
    async concurrent(n: number): Promise<number> {
      const t0 = now();
      await Promise.all(conc.map(async ({ p, cdp: s }) => { for (let k = 0; k < n; k++) await rawClickCapture(p, s, k); }));
      return now() - t0;
    },
    async close(): Promise<void> {
      if (browser.isConnected()) await browser.close();
    },
  };
}
