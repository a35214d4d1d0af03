// newPageWithin (browser-env/new-page.ts): a page opened while its context is closed under it. Playwright's own
// newPage() never settles then (its call, and all the closed context holds, stays registered in the server
// process: the soak's live-heap growth); Grove's call ends within its bound, and opens pages as before otherwise.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newPageWithin } from '../../browser-env/new-page.ts';
import { ChromiumPool } from '../../browser-env/pool.ts';
import { TimeoutError } from '../../browser-env/util.ts';

let pool: ChromiumPool;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'grove-newpage-'));
  pool = new ChromiumPool({ executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, dataDir: dir, headless: true, extraArgs: [] });
  await pool.start();
});
afterAll(async () => {
  await pool.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

/** How a promise stands after `ms`: 'pending', 'resolved' or the rejection's name. */
async function standing(p: Promise<unknown>, ms: number): Promise<string> {
  const s = p.then(() => 'resolved', (e: unknown) => (e instanceof Error ? e.name : 'rejected'));
  return Promise.race([s, new Promise<string>((r) => setTimeout(() => r('pending'), ms))]);
}

it('opens a page like newPage()', async () => {
  const pooled = await pool.newContext({});
  const page = await newPageWithin(pooled.context, 10_000);
  await page.setContent('<title>t</title><p>ok</p>');
  expect(await page.title()).toBe('t');
  expect(pooled.context.pages()).toContain(page);
  await pooled.release();
});

it('a context closed while its page is being made: Playwright never answers, Grove ends the call in its bound', { timeout: 60_000 }, async () => {
  // Playwright's own call, for the record of why new-page.ts exists.
  const a = await pool.newContext({});
  const plain = a.context.newPage();
  await a.release();
  expect(await standing(plain, 5000)).toBe('pending');

  const b = await pool.newContext({});
  const ours = newPageWithin(b.context, 2000);
  await b.release();
  // A TimeoutError (ours, so callers map it to browser_start_timeout) soon after the 2 s bound: not pending.
  expect(await standing(ours, 15_000)).toBe('TimeoutError');
  await expect(ours).rejects.toBeInstanceOf(TimeoutError);
});
