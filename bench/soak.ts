// Soak (issue 8): episodes at concurrency on the offline sites with injected faults — renderer and browser killed
// mid-step, busy loops started mid-settle, pages that never finish loading, dialog storms, popup storms, large
// downloads, the server SIGKILLed and restarted mid-run. Reports episodes lost without attribution, steps that
// exceeded their deadline, leaked processes and temp folders, and the server's RSS and heap over the run (the heap
// growth judged is the live heap after full collections, server/heap-live.ts; heapUsed as sampled is printed beside it).
//
//   npm run soak                       60 minutes at concurrency 16 (every fault ≥ 20 times)
//   npm run soak -- --minutes 5        a shorter run       --ci: 2 minutes at concurrency 4 (the slow test)
//   --json FILE                        also write the summary (default bench/results/soak[-ci].json)
//   --heap-snapshots DIR               a diagnostic run: the server's heap is snapshotted into DIR at the start and
//                                      the end of the second half (compare: bench/heap-diff.ts); each snapshot stops
//                                      the server for seconds, so steps may pass their deadline in such a run
//
// Fault schedule: renderer and browser kills alternate every KILL_PERIOD over the whole run; the server restarts
// RESTARTS times, evenly, in the first RESTART_WINDOW of the run, so the rest of the run is one server process and
// its heap growth over the second half measures that process, not a fresh one. Page faults go to every other
// episode, in rotation. The injections per fault are printed and checked against the target (≥ 20 in the full run).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stepBudgetMs } from '../browser-env/step-budget.ts';
import { GroveApiError, GroveClient } from '../client/index.ts';
import type { Action } from '../protocol/action.ts';
import { BrowserCreateOptions } from '../protocol/sandbox.ts';
import { startSites } from '../sites/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const CI = argv.includes('--ci');
const MINUTES = Number(flag('minutes') ?? (CI ? 2 : 60));
const CONC = Number(flag('concurrency') ?? (CI ? 4 : 16));
const SNAPSHOTS = flag('heap-snapshots');
const OUT = flag('json') ?? path.join(ROOT, 'bench/results', CI ? 'soak-ci.json' : 'soak.json');
/** Renderer and browser kills alternate on this period (60 min / 50 s: 36 of each). */
const KILL_PERIOD_MS = Number(flag('kill-period-ms') ?? (CI ? 10_000 : 50_000));
/** Server SIGKILL + restarts, evenly spread over the first RESTART_WINDOW of the run. */
const RESTARTS = Number(flag('restarts') ?? (CI ? 2 : 24));
const RESTART_WINDOW = 0.4;
/** Injections of each fault a full run must reach. */
const TARGET_INJECTIONS = CI ? 1 : 20;
const STEPS_PER_EPISODE = 8;
const KEY = 'soak-key-' + Math.random().toString(36).slice(2);
const SB_OPTIONS = { action_timeout_ms: 5000, settle_max_ms: 3000 };
/** Client-side slack over the step's own deadline (HTTP and JSON on a loaded machine). */
const DEADLINE_SLACK_MS = 3000;

type PageFault = 'busy_loop' | 'dialog_storm' | 'popup_storm' | 'never_loads' | 'large_download';
type ProcFault = 'kill_renderer' | 'kill_browser' | 'server_restart';
const PAGE_FAULTS: PageFault[] = ['busy_loop', 'dialog_storm', 'popup_storm', 'never_loads', 'large_download'];
const ALL_FAULTS: string[] = ['kill_renderer', 'kill_browser', 'server_restart', ...PAGE_FAULTS];

const BTN = 'position:absolute;left:10px;top:10px;width:300px;height:60px';
const faultPage = (js: string) =>
  `<!doctype html><html><head><title>fault</title></head><body><button style="${BTN}" onclick="${js}">go</button></body></html>`;

function startFaultServer(): Promise<{ url: string; close(): Promise<void> }> {
  const pages: Record<string, string> = {
    '/busy': faultPage('setTimeout(() => { while (true) {} }, 100)'),
    '/dialogs': faultPage("setTimeout(() => { for (;;) { alert(1); confirm('x'); } }, 100)"),
    '/popups': faultPage("for (let i = 0; i < 200; i++) window.open('/popup?' + i)"),
    '/popup': '<!doctype html><title>popup</title><p>popup</p>',
    '/never-link': faultPage("location.href = '/never'"),
    '/download-link': faultPage("location.href = '/big'"),
  };
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    if (p === '/never') {
      // Headers and a little HTML, then nothing: the document never finishes loading.
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><title>never</title><p>loading');
      req.on('close', () => res.destroy());
      return;
    }
    if (p === '/big') {
      // 400 MB of download, streamed: more than the default per-download limit.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="big.bin"' });
      const chunk = Buffer.alloc(1 << 20, 7);
      let sent = 0;
      const pump = () => {
        while (sent < 400 && res.write(chunk)) sent++;
        if (sent >= 400) res.end();
        else res.once('drain', pump);
      };
      req.on('close', () => res.destroy());
      pump();
      return;
    }
    const body = pages[p];
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' });
    res.end(body ?? 'not found');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

// ---------- the Grove server (a child process, so it can be SIGKILLed and restarted) ----------
interface Server {
  proc: ChildProcess;
  client: GroveClient;
  url: string;
}
let server!: Server;
let epoch = 0;
let port = 0;
const soakDir = mkdtempSync(path.join(os.tmpdir(), 'grove-soak-'));
const dataDir = path.join(soakDir, 'data');
/** The server's TMPDIR: every temporary folder it (or Playwright) makes is found here, apart from other users'. */
const serverTmp = path.join(soakDir, 'tmp');
mkdirSync(serverTmp, { recursive: true });
/** Every server's log (pino JSON lines, warn and up): its errors are summarised at the end. */
const serverLog = path.join(soakDir, 'server.log');

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return p;
}

async function startGrove(): Promise<Server> {
  port ||= await freePort();
  const logFd = openSync(serverLog, 'a');
  const proc = spawn(
    process.execPath,
    [
      ...(SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOTS}`] : []),
      path.join(ROOT, 'bin/grove.mjs'),
      ...['serve', '--port', String(port), '--api-key', KEY, '--max-sandboxes', String(CONC * 2 + 8), '--data-dir', dataDir],
    ],
    { stdio: ['ignore', logFd, 'pipe'], env: { ...process.env, GROVE_LOG_LEVEL: 'warn', TMPDIR: serverTmp } },
  );
  closeSync(logFd); // the child has its own copy
  let stderr = '';
  proc.stderr!.on('data', (d) => {
    stderr = (stderr + String(d)).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 300 || proc.exitCode !== null) throw new Error(`grove serve did not start: ${stderr}`);
    await sleep(100);
  }
  return { proc, url, client: new GroveClient({ baseUrl: url, apiKey: KEY, timeoutMs: 180_000 }) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}

// ---------- processes ----------
function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}
function pids(): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);
}
/** Chromium processes of this soak's servers: their command line names a profile or pool of this data dir. */
function ourChromium(): { pid: number; args: string[] }[] {
  const out: { pid: number; args: string[] }[] = [];
  for (const pid of pids()) {
    const args = cmdline(pid);
    if (!args[0]?.includes('chromium')) continue;
    // The server's Chromium: its profile lives in the soak's own TMPDIR, or it descends from the server.
    if (args.some((a) => a.includes(soakDir)) || descendsFrom(pid, server.proc.pid!)) out.push({ pid, args });
  }
  return out;
}
function ppid(pid: number): number {
  try {
    const t = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(t.slice(t.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}
function descendsFrom(pid: number, root: number): boolean {
  for (let p = pid, i = 0; p > 1 && i < 64; p = ppid(p), i++) if (p === root) return true;
  return false;
}
function treeOf(root: number): number[] {
  return pids().filter((p) => p !== root && descendsFrom(p, root));
}

// ---------- statistics ----------
const stats = {
  episodes: 0,
  episodes_ok: 0,
  episodes_attributed: {} as Record<string, number>,
  episodes_lost_unattributed: 0,
  lost_reasons: [] as string[],
  steps: 0,
  steps_over_deadline: 0,
  worst_step_over_budget_ms: -Infinity,
  action_errors: {} as Record<string, number>,
  injected: {} as Record<string, number>,
  limit_events: {} as Record<string, number>,
};
const inc = (o: Record<string, number>, k: string, n = 1) => {
  o[k] = (o[k] ?? 0) + n;
};
const memory: { t: number; rss: number; heap: number; live: number; external: number; load1: number }[] = [];

// ---------- episodes ----------
let sitesUrl = '';
let faultUrl = '';
let stopping = false;
let restarting: Promise<void> | null = null;
let pageFaultTurn = 0;

class Attributed extends Error {}

function siteActions(rnd: () => number): Action[] {
  const x = Math.round(50 + rnd() * 1100);
  const y = Math.round(50 + rnd() * 800);
  const r = rnd();
  if (r < 0.45) return [{ action: 'click', x, y }];
  if (r < 0.65) return [{ action: 'scroll', direction: rnd() < 0.5 ? 'down' : 'up', amount: 3 }];
  if (r < 0.8) return [{ action: 'type', text: 'soak test', x, y }];
  if (r < 0.9) return [{ action: 'key', keys: 'Tab' }];
  return [{ action: 'back' }];
}

function faultActions(f: PageFault): Action[] {
  const click: Action = { action: 'click', x: 150, y: 40 };
  switch (f) {
    case 'busy_loop':
      return [{ action: 'goto', url: `${faultUrl}/busy` }, click];
    case 'dialog_storm':
      return [{ action: 'goto', url: `${faultUrl}/dialogs` }, click];
    case 'popup_storm':
      return [{ action: 'goto', url: `${faultUrl}/popups` }, click];
    case 'never_loads':
      return [{ action: 'goto', url: `${faultUrl}/never` }];
    case 'large_download':
      return [{ action: 'goto', url: `${faultUrl}/download-link` }, click, { action: 'wait', ms: 3000 }];
  }
}

async function step(id: string, actions: Action[]): Promise<void> {
  const budget = stepBudgetMs(BrowserCreateOptions.parse({ type: 'browser', ...SB_OPTIONS }), actions);
  const t0 = Date.now();
  const r = await server.client.step(id, { actions, screenshot: 'none' });
  const ms = Date.now() - t0;
  stats.steps++;
  stats.worst_step_over_budget_ms = Math.max(stats.worst_step_over_budget_ms, ms - budget);
  if (ms > budget + DEADLINE_SLACK_MS) stats.steps_over_deadline++;
  const e = r.observation.last_action_error;
  if (e) inc(stats.action_errors, e.code);
  for (const ev of r.observation.events) if (ev.type === 'limit') inc(stats.limit_events, ev.limit);
}

/** Turns a failed call into an attribution (a known cause) or rethrows it as lost. */
/** When the last browser kill was injected (a creation it overlapped may fail: its browser died under it). */
let lastBrowserKillAt = 0;

function attribute(e: unknown, startEpoch: number, creatingSince?: number): never {
  if (epoch !== startEpoch || restarting) throw new Attributed('server_restart');
  // A sandbox whose creation overlapped a browser kill may fail to start (its replacement browser could not be
  // launched within the creation's budget on a loaded machine): the kill is the cause. Steps get no such pass.
  if (creatingSince !== undefined && lastBrowserKillAt >= creatingSince && e instanceof GroveApiError && ['internal_error', 'browser_crashed'].includes(e.code)) {
    throw new Attributed('browser_kill_during_create');
  }
  if (e instanceof GroveApiError) {
    if (e.status === 503 && e.code === 'capacity_exhausted') throw new Attributed('capacity');
    // The server said it is too busy to open a browser in time, with a stable retryable code (a create after a
    // browser kill on a machine at load 30); counted apart, so a run shows how often it happens.
    if (e.status === 503 && e.code === 'browser_start_timeout') throw new Attributed('browser_start_timeout');
    if (e.code === 'sandbox_closed' || e.code === 'sandbox_not_found') throw new Attributed('server_restart');
  }
  throw e;
}

async function episode(worker: number, n: number): Promise<void> {
  let seed = worker * 100_003 + n * 7919;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const startEpoch = epoch;
  stats.episodes++;
  let id: string | undefined;
  try {
    const sitesHost = new URL(sitesUrl).host;
    const faultHost = new URL(faultUrl).host;
    const site = ['shop', 'recipes', 'forms'][Math.floor(rnd() * 3)];
    const createdAt = Date.now();
    try {
      const info = await server.client.createAndWait(
        { type: 'browser', start_url: `${sitesUrl}/${site}/?grove_session=soak${worker}x${n}`, network: { allow: [sitesHost, faultHost] }, ...SB_OPTIONS },
        120,
      );
      id = info.sandbox_id;
    } catch (e) {
      attribute(e, startEpoch, createdAt);
    }
    // Every other episode meets one page fault, in rotation, at a random step.
    const fault: PageFault | null = n % 2 === 0 ? PAGE_FAULTS[pageFaultTurn++ % PAGE_FAULTS.length] : null;
    const faultAt = Math.floor(rnd() * STEPS_PER_EPISODE);
    for (let s = 0; s < STEPS_PER_EPISODE && !stopping; s++) {
      const actions = fault && s === faultAt ? faultActions(fault) : siteActions(rnd);
      if (fault && s === faultAt) inc(stats.injected, fault);
      try {
        await step(id!, actions);
      } catch (e) {
        attribute(e, startEpoch);
      }
    }
    stats.episodes_ok++;
  } catch (e) {
    if (e instanceof Attributed) inc(stats.episodes_attributed, e.message);
    else {
      stats.episodes_lost_unattributed++;
      const msg = e instanceof GroveApiError ? `${e.status} ${e.code}: ${e.message}` : e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      if (stats.lost_reasons.length < 20) stats.lost_reasons.push(msg.slice(0, 300));
    }
  } finally {
    if (id && epoch === startEpoch) await server.client.deleteSandbox(id).catch(() => undefined);
  }
}

// ---------- process faults ----------
async function injectProcFault(f: ProcFault): Promise<void> {
  const chromium = ourChromium();
  if (f === 'kill_renderer') {
    // Chromium rewrites a child's argv into one string (setproctitle): look inside it.
    const renderers = chromium.filter((c) => c.args.join(' ').includes('--type=renderer'));
    const victim = renderers[Math.floor(Math.random() * renderers.length)];
    if (!victim) return;
    process.kill(victim.pid, 'SIGKILL');
  } else if (f === 'kill_browser') {
    const roots = chromium.filter((c) => c.args.some((a) => a.startsWith('--grove-pool=')) && !c.args.join(' ').includes('--type='));
    const victim = roots[Math.floor(Math.random() * roots.length)];
    if (!victim) return;
    lastBrowserKillAt = Date.now();
    process.kill(victim.pid, 'SIGKILL');
  } else {
    restarting = (async () => {
      const old = server.proc;
      const exited = new Promise((r) => old.once('exit', r));
      old.kill('SIGKILL');
      await exited;
      epoch++;
      server = await startGrove();
    })();
    await restarting;
    restarting = null;
  }
  inc(stats.injected, f);
}

/** Has the server write a heap snapshot into SNAPSHOTS and waits until it is complete (the server answers again). */
async function heapSnapshot(label: string): Promise<void> {
  if (!SNAPSHOTS) return;
  const before = new Set(readdirSync(SNAPSHOTS));
  server.proc.kill('SIGUSR2');
  let file: string | undefined;
  for (let i = 0; i < 600 && !file; i++) {
    await sleep(500);
    file = readdirSync(SNAPSHOTS).find((n) => !before.has(n) && n.endsWith('.heapsnapshot'));
  }
  // The snapshot is written on the server's main thread: once it answers, the file is complete.
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${server.url}/health`).then((r) => r.ok, () => false)) break;
    await sleep(500);
  }
  console.log(`heap snapshot (${label}): ${file ? path.join(SNAPSHOTS, file) : 'none written'}`);
}

async function sampleMemory(): Promise<void> {
  try {
    const text = await server.client.metrics();
    const num = (name: string) => Number(new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    memory.push({ t: Date.now(), rss: num('grove_process_resident_memory_bytes'), heap: num('grove_process_heap_used_bytes'), live: num('grove_process_heap_live_bytes'), external: num('grove_process_external_memory_bytes'), load1: os.loadavg()[0] });
  } catch {
    // a restart in progress
  }
}


/** The servers' error lines (level ≥ 50), grouped by message and error text, most frequent first. */
function serverErrors(): { count: number; line: string }[] {
  const groups = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(serverLog, 'utf8');
  } catch {
    return [];
  }
  for (const raw of text.split('\n')) {
    let rec: { level?: number; msg?: string; err?: { message?: string; stack?: string }; code?: string };
    try {
      rec = JSON.parse(raw) as typeof rec;
    } catch {
      continue;
    }
    if ((rec.level ?? 0) < 50) continue;
    const where = rec.err?.stack?.split('\n').slice(1, 4).map((l) => l.trim()).join(' ← ') ?? '';
    const key = `${rec.msg ?? ''}: ${rec.code ?? ''} ${(rec.err?.message ?? '').slice(0, 300)} ${where}`.slice(0, 800);
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([line, count]) => ({ count, line }));
}

// ---------- main ----------
async function main(): Promise<void> {
  const sites = await startSites({ port: 0 });
  sitesUrl = sites.url.replace(/\/+$/, '');
  const faults = await startFaultServer();
  faultUrl = faults.url;
  server = await startGrove();
  const t0 = Date.now();
  const end = t0 + MINUTES * 60_000;
  console.log(
    `soak: ${MINUTES} min at concurrency ${CONC}; renderer/browser kills every ${KILL_PERIOD_MS / 1000} s, ${RESTARTS} server restarts in the first ${RESTART_WINDOW * 100} %; in ${soakDir}`,
  );
  await sampleMemory();
  const memTimer = setInterval(() => void sampleMemory(), CI ? 5000 : 30_000);
  const inject = (f: ProcFault) => injectProcFault(f).catch((e: unknown) => console.log(`fault injection ${f} failed:`, e));
  // Each injection has its own time (t0 + i × period): a slow one does not push the later ones out of the run.
  const killLoop = (async () => {
    for (let i = 1; t0 + i * KILL_PERIOD_MS < end - KILL_PERIOD_MS / 2; i++) {
      await sleep(t0 + i * KILL_PERIOD_MS - Date.now());
      if (restarting) await restarting;
      await inject(i % 2 === 1 ? 'kill_renderer' : 'kill_browser');
    }
  })();
  const restartLoop = (async () => {
    const gap = (MINUTES * 60_000 * RESTART_WINDOW) / (RESTARTS + 1);
    for (let i = 1; i <= RESTARTS; i++) {
      await sleep(t0 + i * gap - Date.now());
      await inject('server_restart');
    }
  })();
  const faultLoop = Promise.all([killLoop, restartLoop]);
  const snapshots = (async () => {
    if (!SNAPSHOTS) return;
    mkdirSync(SNAPSHOTS, { recursive: true });
    await sleep(t0 + (end - t0) / 2 - Date.now());
    await heapSnapshot('second half starts');
  })();
  const progress = setInterval(() => {
    console.log(
      `  ${Math.round((Date.now() - t0) / 1000)} s: episodes ${stats.episodes} (ok ${stats.episodes_ok}, lost ${stats.episodes_lost_unattributed}), steps ${stats.steps}, over deadline ${stats.steps_over_deadline}, injected ${JSON.stringify(stats.injected)}`,
    );
  }, CI ? 15_000 : 60_000);
  await Promise.all(
    Array.from({ length: CONC }, async (_, w) => {
      for (let n = 0; Date.now() < end; n++) {
        if (restarting) await restarting;
        await episode(w, n);
      }
    }),
  );
  stopping = true;
  await faultLoop;
  await snapshots;
  await heapSnapshot('end');
  clearInterval(memTimer);
  clearInterval(progress);
  await sampleMemory();

  // Graceful stop, then: what is left?
  const serverPid = server.proc.pid!;
  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGTERM');
  await Promise.race([exited, sleep(30_000)]);
  await sleep(2000);
  const leakedProcs = ourChromium().length + treeOf(serverPid).length;
  const leftovers = ['artifacts', 'browser/artifacts', 'browser/downloads'].flatMap((d) => {
    try {
      return readdirSync(path.join(dataDir, d)).map((n) => `${d}/${n}`);
    } catch {
      return [];
    }
  });
  // What the server left in its TMPDIR (Playwright profiles and artifacts, anything else).
  // (tsx keeps its compile cache there: a tool's cache, not Grove's.)
  const tmpAfter = readdirSync(serverTmp)
    .filter((n) => !n.startsWith('tsx-'))
    .map((n) => `tmp/${n}`);
  await faults.close();
  await sites.close();

  // Growth over the second half: the median of its last few samples against the median of its first few (one
  // sample is a point in the GC cycle, not a level).
  const half = memory.filter((m) => m.t >= t0 + (end - t0) / 2 && m.t <= end + 60_000);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const w = Math.max(1, Math.min(5, Math.floor(half.length / 4)));
  const growth = (k: 'rss' | 'heap' | 'live') => {
    const xs = half.filter((m) => Number.isFinite(m[k]));
    if (xs.length < 2) return NaN;
    const first = median(xs.slice(0, w).map((m) => m[k]));
    return (median(xs.slice(-w).map((m) => m[k])) - first) / first;
  };
  const injections = Object.fromEntries(ALL_FAULTS.map((f) => [f, stats.injected[f] ?? 0]));
  const loads = memory.map((m) => m.load1);
  const summary = {
    minutes: MINUTES,
    concurrency: CONC,
    ...stats,
    injected: injections,
    injections_target: TARGET_INJECTIONS,
    injections_below_target: ALL_FAULTS.filter((f) => injections[f] < TARGET_INJECTIONS),
    load_average_1m: { mean: Number((loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length)).toFixed(1)), max: Number(Math.max(...loads).toFixed(1)) },
    leaked_processes: leakedProcs,
    leaked_temp_folders: [...leftovers, ...tmpAfter],
    server_errors: serverErrors(),
    memory_samples: memory.length,
    rss_mb_first: memory[0] ? Math.round(memory[0].rss / 1e6) : null,
    rss_mb_last: memory.length ? Math.round(memory[memory.length - 1].rss / 1e6) : null,
    heap_mb_first: memory[0] ? Math.round(memory[0].heap / 1e6) : null,
    heap_mb_last: memory.length ? Math.round(memory[memory.length - 1].heap / 1e6) : null,
    heap_growth_second_half: Number(growth('live').toFixed(3)),
    heap_used_growth_second_half: Number(growth('heap').toFixed(3)),
    rss_growth_second_half: Number(growth('rss').toFixed(3)),
  };
  console.log(JSON.stringify(summary, null, 2));
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  const mb = (x: number) => Math.round(x / 1e6);
  // Memory over time: one line per tenth of the run.
  const timeline: string[] = [];
  for (let k = 0; k <= 10; k++) {
    const at = t0 + (k * (end - t0)) / 10;
    const m = memory.find((x) => x.t >= at - 1000);
    if (m) timeline.push(`    t=${((m.t - t0) / 60_000).toFixed(1).padStart(5)} min  rss ${String(mb(m.rss)).padStart(4)} MB  heap live ${String(mb(m.live)).padStart(4)} MB (used ${String(mb(m.heap)).padStart(4)} MB)  load ${m.load1.toFixed(1)}`);
  }
  console.log(
    [
      `soak summary (${MINUTES} min, concurrency ${CONC})`,
      `  injections: ${ALL_FAULTS.map((f) => `${f} ${injections[f]}`).join(', ')}  (target ≥ ${TARGET_INJECTIONS} each: ${summary.injections_below_target.length ? `MISSED ${summary.injections_below_target.join(', ')}` : 'met'})`,
      `  episodes ${stats.episodes}: ok ${stats.episodes_ok}, attributed ${JSON.stringify(stats.episodes_attributed)}, lost without attribution ${stats.episodes_lost_unattributed}`,
      `  steps ${stats.steps}: over deadline ${stats.steps_over_deadline} (worst: ${Math.round(stats.worst_step_over_budget_ms)} ms against its budget)`,
      `  leaked processes ${leakedProcs}, leaked temp folders ${summary.leaked_temp_folders.length}`,
      `  server memory over time (one process after the last restart at ${((RESTART_WINDOW * MINUTES * RESTARTS) / (RESTARTS + 1)).toFixed(1)} min):`,
      ...timeline,
      `  second half: heap live after full GC ${pct(summary.heap_growth_second_half)} (target ≤ +5 %), heap used as sampled ${pct(summary.heap_used_growth_second_half)}, rss ${pct(summary.rss_growth_second_half)}`,
      `  load average (1 min) during the run: mean ${summary.load_average_1m.mean}, max ${summary.load_average_1m.max} (2 cores)`,
      `  server error lines (level ≥ 50), by kind: ${summary.server_errors.length ? '' : 'none'}`,
      ...summary.server_errors.map((e) => `    ${e.count} × ${e.line.slice(0, 400)}`),
    ].join('\n'),
  );
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify({ ...summary, memory }, null, 2));
  rmSync(soakDir, { recursive: true, force: true });
}

// Stopped from outside (a timed-out test): the server goes too (its watchdog takes Chromium with it).
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    server?.proc.kill('SIGKILL');
    rmSync(soakDir, { recursive: true, force: true });
    process.exit(1);
  });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    server?.proc.kill('SIGKILL');
    process.exit(1);
  },
);
