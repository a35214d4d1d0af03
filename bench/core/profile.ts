// Where the CPU of a step goes with 16 sandboxes stepping at once (issue 11, "also measured"):
//
//   node --import tsx bench/core/profile.ts [--binary | --ws] [--prof] [--self] [--gc] [--raw] [--n 16] [--steps 30]
//                                           [--node-arg <flag for the server's node>]...
//
// Starts `grove serve` as the bench does (one Chromium process, no warm pool), opens n sandboxes on the bench
// fixture and runs `steps` steps in each at once (--ws: over one step channel, server/step-socket.ts). Prints the
// CPU each process spent per step (server, its Chromium tree, this client) from /proc: a change to the step path
// can be judged without the wall clock of a shared machine. --prof: the server runs under `node --cpu-prof`, and
// the top self-time files and functions of the measured steps are printed with their heaviest call chains (sampled
// wall time: on a loaded machine a syscall that wakes another process is over-weighted). --self: the same for this
// client (with --raw: for raw Playwright's steps). --gc: the server's --trace-gc summary. --raw: raw Playwright
// doing the same steps in this process, for comparison.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { GroveClient } from '../../client/index.ts';
import { StepChannel } from '../../client/step-channel.ts';
import type { Action } from '../../protocol/action.ts';
import { startFixture } from './fixture.ts';
import { N_CONC, startRaw } from './raw.ts';
import { chromiumPidsUnder, cpuMs, cpuMsByType } from './procfs.ts';
import { clickAction, createBody, createReady, ROOT, startServer } from './server.ts';

const argv = process.argv.slice(2);
const PROF = argv.includes('--prof');
const BINARY = argv.includes('--binary');
const WS = argv.includes('--ws');
const RAW = argv.includes('--raw');
/** Also profile this process (the client side) during the measured steps. */
const SELF = argv.includes('--self');
/** The server's --trace-gc lines go to <profile dir>/server-gc.txt; a summary is printed. */
const GC = argv.includes('--gc');
const STEPS = Number(argv[argv.indexOf('--steps') + 1]) || 30;
const N = Number(argv[argv.indexOf('--n') + 1]) || 16;
/** Chromium's CPU ms per step by process type (browser, gpu-process, renderer, ...), from two cpuMsByType readings. */
function byType(before: Map<string, number>, after: Map<string, number>, steps: number): string {
  return [...after].map(([t, ms]) => [t, (ms - (before.get(t) ?? 0)) / steps] as const).filter(([, ms]) => ms >= 0.05)
    .sort((a, b) => b[1] - a[1]).map(([t, ms]) => `${t} ${ms.toFixed(2)}`).join('  ');
}

/** The measured steps, in µs of the monotonic clock V8's profiler stamps samples with. */
let window: [number, number] = [0, Infinity];

/** The same 16 × N steps done by raw Playwright in this process: the CPU a step costs without Grove. */
async function rawRun(): Promise<void> {
  const fixture = await startFixture();
  const raw = await startRaw(fixture.url);
  try {
    await raw.openConcurrent();
    await raw.concurrent(3);
    const chrome = chromiumPidsUnder(process.pid);
    const c0 = chrome.reduce((a, p) => a + cpuMs(p), 0);
    const types0 = cpuMsByType(chrome);
    const self0 = process.cpuUsage();
    const inspector = SELF ? new Session() : undefined;
    if (inspector) {
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.start');
    }
    const wall = await raw.concurrent(STEPS);
    if (inspector) {
      const { profile } = await inspector.post('Profiler.stop');
      const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-prof-'));
      writeFileSync(path.join(dir, 'raw.cpuprofile.json'), JSON.stringify(profile));
      inspector.disconnect();
      report(path.join(dir, 'raw.cpuprofile.json'));
    }
    const total = N_CONC * STEPS;
    const chrome1 = chromiumPidsUnder(process.pid);
    const chromeMs = (chrome1.reduce((a, p) => a + cpuMs(p), 0) - c0) / total;
    const u = process.cpuUsage(self0);
    process.stdout.write(
      `raw ${total} steps at ${N_CONC}: ${(total / (wall / 1000)).toFixed(1)} steps/s; CPU ms per step: ` +
        `chromium ${chromeMs.toFixed(2)} (${byType(types0, cpuMsByType(chrome1), total)})  client ${((u.user + u.system) / 1000 / total).toFixed(2)}  (load ${os.loadavg()[0].toFixed(2)})\n`,
    );
  } finally {
    await raw.close();
    await fixture.close();
  }
}

async function main(): Promise<void> {
  if (argv.includes('--report')) return report(argv[argv.indexOf('--report') + 1]);
  if (RAW) return rawRun();
  const fixture = await startFixture();
  const profDir = mkdtempSync(path.join(os.tmpdir(), 'grove-prof-'));
  const nodeArgs = [...(PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...(GC ? ['--trace-gc'] : []), ...argv.filter((a, i) => argv[i - 1] === '--node-arg')];
  const s = await startServer(['--warm-pool', '0', '--warm-pool-max-mb', '0', '--browser-processes', '1'], nodeArgs, GC ? path.join(profDir, 'server-gc.txt') : undefined);
  const client = new GroveClient({ baseUrl: s.url, apiKey: s.key });
  try {
    const ids = await Promise.all(Array.from({ length: N }, () => createReady(s, createBody(fixture), { retryFailedStart: true })));
    const channel = WS ? await StepChannel.open({ baseUrl: s.url, apiKey: s.key }) : undefined;
    const run = (n: number) =>
      Promise.all(ids.map(async (id) => {
        for (let i = 0; i < n; i++) {
          if (channel) await channel.step(id, { action: clickAction(i) as Action });
          else if (BINARY) await client.stepBinary(id, { action: clickAction(i) as Action });
          else await client.step(id, { action: clickAction(i) as Action });
        }
      }));
    await run(3);
    const chrome = chromiumPidsUnder(s.proc.pid!);
    const c0 = { server: cpuMs(s.proc.pid!), chrome: chrome.reduce((a, p) => a + cpuMs(p), 0), types: cpuMsByType(chrome), self: process.cpuUsage() };
    const t0 = performance.now();
    const h0 = process.hrtime.bigint();
    const inspector = SELF ? new Session() : undefined;
    if (inspector) {
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.start');
    }
    await run(STEPS);
    if (inspector) {
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(path.join(profDir, 'client.cpuprofile.json'), JSON.stringify(profile));
      inspector.disconnect();
    }
    window = [Number(h0 / 1000n), Number(process.hrtime.bigint() / 1000n)];
    const wall = performance.now() - t0;
    const chrome1 = chromiumPidsUnder(s.proc.pid!);
    const total = N * STEPS;
    const server = (cpuMs(s.proc.pid!) - c0.server) / total;
    const chromeMs = (chrome1.reduce((a, p) => a + cpuMs(p), 0) - c0.chrome) / total;
    const selfU = process.cpuUsage(c0.self);
    const self = (selfU.user + selfU.system) / 1000 / total;
    process.stdout.write(
      `${WS ? 'step channel' : BINARY ? 'binary' : 'json'} ${total} steps at ${N}: ${(total / (wall / 1000)).toFixed(1)} steps/s; CPU ms per step: ` +
        `server ${server.toFixed(2)}  chromium ${chromeMs.toFixed(2)} (${byType(c0.types, cpuMsByType(chrome1), total)})  client ${self.toFixed(2)}  (load ${os.loadavg()[0].toFixed(2)})\n`,
    );
    await channel?.close();
    await Promise.all(ids.map((id) => client.deleteSandbox(id)));
  } finally {
    client.close();
    await s.stop();
    await fixture.close();
  }
  if (GC) {
    const lines = readFileSync(path.join(profDir, 'server-gc.txt'), 'utf8').split('\n');
    const sum = (kind: string) => lines.filter((l) => l.includes(kind)).reduce((a, l) => a + Number(/MB, ([\d.]+) \//.exec(l)?.[1] ?? 0), 0);
    process.stdout.write(`server GC over its whole life: ${lines.filter((l) => l.includes('Scavenge')).length} scavenges (${sum('Scavenge').toFixed(0)} ms), ` +
      `${lines.filter((l) => l.includes('Mark-Compact')).length} mark-compacts (${sum('Mark-Compact').toFixed(0)} ms pause); ${path.join(profDir, 'server-gc.txt')}\n`);
  }
  if (PROF) report(profDir);
  if (SELF) {
    process.stdout.write('\n--- client (this process) ---\n');
    window = [0, Infinity];
    report(path.join(profDir, 'client.cpuprofile.json'));
  }
  // Nothing asked to be kept (no --prof, --gc or --self): no empty folder left behind.
  if (!PROF && !GC && !SELF) rmSync(profDir, { recursive: true, force: true });
}

interface ProfNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[]; parent?: ProfNode }

const shortUrl = (url: string) => url.replace(/^file:\/\//, '').replace(ROOT + '/', '').replace(/.*node_modules\//, 'nm/');
const frameName = (n: ProfNode) => `${n.callFrame.functionName || '(anon)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

/** Self time by function and by file from the server's .cpuprofile. */
function report(where: string): void {
  const single = /\.cpuprofile(\.json)?$/.test(where);
  const dir = single ? path.dirname(where) : where;
  const file = single ? path.basename(where) : readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) {
    process.stdout.write(`no profile written in ${dir}\n`);
    return;
  }
  const prof = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { nodes: ProfNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const self = new Map<number, number>();
  let t = prof.startTime;
  prof.samples.forEach((id, i) => {
    t += prof.timeDeltas[i] ?? 0;
    // Only the measured steps: not the server's start, the creates or the shutdown.
    if (t >= window[0] && t <= window[1]) self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i + 1] ?? 0));
  });
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  for (const n of prof.nodes) for (const c of n.children ?? []) byId.get(c)!.parent = n;
  const stacks = new Map<string, Map<string, number>>();
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const n of prof.nodes) {
    const us = self.get(n.id) ?? 0;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)') { idle += us; continue; }
    total += us;
    const short = shortUrl(url);
    const fk = `${functionName || '(anon)'} ${short}:${lineNumber + 1}`;
    byFn.set(fk, (byFn.get(fk) ?? 0) + us);
    if (us > 0) {
      const chain: string[] = [];
      for (let p = n.parent; p && chain.length < 6; p = p.parent) chain.push(frameName(p));
      const m = stacks.get(fk) ?? new Map<string, number>();
      m.set(chain.join(' < '), (m.get(chain.join(' < ')) ?? 0) + us);
      stacks.set(fk, m);
    }
    const pk = short.startsWith('nm/') ? short.split('/').slice(0, short.startsWith('nm/@') ? 3 : 2).join('/') : short || functionName;
    byFile.set(pk, (byFile.get(pk) ?? 0) + us);
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, us]) => `  ${(us / 1000).toFixed(0).padStart(6)} ms ${((us / total) * 100).toFixed(1).padStart(5)} %  ${name}`).join('\n');
  process.stdout.write(`profile ${path.join(dir, file)}: busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms\n`);
  process.stdout.write(`by file / package:\n${top(byFile, 25)}\nby function:\n${top(byFn, 40)}\n`);
  // Who calls the top functions (the two heaviest call chains each).
  for (const [fk] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    const chains = [...(stacks.get(fk) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, 2);
    process.stdout.write(`${fk}\n${chains.map(([c, us]) => `    ${(us / 1000).toFixed(0)} ms < ${c}`).join('\n')}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exitCode = 1;
});
