// End to end through the kubernetes backend: real orchestrator processes (`grove serve --backend kubernetes`,
// kubeconfig file → the simulated API server) and real `grove worker` processes that the simulated kubelet starts
// on per-pod loopback addresses. Browser and shell flows through the unchanged REST API and client; a killed
// worker; two replicas sharing state through the pods' records (a sandbox created on one is stepped, heartbeated,
// expired and deleted through the other; placement from both never exceeds maxPerWorker); an orchestrator
// SIGKILLed mid-flight whose sandboxes the other replica serves on and whose half-made sandbox it reconciles.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GroveApiError, GroveClient } from '../../client/index.ts';
import { L } from '../../k8s/labels.ts';
import { liveCount, podRecords } from '../../k8s/records.ts';
import { ProcessKubelet } from '../../k8s/sim/kubelets.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { until } from './harness.ts';
import { simKubeconfig } from './orchestrator-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'k8s-e2e-api-key-0123456789';
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-e2e-'));
const kubelet = new ProcessKubelet(process.env);
const sim = new KubeSim(kubelet);
kubelet.sim = sim;
const orchestrators: ChildProcess[] = [];
let site: http.Server;
let siteUrl = '';

const PAGE = `<!doctype html><title>start</title>
<button style="position:absolute;left:0;top:0;width:400px;height:300px" onclick="document.title='clicked'">go</button>`;

beforeAll(async () => {
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  await sim.start();
  writeFileSync(path.join(dir, 'kubeconfig'), simKubeconfig(sim));
  writeFileSync(
    path.join(dir, 'k8s.json'),
    JSON.stringify({
      kubeconfig: path.join(dir, 'kubeconfig'),
      workerPort: 18000 + Math.floor(Math.random() * 1000),
      // Long enough that a loaded machine's stalls do not pass the leadership around mid-test.
      leaseDurationSeconds: 6,
      reconcileIntervalSeconds: 1,
      // A loaded 2-core machine (a full suite beside other work) can take a minute to start a worker process.
      readyTimeoutSeconds: 150,
      templates: {
        browser: { type: 'browser', placement: 'shared', maxPerWorker: 4, warmPool: 1 },
        shell: { type: 'shell', placement: 'pod', warmPool: 0 },
        duo: { type: 'browser', placement: 'shared', maxPerWorker: 2, warmPool: 0 },
      },
    }),
  );
});

afterAll(async () => {
  for (const p of orchestrators) if (p.exitCode === null) p.kill('SIGKILL');
  await sim.close();
  kubelet.killAll();
  await new Promise((r) => site.close(r));
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Starts `grove serve --backend kubernetes`; resolves with a client once it listens. */
async function startOrchestrator(replica: string): Promise<{ proc: ChildProcess; client: GroveClient; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(dir, `orch-${replica}-`));
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'cli/main.ts'), 'serve', '--backend', 'kubernetes', '--k8s-config', path.join(dir, 'k8s.json'), '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, GROVE_API_KEY: KEY, GROVE_K8S_TOKEN_SECRET: 'e2e-worker-token-secret-0123456789', GROVE_K8S_REPLICA_ID: replica, GROVE_DATA_DIR: dataDir, GROVE_LOG_LEVEL: 'warn', GROVE_CONFIG: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  orchestrators.push(proc);
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      stderr += String(d);
      const m = stderr.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]!);
    });
    proc.on('exit', (code) => reject(new Error(`orchestrator exited ${code}: ${stderr}`)));
  });
  return { proc, client: new GroveClient({ baseUrl: url, apiKey: KEY }), dataDir };
}

const workerPods = () => sim.listPodObjects();

// A loaded machine needs more than the slow project's 120 s per test (worker starts of up to readyTimeoutSeconds).
describe('kubernetes backend end to end', { timeout: 400_000 }, () => {
  let orch: Awaited<ReturnType<typeof startOrchestrator>>;

  test('browser flow: warm worker claimed, real Chromium on the worker, recording on the orchestrator', async () => {
    orch = await startOrchestrator('orch-1');
    await until(() => workerPods().some((p) => p.metadata.labels[L.state] === 'warm' && p.status.phase === 'Running'), 'a warm browser worker', 60_000);
    const c = orch.client;
    const sb = await c.createAndWait({ type: 'browser', start_url: siteUrl, network: { allow: [siteUrl.slice(7, -1)] }, record: true }, 150);
    expect(sb.status).toBe('ready');
    const claimed = workerPods().filter((p) => p.metadata.labels[L.state] === 'claimed');
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.metadata.labels[L.owner]).toBe('orch-1');
    const obs = await c.observation(sb.sandbox_id);
    expect(obs.title).toBe('start');
    const step = await c.step(sb.sandbox_id, { action: { action: 'click', x: 100, y: 100, space: 'css_px' } });
    expect(step.observation.title).toBe('clicked');
    expect(step.observation.screenshot?.mime).toBe('image/jpeg');
    const shot = await c.screenshot(sb.sandbox_id);
    expect([...shot.bytes.slice(0, 2)]).toEqual([0xff, 0xd8]);
    const metrics = await c.metrics();
    expect(metrics).toMatch(/k8s_warm_hits\S* 1/);
    await c.deleteSandbox(sb.sandbox_id);
    // Recorded where the model output is known: the orchestrator's recordings directory.
    const steps = readFileSync(path.join(orch.dataDir, 'recordings', sb.sandbox_id, 'steps.jsonl'), 'utf8').trim().split('\n');
    expect(steps).toHaveLength(1);
    expect(existsSync(path.join(orch.dataDir, 'recordings', sb.sandbox_id, 'episode.json'))).toBe(true);
    // The empty shared worker is deleted; the pool refills to one warm worker.
    await until(() => workerPods().every((p) => p.metadata.labels[L.state] === 'warm') && workerPods().length === 1, 'pool back to one warm worker', 60_000);
    expect(sim.invalid).toEqual([]);
  });

  test('shell flow: one pod per sandbox, exec and files on the worker', async () => {
    const c = orch.client;
    const sb = await c.createAndWait({ type: 'shell' }, 150);
    const pod = workerPods().find((p) => p.metadata.labels[L.sandbox] === sb.sandbox_id);
    expect(pod?.metadata.labels[L.template]).toBe('shell');
    const r = await c.exec(sb.sandbox_id, { command: 'echo hello from $(pwd)' });
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe('hello from /workspace\n');
    await c.uploadFile(sb.sandbox_id, '/workspace/a.txt', 'payload');
    expect(new TextDecoder().decode(await c.downloadFile(sb.sandbox_id, '/workspace/a.txt'))).toBe('payload');
    await c.deleteSandbox(sb.sandbox_id);
    await until(() => !workerPods().some((p) => p.metadata.name === pod!.metadata.name), 'shell pod deleted', 30_000);
  });

  test('a killed worker: the sandbox answers 410 sandbox_closed, the failed pod is reconciled away', async () => {
    const c = orch.client;
    const sb = await c.createAndWait({ type: 'shell' }, 150);
    const pod = workerPods().find((p) => p.metadata.labels[L.sandbox] === sb.sandbox_id)!;
    kubelet.kill(pod.metadata.name);
    const err = await until(
      async () => c.exec(sb.sandbox_id, { command: 'true' }).then(() => null, (e: unknown) => (e instanceof GroveApiError && e.status === 410 ? e : null)),
      'the sandbox to be reported lost',
      30_000,
    );
    expect(err.code).toBe('sandbox_closed');
    await c.deleteSandbox(sb.sandbox_id);
    await until(() => !workerPods().some((p) => p.metadata.name === pod.metadata.name), 'failed pod deleted', 30_000);
  });

  let b: Awaited<ReturnType<typeof startOrchestrator>>;

  test('two replicas: a browser sandbox created on A is stepped, screenshotted and deleted on B', async () => {
    b = await startOrchestrator('orch-2');
    const sb = await orch.client.createAndWait({ type: 'browser', start_url: siteUrl, network: { allow: [siteUrl.slice(7, -1)] } }, 150);
    expect(sb.status).toBe('ready');
    const step = await b.client.step(sb.sandbox_id, { action: { action: 'click', x: 100, y: 100, space: 'css_px' } });
    expect(step.observation.title).toBe('clicked');
    const shot = await b.client.screenshot(sb.sandbox_id);
    expect([...shot.bytes.slice(0, 2)]).toEqual([0xff, 0xd8]);
    // A sees what B did (the same page on the same worker).
    expect((await orch.client.observation(sb.sandbox_id)).title).toBe('clicked');
    expect((await b.client.listSandboxes()).map((x) => x.sandbox_id)).toContain(sb.sandbox_id);
    await b.client.deleteSandbox(sb.sandbox_id);
    const err = await until(
      async () => orch.client.observation(sb.sandbox_id).then(() => null, (e: unknown) => (e instanceof GroveApiError && e.status === 410 ? e : null)),
      'A to see it closed',
      30_000,
    );
    expect(err.code).toBe('sandbox_closed');
  });

  test('created on one replica, heartbeat on the other, expired by that other one as the reconciling leader', async () => {
    // A leads unless a stall of a loaded machine let its Lease lapse: the roles follow whoever leads.
    const aLeads = /k8s_leader\S* 1/.test(await orch.client.metrics());
    const [maker, leader] = aLeads ? [b, orch] : [orch, b];
    const sb = await maker.client.createAndWait({ type: 'browser', start_url: siteUrl, network: { allow: [siteUrl.slice(7, -1)] }, idle_timeout_seconds: 3 }, 150);
    const recordOf = () => workerPods().map((p) => podRecords(p as never).get(sb.sandbox_id)).find(Boolean);
    const created = Date.parse(recordOf()!.created);
    await until(() => Date.now() > created + 1500, 'half the idle timeout');
    const beat = Date.parse((await leader.client.heartbeat(sb.sandbox_id)).last_used_at);
    await until(() => Date.parse(recordOf()!.seen) >= beat, 'the heartbeat recorded on the pod');
    // Polled by its info (which is no use of the sandbox: an observation would keep it alive on the worker).
    await until(async () => (await maker.client.getSandbox(sb.sandbox_id)).status === 'closed', 'the sandbox expired', 60_000);
    const err = await maker.client.observation(sb.sandbox_id).then(() => null, (e: unknown) => e as GroveApiError);
    expect(err?.status).toBe(410);
    expect(err?.message).toContain('expired_idle');
    // Expired once, by the replica leading then (only a leader reconciles), and only after the idle timeout counted
    // from the other replica's heartbeat.
    const expired = async (o: typeof b) => Number((await o.client.metrics()).match(/k8s_sandboxes_expired\S* (\d+)/)?.[1] ?? 0);
    await until(async () => (await expired(leader)) + (await expired(maker)) === 1, 'counted by the leader');
    const closed = recordOf();
    if (closed) expect(Date.parse(closed.closed!)).toBeGreaterThanOrEqual(beat + 3000);
  });

  test('placement from both replicas at once never exceeds maxPerWorker on a shared worker', async () => {
    const spec = { type: 'browser' as const, labels: { template: 'duo' } };
    const made = await Promise.all([orch.client, b.client, orch.client, b.client].map((c) => c.createAndWait(spec, 90)));
    expect(made.map((x) => x.status)).toEqual(['ready', 'ready', 'ready', 'ready']);
    const duo = workerPods().filter((p) => p.metadata.labels[L.template] === 'duo');
    expect(duo.length).toBeGreaterThanOrEqual(2);
    for (const p of duo) {
      expect(liveCount(p as never)).toBeLessThanOrEqual(2);
      // The worker's own count agrees.
      const health = await (await fetch(`http://${p.status.podIP}:${p.spec.containers[0].ports[0].containerPort}/health`)).json();
      expect(health.sandboxes).toBeLessThanOrEqual(2);
    }
    expect(duo.reduce((n, p) => n + liveCount(p as never), 0)).toBe(4);
    await Promise.all(made.map((x, i) => (i % 2 ? orch.client : b.client).deleteSandbox(x.sandbox_id)));
    await until(() => !workerPods().some((p) => p.metadata.labels[L.template] === 'duo'), 'duo workers deleted', 120_000);
  });

  test('A SIGKILLed mid-flight: B serves the sandboxes A created, and reconciles the one A was still creating', async () => {
    const kept = await orch.client.createAndWait({ type: 'shell' }, 150);
    const page = await orch.client.createAndWait({ type: 'browser', start_url: siteUrl, network: { allow: [siteUrl.slice(7, -1)] } }, 150);
    const half = await orch.client.createSandbox({ type: 'shell' });
    const orphan = await until(() => workerPods().find((p) => p.metadata.labels[L.sandbox] === half.sandbox_id), 'the half-made pod', 30_000);
    orch.proc.kill('SIGKILL');
    await new Promise((r) => orch.proc.once('exit', r));
    // B takes the leader Lease once A's lapses; the record A never finished names a replica that is gone.
    await until(() => !workerPods().some((p) => p.metadata.name === orphan.metadata.name), 'orphan deleted', 120_000);
    expect(kubelet.procs.has(orphan.metadata.name)).toBe(false);
    const r = await b.client.exec(kept.sandbox_id, { command: 'echo still here' });
    expect(r.stdout).toBe('still here\n');
    expect((await b.client.observation(page.sandbox_id)).title).toBe('start');
    // The pool is one warm browser worker again: an unreserved warm pod belongs to the pool whoever made it; one A
    // had reserved (k8s/warm-share.ts) is deleted by the leader (A may have died mid-claim) and replaced.
    await until(() => workerPods().filter((p) => p.metadata.labels[L.state] === 'warm' && !p.metadata.deletionTimestamp).length === 1, 'one warm worker', 120_000);
    expect(workerPods().filter((p) => p.metadata.labels[L.state] === 'warm' && p.metadata.labels[L.owner] === 'orch-1' && !p.metadata.deletionTimestamp)).toHaveLength(0);
    // B is the last replica: a graceful stop closes what is left.
    b.proc.kill('SIGTERM');
    await new Promise((r) => b.proc.once('exit', r));
    expect(b.proc.exitCode).toBe(0);
    await until(() => workerPods().every((p) => p.metadata.labels[L.state] === 'warm'), 'claimed pods deleted', 30_000);
    expect(sim.invalid).toEqual([]);
  });
});
