// Frame cache bench (issue 35, `npm run bench:frame-cache`, `--quick` for a smoke run): on a page at rest, an
// observation and a no-op step (wait 0) of a sandbox with the frame cache, of one without it, and raw CDP
// Page.captureScreenshot (the same parameters as browser-env/observe.ts) on a page of its own Chromium, in one run,
// interleaved blocks, the same think time before each operation (spread over one frame: the capture's latency
// depends on where in the 60 Hz frame its request lands, see bench/core/README.md). Printed as p50 ratios.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBrowserEnvironment } from '../browser-env/index.ts';
import type { ChromiumSandbox } from '../browser-env/sandbox.ts';
import { BrowserCreateOptions } from '../protocol/sandbox.ts';
import { startFixture } from './core/fixture.ts';
import { launchRaw } from './core/raw.ts';
import { interleave, now, pct, QUICK, r2, sleep, VIEWPORT } from './core/stats.ts';

const ROUNDS = QUICK ? 3 : 10;
const PER_BLOCK = QUICK ? 15 : 50;

async function main(): Promise<void> {
  const fixture = await startFixture();
  const dataDir = await mkdtemp(join(tmpdir(), 'grove-fcb-'));
  const env = await createBrowserEnvironment({ executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, warmPool: 0, dataDir, headless: true, extraArgs: [] });
  const raw = await launchRaw();
  try {
    const make = async (id: string, frame_cache: boolean) => {
      const o = BrowserCreateOptions.parse({ type: 'browser', start_url: fixture.url, viewport: VIEWPORT, frame_cache, network: { allow: [fixture.hostPort] } });
      const sb = (await env.create(id, o)) as ChromiumSandbox;
      await sb.ready();
      return sb;
    };
    const cached = await make('fc-on', true);
    const plain = await make('fc-off', false);
    const ctx = await raw.newContext({ viewport: VIEWPORT });
    const page = await ctx.newPage();
    await page.goto(fixture.url);
    const cdp = await ctx.newCDPSession(page);

    const lat: Record<string, number[]> = { raw: [], observe_cached: [], observe_plain: [], noop_cached: [], noop_plain: [] };
    let hits = 0;
    let looks = 0;
    let k = 0;
    const think = () => sleep((k++ * 7) % 17); // 0..16 ms, the same sequence for every side
    const block = (name: string, op: () => Promise<unknown>) => async () => {
      for (let i = 0; i < PER_BLOCK; i++) {
        await think();
        const t = now();
        await op();
        lat[name].push(now() - t);
      }
    };
    const look = async (sb: ChromiumSandbox, step: boolean) => {
      const o = step ? (await sb.step([{ action: 'wait', ms: 0 }])).observation : await sb.observe();
      if (sb === cached) {
        looks++;
        if (o.timings.cached) hits++;
      }
    };
    await interleave(ROUNDS, [
      block('raw', () => cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, captureBeyondViewport: false, optimizeForSpeed: true })),
      block('observe_cached', () => look(cached, false)),
      block('observe_plain', () => look(plain, false)),
      block('noop_cached', () => look(cached, true)),
      block('noop_plain', () => look(plain, true)),
    ]);
    const p50 = (n: string) => pct(lat[n], 50);
    const line = (n: string) => `${n.padEnd(15)} p50 ${p50(n).toFixed(1)} ms  p99 ${pct(lat[n], 99).toFixed(1)} ms  (n ${lat[n].length})`;
    for (const n of Object.keys(lat)) console.log(line(n));
    console.log(`frame cache answered ${hits} of ${looks} looks at the page at rest`);
    console.log(`observe, cached / raw capture p50: ${r2(p50('observe_cached') / p50('raw'))}`);
    console.log(`no-op step, cached / raw capture p50: ${r2(p50('noop_cached') / p50('raw'))}`);
    console.log(`observe, cached / cache off p50: ${r2(p50('observe_cached') / p50('observe_plain'))}; no-op step: ${r2(p50('noop_cached') / p50('noop_plain'))}`);
    await cached.close();
    await plain.close();
  } finally {
    await raw.close();
    await env.shutdown();
    await fixture.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
