// What relaying through the orchestrator costs (kubernetes backend): one real pod-isolated shell worker (`grove
// worker` under the simulated kubelet, uid 10001) and an orchestrator (buildApp + the kubernetes backend), both on
// loopback. Each figure is measured twice in the same run — through the orchestrator and straight to the worker
// (its pod IP and token, the baseline) — and printed as a ratio: a workspace file streamed through (MB/s), exec
// `true` round trips, and PTY echo round trips (a keystroke to its echo, both WebSockets). Loopback hides the
// network a cluster adds; the ratios show the relay's own cost. Results: bench/results/k8s-relay.json.
//
//   npm run bench:k8s-relay   [--n 200] [--mb 64]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { GroveClient } from '../client/index.ts';
import { KubernetesBackend } from '../k8s/backend.ts';
import { parseK8sConfig } from '../k8s/config.ts';
import { kubernetesEnvironments } from '../k8s/environments.ts';
import { L } from '../k8s/labels.ts';
import { KubeSim } from '../k8s/sim/api-server.ts';
import { ProcessKubelet } from '../k8s/sim/kubelets.ts';
import { workerToken } from '../k8s/token.ts';
import { loadConfig } from '../sandbox/config.ts';
import { buildApp } from '../server/app.ts';

const { values } = parseArgs({ options: { n: { type: 'string' }, mb: { type: 'string' } } });
const N = Number(values.n ?? 200);
const MB = Number(values.mb ?? 64);
const SECRET = 'bench-relay-token-secret-0123456789';
const say = (s: string) => process.stdout.write(`${s}\n`);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const r2 = (x: number) => Math.round(x * 100) / 100;

async function timeMany(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(10, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Seconds to fetch a body whole (read chunk by chunk, never kept). */
async function fetchSeconds(url: string, headers: Record<string, string>): Promise<{ s: number; bytes: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  if (!res.ok || !res.body) throw new Error(`GET ${url}: ${res.status}`);
  let bytes = 0;
  for await (const c of res.body) bytes += (c as Uint8Array).byteLength;
  return { s: (performance.now() - t0) / 1000, bytes };
}

/** PTY echo round trips: one keystroke written, timed until its echo comes back. */
async function ptyRoundTrips(url: string, headers: Record<string, string>, n: number): Promise<number[]> {
  const ws = new WebSocket(url, { headers });
  let got = '';
  let waiter: (() => void) | null = null;
  ws.on('message', (raw) => {
    const f = JSON.parse(raw.toString()) as { type: string; data?: string };
    if (f.type === 'stdout') got += Buffer.from(f.data!, 'base64').toString('utf8');
    if (f.type === 'ready' || f.type === 'stdout') waiter?.();
  });
  const next = () => new Promise<void>((r) => (waiter = r));
  await new Promise<void>((r, j) => {
    ws.once('open', () => r());
    ws.once('error', j);
  });
  ws.send(JSON.stringify({ type: 'init', cmd: ['cat'], rows: 24, cols: 80 }));
  await next();
  const times: number[] = [];
  for (let i = 0; i < n + 10; i++) {
    const ch = String.fromCharCode(97 + (i % 26));
    got = '';
    const t0 = performance.now();
    ws.send(JSON.stringify({ type: 'stdin', data: Buffer.from(ch).toString('base64') }));
    while (!got.includes(ch)) await next();
    if (i >= 10) times.push(performance.now() - t0);
  }
  ws.close();
  return times;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-relay-'));
const kubelet = new ProcessKubelet(process.env);
const sim = new KubeSim(kubelet);
kubelet.sim = sim;
await sim.start();
const config = loadConfig({ env: {}, flags: { authDisabled: true, dataDir: dir, logLevel: 'warn' } });
const backend = new KubernetesBackend({
  config: parseK8sConfig({ workerPort: 20000 + Math.floor(Math.random() * 1000), templates: { shell: { type: 'shell', placement: 'pod' } } }),
  kubeConfig: sim.kubeConfig(),
  replicaId: 'bench-relay',
  tokenSecret: SECRET,
  defaultTtlSeconds: 3600,
});
await backend.start();
const app = await buildApp({ config, environments: kubernetesEnvironments(backend) });
const base = await app.listen({ host: '127.0.0.1', port: 0 });
const results: Record<string, unknown> = { date: new Date().toISOString(), cores: os.cpus().length, load_avg_1m: r2(os.loadavg()[0]!), n: N, file_mb: MB };

try {
  say(`Grove kubernetes relay benchmark (${os.cpus().length} cores, load average ${r2(os.loadavg()[0]!)}; one pod-isolated shell worker; noisy on a loaded machine)`);
  const orch = new GroveClient({ baseUrl: base });
  const sb = await orch.createAndWait({ type: 'shell' }, 120);
  const pod = sim.listPodObjects().find((p) => p.metadata.labels[L.sandbox] === sb.sandbox_id)!;
  const token = workerToken(SECRET, pod.metadata.name);
  const workerUrl = `http://${pod.status.podIP}:${pod.spec.containers[0].ports[0].containerPort}`;
  const direct = new GroveClient({ baseUrl: workerUrl, apiKey: token });
  const wid = (await direct.listSandboxes())[0]!.sandbox_id;

  await orch.exec(sb.sandbox_id, { command: `head -c ${MB * 1024 * 1024} /dev/urandom > big.bin` });
  const through: number[] = [];
  const straight: number[] = [];
  for (let i = 0; i < 3; i++) {
    straight.push((await fetchSeconds(`${workerUrl}/sandboxes/${wid}/files?path=/workspace/big.bin`, { 'x-api-key': token })).s);
    through.push((await fetchSeconds(`${base}/sandboxes/${sb.sandbox_id}/files?path=/workspace/big.bin`, {})).s);
  }
  const best = (xs: number[]) => Math.min(...xs);
  Object.assign(results, {
    file_direct_mb_s: r2(MB / best(straight)),
    file_relayed_mb_s: r2(MB / best(through)),
    file_relayed_vs_direct: r2(best(straight) / best(through)),
  });
  say(`file ${MB} MiB      direct ${results.file_direct_mb_s} MB/s   relayed ${results.file_relayed_mb_s} MB/s   relayed/direct throughput ${results.file_relayed_vs_direct}  (best of 3)`);

  const execDirect = await timeMany(N, () => direct.exec(wid, { command: ['true'] }));
  const execRelay = await timeMany(N, () => orch.exec(sb.sandbox_id, { command: ['true'] }));
  Object.assign(results, {
    exec_true_direct_p50_ms: r2(pct(execDirect, 50)),
    exec_true_relayed_p50_ms: r2(pct(execRelay, 50)),
    exec_true_relayed_p99_ms: r2(pct(execRelay, 99)),
    exec_true_relayed_vs_direct_p50: r2(pct(execRelay, 50) / pct(execDirect, 50)),
  });
  say(`exec true         direct p50 ${results.exec_true_direct_p50_ms} ms   relayed p50 ${results.exec_true_relayed_p50_ms} ms (p99 ${results.exec_true_relayed_p99_ms})   relayed/direct ${results.exec_true_relayed_vs_direct_p50}`);

  const ptyDirect = await ptyRoundTrips(`${workerUrl.replace('http', 'ws')}/sandboxes/${wid}/pty`, { 'x-api-key': token }, N);
  const ptyRelay = await ptyRoundTrips(`${base.replace('http', 'ws')}/sandboxes/${sb.sandbox_id}/pty`, {}, N);
  Object.assign(results, {
    pty_echo_direct_p50_ms: r2(pct(ptyDirect, 50)),
    pty_echo_relayed_p50_ms: r2(pct(ptyRelay, 50)),
    pty_echo_relayed_p99_ms: r2(pct(ptyRelay, 99)),
    pty_echo_relayed_vs_direct_p50: r2(pct(ptyRelay, 50) / pct(ptyDirect, 50)),
  });
  say(`pty echo          direct p50 ${results.pty_echo_direct_p50_ms} ms   relayed p50 ${results.pty_echo_relayed_p50_ms} ms (p99 ${results.pty_echo_relayed_p99_ms})   relayed/direct ${results.pty_echo_relayed_vs_direct_p50}`);
  await orch.deleteSandbox(sb.sandbox_id);
  direct.close();
  orch.close();
} finally {
  await app.close();
  await sim.close();
  kubelet.killAll();
  rmSync(dir, { recursive: true, force: true });
}
const out = path.join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'k8s-relay.json'), `${JSON.stringify(results, null, 2)}\n`);
say(`results: bench/results/k8s-relay.json`);
