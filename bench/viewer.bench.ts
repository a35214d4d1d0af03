// Viewer benchmark (issue: recording & viewer). Writes a run of 1,000 recorded episodes x 30 steps (synthetic
// frames, the real recorder), starts `grove view` in-process, and times in real Chromium:
//   - time to first paint and time until the runs list is rendered (performance marks), median of 5 loads
//   - episode page load and a step change, the list API with a filter and a text search
//
//   npm run bench:viewer                         1,000 x 30
//   npm run bench:viewer -- --episodes 200 --steps 10 --keep --dir /tmp/runs   (reuses --dir when it exists)
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { writeSyntheticRun } from '../recording/synthetic.ts';
import { startViewer } from '../viewer/server.ts';

const { values } = parseArgs({
  options: { episodes: { type: 'string' }, steps: { type: 'string' }, dir: { type: 'string' }, keep: { type: 'boolean' }, loads: { type: 'string' } },
});
const EPISODES = Number(values.episodes ?? 1000);
const STEPS = Number(values.steps ?? 30);
const LOADS = Number(values.loads ?? 5);
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (v: number) => `${v.toFixed(0)} ms`;
const out = (s: string) => process.stdout.write(`${s}\n`);

const root = values.dir ?? (await mkdtemp(join(tmpdir(), 'grove-viewer-bench-')));
const exists = await stat(join(root, 'bench-run')).then(() => true, () => false);
if (!exists) {
  const t0 = performance.now();
  // Durability and diffs off: the bench measures the viewer, not the recorder's fsyncs.
  await writeSyntheticRun(root, { count: EPISODES, steps: STEPS - 1, runId: 'bench-run', durable: false, diff: false, concurrency: 8 });
  out(`generated ${EPISODES} episodes x ${STEPS} steps in ${ms(performance.now() - t0)} → ${root}`);
} else out(`reusing ${root}`);

const t1 = performance.now();
const viewer = await startViewer({ root, port: 0 });
out(`index: ${viewer.app.index.size} episodes read in ${ms(performance.now() - t1)} (server start, cold)`);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
try {
  // Median of 5 calls: the first one also pays for warm-up and a background rescan.
  const api = async (path: string) => {
    const times: number[] = [];
    let total: number | undefined;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const r = await fetch(new URL(path, viewer.url));
      total = ((await r.json()) as { total?: number }).total;
      times.push(performance.now() - t);
    }
    return { ms: median(times), total };
  };
  const list = await api('/api/episodes?limit=50');
  const filtered = await api('/api/episodes?limit=50&success=false&site=shop');
  const search = await api('/api/episodes?limit=50&q=cheapest%20laptop');
  out(`api (median of 5): list ${ms(list.ms)} (${list.total}), filter ${ms(filtered.ms)} (${filtered.total}), search ${ms(search.ms)} (${search.total})`);

  const fcp: number[] = [];
  const rendered: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(viewer.url);
    await page.waitForSelector('table.runs tr.row');
    const m = await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      list: performance.getEntriesByName('grove:list-rendered')[0]?.startTime ?? NaN,
      rows: document.querySelectorAll('table.runs tr.row').length,
    }));
    if (m.rows !== 50) throw new Error(`expected a first page of 50 rows, got ${m.rows}`);
    fcp.push(m.fcp);
    rendered.push(m.list);
    await page.close();
  }
  out(`runs list (${EPISODES} episodes): first paint ${ms(median(fcp))}, list rendered ${ms(median(rendered))} (median of ${LOADS} loads)`);

  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const id = `bench-run/ep-${String(Math.floor(EPISODES / 2)).padStart(5, '0')}`;
  await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id, step: '1' })}`);
  await page.waitForSelector('.shot[data-ready]');
  const ep = await page.evaluate(() => performance.getEntriesByName('grove:episode-rendered')[0]?.startTime ?? NaN);
  const t2 = performance.now();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('.stage-bar .desc')?.textContent?.startsWith('2.') && document.querySelector('.shot[data-ready]'));
  const stepMs = performance.now() - t2;
  const frames = await page.evaluate(() => performance.getEntriesByType('resource').filter((r) => r.name.includes('/api/file')).length);
  out(`episode page (${STEPS} steps): rendered ${ms(ep)} after navigation start, next step ${ms(stepMs)}, frames fetched so far: ${frames} (lazy)`);
  await page.close();
} finally {
  await browser.close();
  await viewer.close();
  if (!values.keep && !values.dir) await rm(root, { recursive: true, force: true });
}
