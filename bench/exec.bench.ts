// Shell-sandbox benchmark (issue 12): exec round trip through the REST API for `true` and `echo`, create → ready,
// and 100 parallel sandboxes create → exec → delete. Baselines measured in the same run: the same command
// spawned directly on the host (no sandbox, no HTTP), and a plain HTTP round trip to the same server (GET /health).
// Orchard Env publishes a 0.28 s average exec for comparison (microsoft/Orchard README); the target here is
// p50 ≤ 15 ms. Results go to bench/results/exec.json.
//
//   npm run bench:exec            (--n N execs per command, default 300; --parallel P, default 100)
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { GroveClient } from '../client/index.ts';
import { loadConfig } from '../sandbox/config.ts';
import { buildApp } from '../server/app.ts';
import { shellEnvironment } from '../server/server.ts';

const { values } = parseArgs({ options: { n: { type: 'string' }, parallel: { type: 'string' } } });
const N = Number(values.n ?? 300);
const PARALLEL = Number(values.parallel ?? 100);
const say = (s: string) => process.stdout.write(`${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const r2 = (x: number) => Math.round(x * 100) / 100;

async function timeMany(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(5, n); i++) await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

function hostSpawn(argv: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.resume();
    c.stderr.resume();
    c.once('error', reject);
    c.once('close', () => resolve());
  });
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-exec-'));
const config = loadConfig({ env: {}, flags: { apiKey: 'bench-exec-key-1234', dataDir, maxSandboxes: PARALLEL + 10, logLevel: 'warn' } });
const app = await buildApp({ config, environments: async (log) => ({ shell: await shellEnvironment(config, log) }) });
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address() as { port: number };
const client = new GroveClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'bench-exec-key-1234' });
const results: Record<string, unknown> = { date: new Date().toISOString(), cores: os.cpus().length, n: N, parallel: PARALLEL };

try {
  say(`Grove shell exec benchmark (${os.cpus().length} cores, ${N} execs per command; loaded machines make this noisy)`);
  const sb = await client.createAndWait({ type: 'shell' });
  const id = sb.sandbox_id;
  const enforced = sb.shell?.limits.enforced_by;
  say(`sandbox: rootfs ${sb.shell?.rootfs}, network ${sb.shell?.network}, limits by ${JSON.stringify(enforced)}`);

  // Interleaved blocks (baselines and Grove alternate), so a load change on a shared machine hits all alike.
  const health: number[] = [];
  const hostTrue: number[] = [];
  const hostEcho: number[] = [];
  const execs: Record<string, number[]> = { true: [], echo: [] };
  const grove = (name: string, command: string[]) => async () => {
    const r = await client.exec(id, { command });
    if (r.exit_code !== 0) throw new Error(`exec ${name} failed: ${JSON.stringify(r)}`);
  };
  const ROUNDS = 5;
  for (let round = 0; round < ROUNDS; round++) {
    const n = Math.ceil(N / ROUNDS);
    health.push(...(await timeMany(n, () => client.health())));
    hostTrue.push(...(await timeMany(n, () => hostSpawn(['/bin/true']))));
    execs.true.push(...(await timeMany(n, grove('true', ['true']))));
    hostEcho.push(...(await timeMany(n, () => hostSpawn(['/bin/echo', 'hello']))));
    execs.echo.push(...(await timeMany(n, grove('echo', ['echo', 'hello']))));
  }
  const baseP50 = pct(health, 50);
  say(`baseline  HTTP GET /health      p50 ${baseP50.toFixed(2)} ms   p99 ${pct(health, 99).toFixed(2)} ms`);
  say(`baseline  host spawn true       p50 ${pct(hostTrue, 50).toFixed(2)} ms   p99 ${pct(hostTrue, 99).toFixed(2)} ms`);
  say(`baseline  host spawn echo       p50 ${pct(hostEcho, 50).toFixed(2)} ms   p99 ${pct(hostEcho, 99).toFixed(2)} ms`);
  for (const [name, lat] of Object.entries(execs)) {
    const host = name === 'true' ? hostTrue : hostEcho;
    const p50 = pct(lat, 50);
    const p99 = pct(lat, 99);
    results[`exec_${name}_p50_ms`] = r2(p50);
    results[`exec_${name}_p99_ms`] = r2(p99);
    results[`exec_${name}_p50_vs_host_spawn`] = r2(p50 / pct(host, 50));
    say(`grove     exec ${name.padEnd(5)} via API    p50 ${p50.toFixed(2)} ms   p99 ${p99.toFixed(2)} ms   ratio to host spawn ${r2(p50 / pct(host, 50))}  (target p50 ≤ 15 ms; Orchard Env publishes 280 ms avg)`);
  }
  results.http_health_p50_ms = r2(baseP50);
  results.host_spawn_true_p50_ms = r2(pct(hostTrue, 50));
  await client.deleteSandbox(id);

  // create → ready, sequential
  const ready: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const s = await client.createAndWait({ type: 'shell' });
    ready.push(performance.now() - t0);
    await client.deleteSandbox(s.sandbox_id);
  }
  results.create_ready_p50_ms = r2(pct(ready, 50));
  results.create_ready_p99_ms = r2(pct(ready, 99));
  say(`grove     create → ready        p50 ${pct(ready, 50).toFixed(1)} ms   p99 ${pct(ready, 99).toFixed(1)} ms  (20 sequential)`);

  // PARALLEL sandboxes at once: create → exec → delete
  const t0 = performance.now();
  const outcomes = await Promise.allSettled(
    Array.from({ length: PARALLEL }, async (_, i) => {
      const s = await client.createAndWait({ type: 'shell' }, 120);
      try {
        const r = await client.exec(s.sandbox_id, { command: ['sh', '-c', `echo sandbox-${i}`] });
        if (r.stdout !== `sandbox-${i}\n`) throw new Error(`wrong output ${JSON.stringify(r.stdout)}`);
      } finally {
        await client.deleteSandbox(s.sandbox_id);
      }
    }),
  );
  const wall = performance.now() - t0;
  const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
  const firstError = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')?.reason;
  results.parallel_success_rate = ok / PARALLEL;
  results.parallel_wall_s = r2(wall / 1000);
  say(`grove     ${PARALLEL} parallel create → exec → delete: ${ok}/${PARALLEL} succeeded in ${(wall / 1000).toFixed(2)} s${firstError ? ` (first error: ${firstError})` : ''}`);
  const left = (await client.listSandboxes()).length;
  say(`sandboxes left afterwards: ${left}`);
  results.sandboxes_left = left;
} finally {
  client.close();
  await app.close();
}

const out = path.join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'exec.json'), `${JSON.stringify(results, null, 2)}\n`);
say(`saved bench/results/exec.json`);
