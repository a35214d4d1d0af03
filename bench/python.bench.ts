// `npm run bench:python`: the Python client (python/grove_client) against the TypeScript client (client/) in the
// same run, on the same server and fixture page: 16 concurrent envs × 50 steps each, steps/s per client, printed
// as the Python/TypeScript ratio (target ≥ 0.9). Blocks alternate TS / Python (threads) / Python (asyncio), with
// JSON (base64) and binary (multipart) screenshots, in a rotating order so machine drift moves all sides alike.
//
//   npm run bench:python            full run (2 rounds) → bench/results/python.json
//   GROVE_BENCH_QUICK=1 ...         1 round of 4 envs × 10 steps, nothing written
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GroveApiError, GroveClient } from '../client/index.ts';
import type { Action } from '../protocol/action.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const QUICK = process.argv.includes('--quick') || process.env.GROVE_BENCH_QUICK === '1';
const ENVS = QUICK ? 4 : 16;
const STEPS = QUICK ? 10 : 50;
const ROUNDS = QUICK ? 1 : Number(process.env.GROVE_BENCH_ROUNDS ?? 2);
const run = promisify(execFile);

const FIXTURE = `<!doctype html><html><head><title>bench</title><style>
body{margin:0;font:16px sans-serif} .grid{display:grid;grid-template-columns:repeat(8,1fr);gap:4px;padding:8px}
button{height:60px} #log{padding:8px}</style></head><body>
<div class="grid">${Array.from({ length: 48 }, (_, i) => `<button onclick="document.getElementById('log').textContent='clicked ${i} '+(++window.n)">Button ${i}</button>`).join('')}</div>
<div id="log">none</div><script>window.n=0</script><p>${'Lorem ipsum dolor sit amet. '.repeat(80)}</p></body></html>`;

const action = (i: number): Action => ({ action: 'click', x: 60 + (i % 8) * 150, y: 40 + (Math.floor(i / 8) % 6) * 64, space: 'css_px' });

type Side = 'ts' | 'py-threads' | 'py-async';
type Mode = 'json' | 'binary';

async function main(): Promise<void> {
  const fixture = http.createServer((_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(FIXTURE));
  await new Promise<void>((ok) => fixture.listen(0, '127.0.0.1', ok));
  const hostPort = `127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  const body = { type: 'browser' as const, start_url: `http://${hostPort}/`, network: { allow: [hostPort] } };

  const key = 'bench-' + Math.random().toString(36).slice(2);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-py-'));
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/grove.mjs'), 'serve', '--port', '0', '--api-key', key,
    '--max-sandboxes', '64', '--data-dir', dataDir, '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((ok, fail) => {
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) ok(m[1]);
    });
    proc.once('exit', () => fail(new Error(`grove serve exited: ${err.slice(-2000)}`)));
  });
  const client = new GroveClient({ baseUrl: url, apiKey: key });
  const missing = { ts: 0, py: 0 };

  async function tsBlock(mode: Mode): Promise<number> {
    const ids: string[] = [];
    for (let i = 0; i < ENVS; i++) ids.push((await client.createSandbox(body)).sandbox_id);
    for (const id of ids) await client.waitSandbox(id, 120);
    const t0 = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        for (let i = 0; i < STEPS; i++) {
          // A capture or a step that failed (5xx) on a loaded machine is counted, not fatal (as on the Python side).
          try {
            if (mode === 'binary') {
              if (!(await client.stepBinary(id, { action: action(i) })).image) missing.ts++;
            } else if (!(await client.step(id, { action: action(i) })).observation.screenshot?.base64) missing.ts++;
          } catch (err) {
            if (!(err instanceof GroveApiError) || err.status < 500) throw err;
            missing.ts++;
          }
        }
      }),
    );
    const s = (performance.now() - t0) / 1000;
    await Promise.all(ids.map((id) => client.deleteSandbox(id)));
    return s;
  }

  async function pyBlock(mode: Mode, side: 'threads' | 'async'): Promise<number> {
    const { stdout } = await run('python3', [path.join(ROOT, 'bench/python_steps.py'), '--url', url, '--key', key, '--body', JSON.stringify(body),
      '--envs', String(ENVS), '--steps', String(STEPS), '--screenshot', mode, '--client', side], { maxBuffer: 1 << 20 });
    const r = JSON.parse(stdout.trim().split('\n').at(-1) as string) as { seconds: number; missing_screenshots: number };
    missing.py += r.missing_screenshots;
    return r.seconds;
  }

  const times: Record<Mode, Record<Side, number[]>> = {
    json: { ts: [], 'py-threads': [], 'py-async': [] },
    binary: { ts: [], 'py-threads': [], 'py-async': [] },
  };
  const sides: Side[] = ['ts', 'py-threads', 'py-async'];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['json', 'binary'] as Mode[]) {
        const order = sides.map((_, k) => sides[(k + round) % sides.length]);
        for (const side of order) {
          await new Promise((ok) => setTimeout(ok, 500)); // let the previous block's leftovers finish
          const s = side === 'ts' ? await tsBlock(mode) : await pyBlock(mode, side === 'py-threads' ? 'threads' : 'async');
          times[mode][side].push(s);
          process.stderr.write(`round ${round + 1} ${mode.padEnd(6)} ${side.padEnd(10)} ${((ENVS * STEPS) / s).toFixed(1)} steps/s\n`);
        }
      }
    }
  } finally {
    proc.kill('SIGTERM');
    await new Promise((ok) => proc.once('exit', ok));
    rmSync(dataDir, { recursive: true, force: true });
    fixture.close();
  }

  const rate = (ts: number[]) => (ENVS * STEPS * ts.length) / ts.reduce((a, b) => a + b, 0);
  const out: Record<string, unknown> = { envs: ENVS, steps_per_env: STEPS, rounds: ROUNDS, machine: `${os.cpus().length} cores`, load_avg_1m: os.loadavg()[0],
    missing_screenshots: missing };
  const lines: string[] = [];
  for (const mode of ['json', 'binary'] as Mode[]) {
    const ts = rate(times[mode].ts);
    const th = rate(times[mode]['py-threads']);
    const as = rate(times[mode]['py-async']);
    out[mode] = { ts_steps_per_s: +ts.toFixed(2), py_threads_steps_per_s: +th.toFixed(2), py_async_steps_per_s: +as.toFixed(2),
      ratio_py_threads_vs_ts: +(th / ts).toFixed(3), ratio_py_async_vs_ts: +(as / ts).toFixed(3) };
    lines.push(`${mode.padEnd(6)}: TypeScript ${ts.toFixed(1)} steps/s | Python threads ${th.toFixed(1)} (×${(th / ts).toFixed(2)}) | Python asyncio ${as.toFixed(1)} (×${(as / ts).toFixed(2)})`);
  }
  process.stdout.write(`bench:python — ${ENVS} concurrent envs × ${STEPS} steps, ${ROUNDS} round(s); ratio = Python/TypeScript steps/s (target ≥ 0.9)\n${lines.join('\n')}\n` +
    `(load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores; steps whose capture or step failed: TypeScript ${missing.ts}, Python ${missing.py})\n`);
  if (!QUICK) writeFileSync(path.join(ROOT, 'bench/results/python.json'), JSON.stringify(out, null, 2) + '\n');
}

await main();
