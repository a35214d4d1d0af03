// Block 7: RL waves. WAVE episodes starting at once, as 16 concurrent creates with a start URL (each until
// ready) and as 16 concurrent episode resets of live sandboxes, against raw Playwright doing newContext +
// newPage + goto ×16. The server runs with its default configuration (no --warm-pool): one untimed wave first,
// from which the warm pool learns the wave's size (browser-env/warm-demand.ts); between waves the pool refills, as
// it does while episodes run.
import type { Browser } from 'playwright-core';
import type { Fixture } from './fixture.ts';
import { launchRaw } from './raw.ts';
import { api, createBody, createReady, startServer, type Server } from './server.ts';
import { interleave, now, pct, QUICK, quiet, r2, sleep, VIEWPORT, type Report } from './stats.ts';

const WAVE = 16;
// 3 rounds of 3 rotating blocks: each block runs once in each position (4 before: unbalanced).
const WAVE_ROUNDS = QUICK ? 2 : 3;

/** Raw Playwright starting WAVE episodes at once: newContext + newPage + goto each; wall ms. Contexts closed after. */
async function rawWave(browser: Browser, url: string): Promise<number> {
  const t0 = now();
  const ctxs = await Promise.all(Array.from({ length: WAVE }, async () => {
    const c = await browser.newContext({ viewport: VIEWPORT });
    const p = await c.newPage();
    await p.goto(url, { waitUntil: 'domcontentloaded' });
    return c;
  }));
  const ms = now() - t0;
  await Promise.all(ctxs.map((c) => c.close()));
  return ms;
}

/** Waits until the server's warm pool holds `n` contexts (the refill between RL waves). */
async function warmFull(s: Server, n: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await warmStat(s, 'warm_ready')) >= n) return;
    await sleep(100);
  }
}

/** One of the browser environment's stats from /metrics (warm_ready, warm_target), -1 when absent. */
async function warmStat(s: Server, name: string): Promise<number> {
  const m = new RegExp(`stat="[^"]*${name}"\\} (\\d+)`).exec(await s.client.metrics());
  return m ? Number(m[1]) : -1;
}

export async function wavesBlock(fixture: Fixture, { results, say }: Report): Promise<void> {
  const browser = await launchRaw();
  // Default configuration: the warm pool sizes itself (the bench passed only with --warm-pool 16 before).
  const s = await startServer(['--browser-processes', '1']);
  let learned = -1;
  const raw: number[] = [];
  const creates: number[] = [];
  const resets: number[] = [];
  try {
    await rawWave(browser, fixture.url);
    // The untimed wave the pool learns from, as a trainer's first wave.
    let ids: string[] = await Promise.all(Array.from({ length: WAVE }, () => createReady(s, createBody(fixture))));
    learned = await warmStat(s, 'warm_target');
    await interleave(WAVE_ROUNDS, [
      async () => { raw.push(await rawWave(browser, fixture.url)); },
      async () => {
        await Promise.all(ids.map((sid) => api(s, 'DELETE', `/sandboxes/${sid}`)));
        await warmFull(s, WAVE);
        await quiet();
        const t0 = now();
        ids = await Promise.all(Array.from({ length: WAVE }, () => createReady(s, createBody(fixture))));
        creates.push(now() - t0);
      },
      async () => {
        if (!ids.length) ids = await Promise.all(Array.from({ length: WAVE }, () => createReady(s, createBody(fixture))));
        await warmFull(s, WAVE);
        await quiet();
        const t0 = now();
        await Promise.all(ids.map((sid) => api(s, 'POST', `/sandboxes/${sid}/reset`, { start_url: fixture.url })));
        resets.push(now() - t0);
      },
    ]);
    await Promise.all(ids.map((sid) => api(s, 'DELETE', `/sandboxes/${sid}`)));
  } finally {
    await browser.close();
    await s.stop();
  }
  const rawP50 = pct(raw, 50);
  results.wave_create_start_url_ratio = r2(pct(creates, 50) / rawP50);
  results.wave_reset_ratio = r2(pct(resets, 50) / rawP50);
  say(`16 creates with start URL → ready   grove ${pct(creates, 50).toFixed(0)} ms   raw newContext+newPage+goto ×16 ${rawP50.toFixed(0)} ms   ratio ${results.wave_create_start_url_ratio} (target ≤ 1.5; default config, warm pool learned ${learned} from one untimed wave, p50 of ${WAVE_ROUNDS} waves)`);
  say(`16 episode resets (POST /reset)      grove ${pct(resets, 50).toFixed(0)} ms   raw ${rawP50.toFixed(0)} ms   ratio ${results.wave_reset_ratio} (target ≤ 1.5)`);
}
