// A replica killed mid-pairing (k8s/paired-shell.ts, k8s/paired-orphans.ts): a real orchestrator process
// (`grove serve --backend kubernetes`) pairs a shell with a claw sandbox and is SIGKILLed as its PATCH of the pod's
// ephemeralcontainers reaches the simulated API server, either before it is served (the PATCH never lands) or as it
// is served (it lands, its answer never arrives). The leader (an orchestrator in this process) must leave nothing
// running: pairing writes the shell's record first, the leader closes a record of a replica that is gone, and ends a
// shell container that runs with no live record. Pods run as the real worker app in this process (app-kubelet.ts).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { podRecords } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { AppKubelet } from './app-kubelet.ts';
import { closeCluster, startOrchestrator, TOKEN_SECRET, until, type Orchestrator } from './harness.ts';
import { spawnOrchestrator, writeSimConfig } from './orchestrator-process.ts';

type Obj = Record<string, any>;
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-pairing-crash-'));
const kubelet = new AppKubelet(dir);
const sim = new KubeSim(kubelet);
const procs: ChildProcess[] = [];
let orch: Orchestrator;
const CONFIG = {
  workerPort: 22000 + Math.floor(Math.random() * 1000),
  leaseDurationSeconds: 2,
  reconcileIntervalSeconds: 1,
  readyTimeoutSeconds: 30,
  templates: { browser: { type: 'browser' as const, placement: 'shared' as const, maxPerWorker: 4, warmPool: 0 }, shell: { type: 'shell' as const, placement: 'pod' as const, warmPool: 0 } },
};
const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => orch.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Obj }) });
const podNamed = (name: string) => sim.listPodObjects().find((p) => p.metadata.name === name)!;

async function ready(body: Obj): Promise<Obj> {
  const created = await call('POST', '/sandboxes', body);
  expect(created.statusCode, created.body).toBe(201);
  const info = (await call('GET', `/sandboxes/${created.json().sandbox_id}/wait?timeout=20`)).json();
  expect(info.status, JSON.stringify(info)).toBe('ready');
  return info;
}

/** Another replica (a process) pairs a shell with `clawId` and is SIGKILLed as its PATCH of the pod's ephemeral
 * containers arrives: the PATCH is then served (`landed`) or refused unserved. Resolves with the shell's id. */
async function pairThenDie(clawId: string, replica: string, landed: boolean): Promise<string> {
  const k8sConfig = writeSimConfig(sim, mkdtempSync(path.join(dir, `${replica}-`)), CONFIG);
  const c = await spawnOrchestrator({ dir, k8sConfig, replica, apiKey: 'pairing-crash-key-0123456789', tokenSecret: TOKEN_SECRET }, procs);
  const dead = new Promise((r) => c.proc.once('exit', r));
  sim.intercept = async (method, url) => {
    if (method !== 'PATCH' || !url.endsWith('/ephemeralcontainers')) return;
    sim.intercept = null;
    c.proc.kill('SIGKILL');
    await dead;
    if (!landed) throw new Error(`${replica} died before its PATCH`);
  };
  const r = await fetch(`${c.url}/sandboxes`, { method: 'POST', headers: { 'x-api-key': 'pairing-crash-key-0123456789', 'content-type': 'application/json' }, body: JSON.stringify({ type: 'shell', claw_sandbox: clawId }) });
  const body = (await r.json()) as Obj;
  expect(r.status, JSON.stringify(body)).toBe(201);
  await dead;
  return body.sandbox_id as string;
}

beforeAll(async () => {
  await sim.start();
  orch = await startOrchestrator(sim, CONFIG); // the leader: it reconciles what the killed replicas left
  await until(() => orch.backend.stats().k8s_leader === 1, 'orch-a leads');
}, 30_000);

afterAll(async () => {
  sim.intercept = null;
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await closeCluster([orch].filter(Boolean), sim);
  await kubelet.closeAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('a replica killed mid-pairing leaves no shell running', () => {
  test('killed as its PATCH lands, the container slow to start: its record (written first) is closed, then the container is ended once it runs', async () => {
    const claw = await ready({ type: 'claw', world_seed: 11, apps: ['todo'] });
    const name = sim.listPodObjects().find((p) => podRecords(p as never).has(claw.sandbox_id))!.metadata.name as string;
    let start!: () => void;
    kubelet.gate = new Promise((r) => (start = r));
    const id = await pairThenDie(claw.sandbox_id, 'orch-c', true);
    const eph = (await until(() => podNamed(name).spec.ephemeralContainers?.[0], 'the container added')).name as string;
    // Its record was on the pod before the container: a `creating` record of a replica that is gone, closed.
    const expired = orch.backend.stats().k8s_sandboxes_expired as number;
    await until(() => podRecords(podNamed(name) as never).get(id)?.state === 'closed', "the dead replica's record closed", 30_000);
    // The leader's pass that closed it is over (it tried to end the shell, whose worker was not serving yet).
    await until(() => (orch.backend.stats().k8s_sandboxes_expired as number) > expired, 'the expiry pass done');
    // Now the container runs, with no live record naming it: the leader ends its worker.
    start();
    kubelet.gate = null;
    await until(() => kubelet.exited.includes(`${name}/${eph}`), 'the orphaned shell worker ended', 30_000);
    await until(() => podNamed(name).status.ephemeralContainerStatuses?.[0]?.state?.terminated, 'the container terminated');
    expect([...kubelet.apps.keys()].filter((k) => k.startsWith(`${name}/`))).toEqual([]);
    // The claw sandbox lives on, and pairs again on the next port (the ended container keeps its own).
    expect((await call('POST', `/sandboxes/${claw.sandbox_id}/claw/call`, { tool: 'todo_list', arguments: {} })).json().status).toBe(200);
    const again = await ready({ type: 'shell', claw_sandbox: claw.sandbox_id });
    expect(podRecords(podNamed(name) as never).get(again.sandbox_id)!.paired!.port).toBe(CONFIG.workerPort + 2);
    for (const sb of [again.sandbox_id, claw.sandbox_id]) expect((await call('DELETE', `/sandboxes/${sb}`)).statusCode).toBe(204);
    await until(() => !sim.listPodObjects().some((p) => p.metadata.name === name), 'the claw pod deleted', 30_000);
  }, 120_000);

  test('killed after writing the record, before its PATCH: no container, the record closed, its slot free again', async () => {
    const claw = await ready({ type: 'claw', world_seed: 12, apps: ['todo'] });
    const name = sim.listPodObjects().find((p) => podRecords(p as never).has(claw.sandbox_id))!.metadata.name as string;
    const id = await pairThenDie(claw.sandbox_id, 'orch-d', false);
    // The reservation: the shell's record, with its container and port, written before the PATCH.
    expect(podRecords(podNamed(name) as never).get(id)).toMatchObject({ owner: 'orch-d', paired: { port: CONFIG.workerPort + 1 } });
    await until(() => podRecords(podNamed(name) as never).get(id)?.state === 'closed', "the dead replica's record closed", 30_000);
    expect(podNamed(name).spec.ephemeralContainers ?? []).toEqual([]);
    expect([...kubelet.apps.keys()].filter((k) => k.startsWith(`${name}/`))).toEqual([]);
    const again = await ready({ type: 'shell', claw_sandbox: claw.sandbox_id });
    expect(podRecords(podNamed(name) as never).get(again.sandbox_id)!.paired!.port).toBe(CONFIG.workerPort + 1);
    for (const sb of [again.sandbox_id, claw.sandbox_id]) expect((await call('DELETE', `/sandboxes/${sb}`)).statusCode).toBe(204);
    await until(() => !sim.listPodObjects().some((p) => p.metadata.name === name), 'the claw pod deleted', 30_000);
  }, 120_000);
});
