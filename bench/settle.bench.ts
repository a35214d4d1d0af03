// Settle benchmark (issue 11). One click per trial on local pages, each built so that the click's effect
// (document.title = 'final') appears after a known delay. For every scenario: the fraction of trials whose
// observation shows the final state, and the p50 step latency as a ratio to the ideal = the change's own
// delay + a bare step measured in the same run (raw Playwright: mouse click + the same CDP capture Grove
// uses, no settle). Raw and Grove blocks alternate per scenario so machine drift moves both alike.
//
//   npm run bench:settle                 full run (20 trials per scenario)
//   GROVE_BENCH_QUICK=1 ...              5 trials, for a smoke run
//   npm run bench:settle -- --label before   stores the table under "before" in bench/results/settle.json
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createBrowserEnvironment } from '../browser-env/index.ts';
import { BrowserCreateOptions } from '../protocol/sandbox.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const QUICK = process.argv.includes('--quick') || process.env.GROVE_BENCH_QUICK === '1';
const TRIALS = QUICK ? 5 : 20;
const labelArg = process.argv.indexOf('--label');
const LABEL = labelArg > 0 ? process.argv[labelArg + 1] : 'after';
const VIEWPORT = { width: 1280, height: 1000 };
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic',
];

// ---------- pages ----------
const BTN = '<button id="go" style="position:absolute;left:20px;top:20px;width:240px;height:60px" onclick="go()">go</button>';
const page = (script: string, extraBody = '', head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>start</title>${head}</head><body>${BTN}${extraBody}
<p style="margin-top:120px">${'Lorem ipsum dolor sit amet. '.repeat(60)}</p><script>${script}</script></body></html>`;

/** A page that is never quiet: a CSS animation, a DOM ticker every 50 ms and a poll every 400 ms. */
const BUSY_HEAD = `<style>@keyframes spin{to{transform:rotate(360deg)}} #spin{width:40px;height:40px;background:#c33;
position:absolute;left:300px;top:30px;animation:spin 1s linear infinite}</style>`;
const BUSY_BODY = '<div id="spin"></div><div id="tick" style="position:absolute;left:400px;top:30px">0</div><div id="poll" style="position:absolute;left:500px;top:30px"></div>';
const BUSY_SCRIPT = `let n = 0; setInterval(() => { document.getElementById('tick').textContent = String(++n); }, 50);
setInterval(() => { fetch('/poll').then((r) => r.text()).then((t) => { document.getElementById('poll').textContent = t + n; }); }, 400);`;

interface Scenario {
  name: string;
  /** The change's own delay (ms): the part of the step no environment can avoid. */
  delay: number;
  path: string;
  /** The title the observation must show. */
  final: string;
}

const SCENARIOS: Scenario[] = [
  { name: 'click that changes nothing', delay: 0, path: '/nothing', final: 'start' },
  { name: 'synchronous change', delay: 0, path: '/sync', final: 'final' },
  { name: 'change after a 300 ms timer', delay: 300, path: '/timer300', final: 'final' },
  { name: 'change after a 1,000 ms timer', delay: 1000, path: '/timer1000', final: 'final' },
  { name: '500 ms fetch, then change', delay: 500, path: '/fetch', final: 'final' },
  { name: 'navigation to a page served 300 ms late', delay: 300, path: '/nav', final: 'final' },
  { name: 'chain: 100 ms timer → 200 ms fetch → 100 ms timer', delay: 400, path: '/chain', final: 'final' },
  { name: 'synchronous change on a busy page', delay: 0, path: '/busy', final: 'final' },
  { name: 'effect applied by a running rAF loop', delay: 0, path: '/raf', final: 'final' },
];

const later = (ms: number, body: string, type = 'text/plain'): http.RequestListener => (_req, res) => {
  setTimeout(() => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  }, ms);
};

const ROUTES: Record<string, string | http.RequestListener> = {
  '/nothing': page('function go() {}'),
  '/sync': page(`function go() { document.title = 'final'; }`),
  '/timer300': page(`function go() { setTimeout(() => { document.title = 'final'; }, 300); }`),
  '/timer1000': page(`function go() { setTimeout(() => { document.title = 'final'; }, 1000); }`),
  '/fetch': page(`function go() { fetch('/slow500').then((r) => r.text()).then((t) => { document.title = t; }); }`),
  '/slow500': later(500, 'final'),
  '/nav': page(`function go() { location.href = '/late'; }`),
  '/late': later(300, '<!doctype html><html><head><title>final</title></head><body><h1>arrived</h1></body></html>', 'text/html'),
  '/chain': page(`function go() { setTimeout(async () => { const t = await (await fetch('/slow200')).text();
    setTimeout(() => { document.title = t; }, 100); }, 100); }`),
  '/slow200': later(200, 'final'),
  '/busy': page(`${BUSY_SCRIPT} function go() { document.title = 'final'; }`, BUSY_BODY, BUSY_HEAD),
  '/poll': later(20, 'p'),
  '/raf': page(`let want = false; const box = document.createElement('div'); document.body.appendChild(box);
    (function loop() { if (want) { document.title = 'final'; want = false; } box.textContent = String(performance.now() | 0); requestAnimationFrame(loop); })();
    function go() { want = true; }`),
};

async function startFixture(): Promise<{ origin: string; hostPort: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const route = ROUTES[(req.url ?? '/').split('?')[0]];
    if (route === undefined) {
      res.writeHead(404);
      res.end();
    } else if (typeof route === 'string') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(route);
    } else route(req, res);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}

// ---------- helpers ----------
function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(s.length / 2) - 1)];
}
const r2 = (x: number) => Math.round(x * 100) / 100;
const now = () => performance.now();
const CLICK = { x: 140, y: 50 };

interface Row {
  scenario: string;
  observed: number;
  trials: number;
  grove_p50_ms: number;
  ideal_ms: number;
  ratio: number;
  stopped?: Record<string, number>;
  p50_parts_ms?: { action: number; settle: number; capture: number };
}

async function main(): Promise<void> {
  const fx = await startFixture();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-settle-bench-'));
  const env = await createBrowserEnvironment({
    executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, warmPool: 0, dataDir, headless: true, extraArgs: [],
  });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const rows: Row[] = [];
  let bareAll: number[] = [];
  try {
    const sb = await env.create('settle-bench', BrowserCreateOptions.parse({
      type: 'browser', viewport: VIEWPORT, screenshot_format: 'jpeg', screenshot_quality: 80,
      network: { allow: [fx.hostPort] },
    }));
    await sb.ready();
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const raw = await ctx.newPage();
    const cdp = await ctx.newCDPSession(raw);
    await raw.goto(fx.origin + '/nothing');

    /** The bare step on the scenario's page: a click and the same CDP capture Grove's observation makes, nothing else. */
    const bare = async (n: number, pagePath = '/nothing'): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        await raw.goto(fx.origin + pagePath);
        await new Promise((ok) => setTimeout(ok, 150));
        const t = now();
        await raw.mouse.click(CLICK.x, CLICK.y);
        await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, captureBeyondViewport: false, optimizeForSpeed: true });
        out.push(now() - t);
      }
      return out;
    };
    await bare(5); // warm-up

    for (const sc of SCENARIOS) {
      const lat: number[] = [];
      const bareLat: number[] = [];
      const stopped: Record<string, number> = {};
      const parts = { action: [] as number[], settle: [] as number[], capture: [] as number[] };
      let observed = 0;
      for (let t = 0; t < TRIALS; t++) {
        bareLat.push(...(await bare(1, sc.path)));
        await sb.step([{ action: 'goto', url: fx.origin + sc.path }], { screenshot: 'none' });
        // Let the page's load-time work finish so only the click is measured.
        await new Promise((ok) => setTimeout(ok, 150));
        const t0 = now();
        const r = await sb.step([{ action: 'click', x: CLICK.x, y: CLICK.y, space: 'css_px' }]);
        lat.push(now() - t0);
        parts.action.push(r.observation.timings.action);
        parts.settle.push(r.observation.timings.settle);
        parts.capture.push(r.observation.timings.capture);
        if (r.observation.title === sc.final && !r.observation.last_action_error) observed++;
        const st = (r.observation as { settle?: { stopped?: string } }).settle?.stopped;
        if (st) stopped[st] = (stopped[st] ?? 0) + 1;
      }
      bareAll = bareAll.concat(bareLat);
      const ideal = sc.delay + p50(bareLat);
      const row: Row = {
        scenario: sc.name, observed: observed / TRIALS, trials: TRIALS, grove_p50_ms: r2(p50(lat)), ideal_ms: r2(ideal), ratio: r2(p50(lat) / ideal),
      };
      if (Object.keys(stopped).length) row.stopped = stopped;
      row.p50_parts_ms = { action: p50(parts.action), settle: p50(parts.settle), capture: p50(parts.capture) };
      rows.push(row);
      process.stdout.write(`${sc.name.padEnd(52)} observed ${(row.observed * 100).toFixed(0).padStart(3)} %   p50 ${String(row.grove_p50_ms).padStart(8)} ms   ideal ${String(row.ideal_ms).padStart(8)} ms   ratio ${row.ratio}   ${JSON.stringify(row.p50_parts_ms)}${row.stopped ? '   ' + JSON.stringify(row.stopped) : ''}\n`);
    }
    await sb.close();
  } finally {
    await browser.close();
    await env.shutdown();
    await fx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const bareP50 = r2(p50(bareAll));
  const nothing = rows[0];
  const summary = {
    bare_step_p50_ms: bareP50,
    nothing_vs_bare: r2(nothing.grove_p50_ms / bareP50),
    all_observed: rows.every((r) => r.observed === 1),
    max_ratio: Math.max(...rows.map((r) => r.ratio)),
    load1: r2(os.loadavg()[0]),
    quick: QUICK,
    measured_at: new Date().toISOString(),
  };
  process.stdout.write(`bare step (raw click + capture) p50 ${bareP50} ms; all observed: ${summary.all_observed}; max ratio ${summary.max_ratio}; load ${summary.load1}\n`);
  const file = path.join(ROOT, 'bench/results/settle.json');
  mkdirSync(path.dirname(file), { recursive: true });
  let prev: Record<string, unknown> = {};
  try { prev = JSON.parse(readFileSync(file, 'utf8')); } catch { /* first run */ }
  writeFileSync(file, JSON.stringify({ ...prev, [LABEL]: { rows, ...summary } }, null, 2) + '\n');
}

await main();
