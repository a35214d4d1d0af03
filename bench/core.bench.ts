// Core benchmark (issue: foundation). Everything is measured in one run on the same fixture page and
// printed as ratios against raw in-process Playwright/CDP doing the same work.
//
//   npm run bench            full run (1,000 churn cycles)
//   GROVE_BENCH_QUICK=1 ...  smaller counts, for a smoke run
//   GROVE_BENCH_ONLY=waves   only the RL waves (16 creates with a start URL / 16 resets vs raw), nothing saved
//
// The Grove server runs as a child process (`grove serve`), so its RSS is measured on its own; the raw
// baseline runs Chromium from this process with the same flags. Latency and throughput are measured in
// alternating raw/Grove blocks in a rotating order, so that drift on the machine moves both sides alike.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, mkdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page, type CDPSession } from 'playwright-core';
import { GroveClient } from '../client/index.ts';
import type { Action } from '../protocol/action.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const QUICK = process.argv.includes('--quick') || process.env.GROVE_BENCH_QUICK === '1';
const N_STEPS = QUICK ? 60 : 300;
const N_CREATE = QUICK ? 10 : 30;
const N_CONC = 16;
const CONC_STEPS = QUICK ? 12 : 48;
const N_CHURN = QUICK ? 100 : 1000;
/** Interleaved raw/Grove blocks for the latency and throughput comparisons. */
const ROUNDS = 10;
const CONC_ROUNDS = 6;
const CHURN_PAR = 4;
// The default viewport (Orchard-GUI setting), so warm-pool hits are measured as a default create sees them.
const VIEWPORT = { width: 1280, height: 1000 };
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic',
];

// ---------- fixture ----------
const FIXTURE = `<!doctype html><html><head><title>bench</title><style>
body{margin:0;font:16px sans-serif} .grid{display:grid;grid-template-columns:repeat(8,1fr);gap:4px;padding:8px}
button{height:60px} #log{padding:8px}</style></head><body>
<div class="grid">${Array.from({ length: 48 }, (_, i) => `<button id="b${i}" onclick="document.getElementById('log').textContent='clicked ${i} '+(++window.n)">Button ${i}</button>`).join('')}</div>
<div id="log">none</div><script>window.n=0</script>
<p>${'Lorem ipsum dolor sit amet. '.repeat(80)}</p></body></html>`;

async function startFixture(): Promise<{ url: string; hostPort: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(FIXTURE);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    hostPort: `127.0.0.1:${port}`,
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}

// ---------- stats helpers ----------
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const now = () => performance.now();
/**
 * A pause before every measured block: work a block leaves behind (GC in the server or the client, renderers
 * finishing a frame) must not land in the next block's time, whichever side that is.
 */
const quiet = () => new Promise((ok) => setTimeout(ok, 500));
const r2 = (x: number) => Math.round(x * 100) / 100;

// ---------- process accounting (Linux /proc) ----------
function children(): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = m.get(ppid) ?? [];
      list.push(Number(d));
      m.set(ppid, list);
    } catch { /* process gone */ }
  }
  return m;
}
function tree(root: number): number[] {
  const kids = children();
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(kids.get(p) ?? []));
  }
  return out;
}
function pssKb(pid: number): number {
  try {
    const m = /Pss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}
function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}
function chromiumPidsUnder(root: number): number[] {
  return tree(root).filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('chromium'); } catch { return false; }
  });
}
function allChromiumPids(): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('/usr/lib/chromium/chromium'); } catch { return false; }
  });
}

// ---------- raw Playwright baseline ----------
async function rawClickCapture(page: Page, cdp: CDPSession, i: number): Promise<void> {
  const col = i % 8;
  const x = 8 + (col + 0.5) * ((VIEWPORT.width - 16) / 8);
  await page.mouse.click(x, 40);
  // The same CDP parameters Grove's observation uses (browser-env/observe.ts), so the ratio compares like with like.
  await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, captureBeyondViewport: false, optimizeForSpeed: true });
}

/**
 * The raw baseline, kept open for the whole comparison so that its blocks can be interleaved with Grove's:
 * a machine that drifts (thermal, page cache, another tenant) then moves both sides alike.
 */
async function startRaw(fixtureUrl: string) {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  const page = await ctx.newPage();
  await page.goto(fixtureUrl);
  const cdp = await ctx.newCDPSession(page);
  let i = 0;
  let conc: { c: import('playwright-core').BrowserContext; p: Page; cdp: CDPSession }[] = [];
  return {
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

// ---------- Grove server (child process) ----------
interface Server { url: string; key: string; proc: ChildProcess; client: GroveClient; stop(): Promise<void> }

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

async function startServer(extra: string[]): Promise<Server> {
  const port = await freePort();
  const key = 'bench-' + Math.random().toString(36).slice(2);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-'));
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/grove.mjs'), 'serve', '--port', String(port),
    '--api-key', key, '--max-sandboxes', '64', '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GROVE_LOG_LEVEL: 'warn' },
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => { stderr += d; });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${url}/health`)).ok) break; } catch { /* not up yet */ }
    if (i > 200 || proc.exitCode !== null) throw new Error(`grove serve did not start: ${stderr.slice(-2000)}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return {
    url, key, proc, client: new GroveClient({ baseUrl: url, apiKey: key }),
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((ok) => proc.once('exit', ok));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((ok) => setTimeout(ok, 15_000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    },
  };
}

async function api(s: Server, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(s.url + p, {
    method,
    headers: { 'x-api-key': s.key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

function createBody(fixture: { url: string; hostPort: string }, withStart = true) {
  return {
    type: 'browser', viewport: VIEWPORT, settle: false, screenshot_format: 'jpeg', screenshot_quality: 80,
    ...(withStart ? { start_url: fixture.url } : {}),
    network: { allow: [fixture.hostPort] },
  };
}

async function createReady(s: Server, body: unknown): Promise<string> {
  const c = await api(s, 'POST', '/sandboxes', body);
  if (c.status !== 'ready') await api(s, 'GET', `/sandboxes/${c.sandbox_id}/wait?timeout=30`);
  return c.sandbox_id;
}

const clickAction = (i: number) => ({
  action: 'click', space: 'css_px', x: 8 + ((i % 8) + 0.5) * ((VIEWPORT.width - 16) / 8), y: 40,
});

/** n steps; `binary` asks for the multipart answer (JSON + raw image bytes) instead of base64 in JSON. */
async function groveSteps(s: Server, id: string, n: number, binary = false): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    let r;
    if (binary) {
      const { result, image } = await s.client.stepBinary(id, { action: clickAction(i) as Action });
      if (!image || image.bytes.length < 1000) throw new Error('no image part');
      r = result;
    } else {
      r = await s.client.step(id, { action: clickAction(i) as Action });
    }
    if (r.observation.last_action_error) throw new Error(JSON.stringify(r.observation.last_action_error));
    lat.push(now() - t);
  }
  return lat;
}

/** N_CREATE create→ready times (each sandbox deleted after), `pauseMs` before each create. */
async function timeCreates(s: Server, fixture: { url: string; hostPort: string }, pauseMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < N_CREATE; i++) {
    if (pauseMs) await new Promise((ok) => setTimeout(ok, pauseMs));
    const t = now();
    const sid = await createReady(s, createBody(fixture, false));
    out.push(now() - t);
    await api(s, 'DELETE', `/sandboxes/${sid}`);
  }
  return out;
}

const WAVE = 16;
const WAVE_ROUNDS = QUICK ? 2 : 4;

/** Raw Playwright starting WAVE episodes at once: newContext + newPage + goto each; wall ms. Contexts closed after. */
async function rawWave(browser: import('playwright-core').Browser, url: string): Promise<number> {
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
    const m = /stat="[^"]*warm_ready"\} (\d+)/.exec(await s.client.metrics());
    if (m && Number(m[1]) >= n) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

/**
 * RL waves: WAVE episodes starting at once, as 16 concurrent creates with a start URL (each until ready) and as
 * 16 concurrent episode resets of live sandboxes, against raw Playwright doing newContext + newPage + goto ×16.
 * The server keeps WAVE warm contexts; between waves the pool refills, as it does while episodes run.
 */
async function rlWaves(fixture: { url: string; hostPort: string }, results: Record<string, number>, say: (l: string) => void): Promise<void> {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const s = await startServer(['--warm-pool', String(WAVE), '--browser-processes', '1']);
  const raw: number[] = [];
  const creates: number[] = [];
  const resets: number[] = [];
  try {
    await rawWave(browser, fixture.url);
    let ids: string[] = [];
    for (let round = 0; round < WAVE_ROUNDS; round++) {
      const blocks = [
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
      ];
      for (let k = 0; k < blocks.length; k++) { await quiet(); await blocks[(round + k) % blocks.length](); }
    }
    await Promise.all(ids.map((sid) => api(s, 'DELETE', `/sandboxes/${sid}`)));
  } finally {
    await browser.close();
    await s.stop();
  }
  const rawP50 = pct(raw, 50);
  results.wave_create_start_url_ratio = r2(pct(creates, 50) / rawP50);
  results.wave_reset_ratio = r2(pct(resets, 50) / rawP50);
  say(`16 creates with start URL → ready   grove ${pct(creates, 50).toFixed(0)} ms   raw newContext+newPage+goto ×16 ${rawP50.toFixed(0)} ms   ratio ${results.wave_create_start_url_ratio} (target ≤ 1.5; warm pool ${WAVE}, p50 of ${WAVE_ROUNDS} waves)`);
  say(`16 episode resets (POST /reset)      grove ${pct(resets, 50).toFixed(0)} ms   raw ${rawP50.toFixed(0)} ms   ratio ${results.wave_reset_ratio} (target ≤ 1.5)`);
}

async function main() {
  const fixture = await startFixture();
  const results: Record<string, number> = {};
  const lines: string[] = [];
  const say = (l: string) => { lines.push(l); process.stderr.write(`  ${l}\n`); };
  if (process.env.GROVE_BENCH_ONLY === 'waves') {
    // Iterating on one part: the RL waves alone, nothing written.
    try { await rlWaves(fixture, results, say); } finally { await fixture.close(); }
    process.stdout.write(lines.join('\n') + '\n');
    return;
  }
  try {
    // 1. step latency and throughput: raw Playwright and Grove (no warm pool) measured in alternating blocks
    const raw = await startRaw(fixture.url);
    let s: Server;
    try {
      // One Chromium process, as the raw baseline has (the default pool of 2 trades a little CPU for isolation).
      s = await startServer(['--warm-pool', '0', '--browser-processes', '1']);
    } catch (e) {
      await raw.close();
      throw e;
    }
    try {
      const id = await createReady(s, createBody(fixture));
      await raw.steps(10);
      await groveSteps(s, id, 10);
      await groveSteps(s, id, 10, true);
      const rawLat: number[] = [];
      const lat: number[] = [];
      const binLat: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const n = Math.ceil(N_STEPS / ROUNDS);
        // Rotating order: no side always runs right after another's block.
        const blocks = [
          async () => rawLat.push(...(await raw.steps(n))),
          async () => lat.push(...(await groveSteps(s, id, n))),
          async () => binLat.push(...(await groveSteps(s, id, n, true))),
        ];
        for (let k = 0; k < blocks.length; k++) { await quiet(); await blocks[(round + k) % blocks.length](); }
      }
      await api(s, 'DELETE', `/sandboxes/${id}`);
      const rawP50 = pct(rawLat, 50);
      const rawP99 = pct(rawLat, 99);
      results.step_p50_ratio = r2(pct(lat, 50) / rawP50);
      results.step_p99_ratio = r2(pct(lat, 99) / rawP99);
      say(`step p50          grove ${pct(lat, 50).toFixed(1)} ms   raw ${rawP50.toFixed(1)} ms   ratio ${results.step_p50_ratio}  (target ≤ 1.15; ${lat.length} steps each, ${ROUNDS} interleaved blocks)`);
      say(`step p99          grove ${pct(lat, 99).toFixed(1)} ms   raw ${rawP99.toFixed(1)} ms   ratio ${results.step_p99_ratio}`);
      results.step_p50_ratio_binary = r2(pct(binLat, 50) / rawP50);
      results.step_p99_ratio_binary = r2(pct(binLat, 99) / rawP99);
      say(`step p50 binary   grove ${pct(binLat, 50).toFixed(1)} ms   raw ${rawP50.toFixed(1)} ms   ratio ${results.step_p50_ratio_binary}  (screenshot "binary": multipart, image bytes without base64)`);
      say(`step p99 binary   grove ${pct(binLat, 99).toFixed(1)} ms   raw ${rawP99.toFixed(1)} ms   ratio ${results.step_p99_ratio_binary}`);

      // 16 concurrent sessions, again in alternating blocks
      await raw.openConcurrent();
      const ids = await Promise.all(Array.from({ length: N_CONC }, () => createReady(s, createBody(fixture))));
      await raw.concurrent(2);
      await Promise.all(ids.map((sid) => groveSteps(s, sid, 2)));
      let rawMs = 0;
      let groveMs = 0;
      let binMs = 0;
      const per = Math.ceil(CONC_STEPS / CONC_ROUNDS);
      for (let round = 0; round < CONC_ROUNDS; round++) {
        const grove = (binary: boolean) => async () => {
          const t0 = now();
          await Promise.all(ids.map((sid) => groveSteps(s, sid, per, binary)));
          if (binary) binMs += now() - t0;
          else groveMs += now() - t0;
        };
        // Rotating order, as for latency: raw, JSON and binary blocks each take every position.
        const blocks = [async () => { rawMs += await raw.concurrent(per); }, grove(false), grove(true)];
        for (let k = 0; k < blocks.length; k++) { await quiet(); await blocks[(round + k) % blocks.length](); }
      }
      await raw.close();
      const total = N_CONC * per * CONC_ROUNDS;
      const tput = total / (groveMs / 1000);
      const binTput = total / (binMs / 1000);
      const rawTput = total / (rawMs / 1000);
      results.throughput_ratio_16 = r2(tput / rawTput);
      results.throughput_ratio_16_binary = r2(binTput / rawTput);
      say(`steps/s @16       grove ${tput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16} (target ≥ 0.9; ${CONC_ROUNDS} interleaved blocks)`);
      say(`steps/s @16 binary grove ${binTput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16_binary}`);

      // memory per idle session: PSS of the Chromium tree with 16 idle sessions vs none, per session
      const pssWith = chromiumPidsUnder(s.proc.pid!).reduce((a, p) => a + pssKb(p), 0);
      await Promise.all(ids.map((sid) => api(s, 'DELETE', `/sandboxes/${sid}`)));
      await new Promise((ok) => setTimeout(ok, 1500)); // let renderers exit before sampling the empty tree
      const pssWithout = chromiumPidsUnder(s.proc.pid!).reduce((a, p) => a + pssKb(p), 0);
      results.mem_per_session_mb = r2((pssWith - pssWithout) / 1024 / N_CONC);
      results.mem_tree_per_session_mb = r2(pssWith / 1024 / N_CONC);
      say(`memory/idle session ${results.mem_per_session_mb} MB marginal PSS (${results.mem_tree_per_session_mb} MB whole tree / ${N_CONC}) (target ≤ 100)`);

      // create → ready, cold (no warm pool; Chromium running)
      const cold = await timeCreates(s, fixture, 0);
      results.create_cold_p50_ms = r2(pct(cold, 50));
      say(`create→ready cold p50 ${results.create_cold_p50_ms} ms (target ≤ 400)`);

      // churn: create/step/delete cycles, CHURN_PAR at a time. A warm-up of N_CHURN/10 cycles first (JIT, pools,
      // the heap growing to its working size), then the measured N_CHURN. RSS is sampled the same way at both
      // ends: after 5 s idle (V8 shrinks the heap when idle), the median of 5 samples.
      let churnErrors = 0;
      const churn = async (cycles: number, countErrors: boolean) => {
        let next = 0;
        await Promise.all(Array.from({ length: CHURN_PAR }, async () => {
          while (next < cycles) {
            next++;
            const sid = await createReady(s, createBody(fixture));
            // An action error here is the environment's answer, not a bench failure: count it and go on.
            try { await groveSteps(s, sid, 1); } catch { if (countErrors) churnErrors++; }
            await api(s, 'DELETE', `/sandboxes/${sid}`);
          }
        }));
      };
      /** The server's V8 heap in use + external buffers (from /metrics), MB: what its objects hold, without allocator slack. */
      const heapMb = async () => {
        const text = await s.client.metrics();
        const g = (name: string) => Number(text.split('\n').find((l) => l.startsWith(name + ' '))?.split(' ')[1] ?? NaN);
        return (g('grove_process_heap_used_bytes') + g('grove_process_external_memory_bytes')) / 1048576;
      };
      const idleRss = async () => {
        await new Promise((ok) => setTimeout(ok, 5000));
        const xs: number[] = [];
        for (let i = 0; i < 5; i++) { xs.push(rssKb(s.proc.pid!)); await new Promise((ok) => setTimeout(ok, 200)); }
        return pct(xs, 50);
      };
      await churn(Math.ceil(N_CHURN / 10), false);
      const rssBefore = await idleRss();
      const heapBefore = await heapMb();
      const chromBefore = chromiumPidsUnder(s.proc.pid!).length;
      await churn(N_CHURN, true);
      const rssAfter = await idleRss(); // also lets recycled processes finish closing
      const heapAfter = await heapMb();
      results.churn_heap_growth_pct = r2(((heapAfter - heapBefore) / heapBefore) * 100);
      const chromAfter = chromiumPidsUnder(s.proc.pid!).length;
      results.churn_leaked_processes = Math.max(0, chromAfter - chromBefore);
      results.churn_rss_growth_pct = r2(((rssAfter - rssBefore) / rssBefore) * 100);
      results.churn_step_errors = churnErrors;
      say(`churn ${N_CHURN} cycles (after ${Math.ceil(N_CHURN / 10)} warm-up)   leaked chromium processes ${results.churn_leaked_processes} (${chromBefore}→${chromAfter}) (target 0)   server RSS ${(rssBefore / 1024).toFixed(0)}→${(rssAfter / 1024).toFixed(0)} MB, growth ${results.churn_rss_growth_pct} % (target ≤ 10)   heap+external ${heapBefore.toFixed(0)}→${heapAfter.toFixed(0)} MB (${results.churn_heap_growth_pct} %)   step errors ${churnErrors}`);
    } finally {
      await raw.close();
      await s.stop();
    }

    // 3. warm pool hits
    s = await startServer(['--warm-pool', '2']);
    try {
      await createReady(s, createBody(fixture, false)).then((sid) => api(s, 'DELETE', `/sandboxes/${sid}`));
      // The pool refills between creates, as between episodes.
      const warm = await timeCreates(s, fixture, 400);
      results.create_warm_p50_ms = r2(pct(warm, 50));
      say(`create→ready warm p50 ${results.create_warm_p50_ms} ms (target ≤ 60)`);
    } finally {
      await s.stop();
    }
    // 4. RL waves: 16 episodes starting at once (creates with a start URL, episode resets) against raw Playwright
    await rlWaves(fixture, results, say);
    const leftovers = allChromiumPids().length;
    say(`chromium processes left after the servers stopped: ${leftovers}`);
  } finally {
    await fixture.close();
  }
  const out = {
    step_p50_ratio: results.step_p50_ratio,
    step_p99_ratio: results.step_p99_ratio,
    create_warm_p50_ms: results.create_warm_p50_ms,
    create_cold_p50_ms: results.create_cold_p50_ms,
    throughput_ratio_16: results.throughput_ratio_16,
    mem_per_session_mb: results.mem_per_session_mb,
    churn_leaked_processes: results.churn_leaked_processes,
    churn_rss_growth_pct: results.churn_rss_growth_pct,
    mem_tree_per_session_mb: results.mem_tree_per_session_mb,
    churn_step_errors: results.churn_step_errors,
    churn_heap_growth_pct: results.churn_heap_growth_pct,
    step_p50_ratio_binary: results.step_p50_ratio_binary,
    step_p99_ratio_binary: results.step_p99_ratio_binary,
    throughput_ratio_16_binary: results.throughput_ratio_16_binary,
    wave_create_start_url_ratio: results.wave_create_start_url_ratio,
    wave_reset_ratio: results.wave_reset_ratio,
    load1: r2(os.loadavg()[0]),
    quick: QUICK,
    measured_at: new Date().toISOString(),
  };
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  if (!QUICK) writeFileSync(path.join(ROOT, 'bench/results/core.json'), JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(`\nGrove core benchmark (${QUICK ? 'quick' : 'full'}; ${os.cpus().length} cores, viewport ${VIEWPORT.width}x${VIEWPORT.height})\n`);
  for (const l of lines) process.stdout.write('  ' + l + '\n');
  process.stdout.write('\n' + JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exitCode = 1;
});
