// What a replica that died leaves in the recordings every replica reads (simulated API server, stub workers, two
// in-process replicas on one recordings directory; Leases of 2 s, a reconcile pass every second):
// - its episode reads `incomplete` once the leader found its Lease lapsed (not after 15 minutes without a write),
//   and `running` again once another replica serves a step of it; a Lease named for another replica but holding
//   for the dead one (forged) does not keep it alive;
// - a `record_har` sandbox the leader expires, its creator dead or alive: the HAR reaches the shared episode
//   directory before the worker goes (it stayed on the worker).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseK8sConfig } from '../../k8s/config.ts';
import { KubeApi } from '../../k8s/kube.ts';
import { ownerLeaseLabels } from '../../k8s/leases.ts';
import type { KubeSim } from '../../k8s/sim/api-server.ts';
import type { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { readEpisode } from '../../recording/reader.ts';
import { closeCluster, startOrchestrator, stubCluster, until, type Orchestrator } from './harness.ts';

let sim: KubeSim;
let kubelet: StubKubelet;
let root: string;
let shared: string;
const orchestrators: Orchestrator[] = [];

beforeEach(async () => {
  ({ sim, kubelet } = await stubCluster());
  root = mkdtempSync(path.join(tmpdir(), 'grove-k8s-orphan-'));
  shared = path.join(root, 'recordings');
});

afterEach(async () => {
  try {
    await closeCluster(orchestrators, sim);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const POD = { templates: { b: { type: 'browser' as const, placement: 'pod' as const } } };

async function replica(name: string): Promise<Orchestrator> {
  const o = await startOrchestrator(sim, POD, name, { dataDir: path.join(root, name), recordingsDir: shared });
  orchestrators.push(o);
  return o;
}

async function recordedOn(o: Orchestrator, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', record: true, ...extra } });
  expect(res.statusCode).toBe(201);
  const id = res.json().sandbox_id as string;
  const ready = (await o.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json();
  expect([ready.status, ready.error]).toEqual(['ready', null]);
  return id;
}

const step = (o: Orchestrator, id: string) => o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
const status = async (id: string) => (await readEpisode(path.join(shared, id))).meta.status;

describe('a dead replica\'s recordings', () => {
  test('its episode reads incomplete once its Lease lapsed, running again when B serves it; a forged Lease keeps nothing alive', { timeout: 90_000 }, async () => {
    const b = await replica('orch-b');
    await until(() => b.backend.stats().k8s_leader === 1, 'B leads');
    const a = await replica('orch-a');
    const id = await recordedOn(a);
    const kept = await recordedOn(b);
    expect((await step(a, id)).statusCode).toBe(200);
    await until(async () => existsSync(path.join(shared, id, 'steps.jsonl')) && (await status(id)) === 'running', "A's episode running");
    expect(JSON.parse(readFileSync(path.join(shared, id, '.writer.json'), 'utf8')).server).toBe('orch-a');
    // The attack: a Lease that is not A's own (another name) says orch-a holds it, renewed an hour ahead.
    const api = new KubeApi(sim.kubeConfig(), 'grove', parseK8sConfig({}).api);
    const at = new Date();
    await api.createLease({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'grove-owner-mallory', namespace: 'grove', labels: ownerLeaseLabels(parseK8sConfig({}).instance) },
      spec: { holderIdentity: 'orch-a', leaseDurationSeconds: 3600, acquireTime: at, renewTime: at },
    });
    await a.backend.abandon();
    const died = Date.now();
    await until(async () => (await status(id)) === 'incomplete', "A's episode read incomplete", 30_000);
    const took = Date.now() - died;
    console.log(`dead writer's episode read incomplete after ${took} ms (Lease 2 s, pass 1 s)`);
    expect(took).toBeLessThan(20_000);
    expect(await status(kept)).toBe('running');
    // B serves a step of it: B carries the episode on, and its marker is not the one found gone.
    expect((await step(b, id)).statusCode).toBe(200);
    await until(async () => (await status(id)) === 'running', 'running again with B');
    expect(JSON.parse(readFileSync(path.join(shared, id, '.writer.json'), 'utf8')).server).toBe('orch-b');
    expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    const ended = await until(async () => {
      const v = await readEpisode(path.join(shared, id)).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'ended by B');
    expect(ended.steps.map((s) => s.step)).toEqual([1, 2]);
    expect(ended.meta.status).toBe('complete');
  });

  test('a record_har sandbox expired by the leader leaves its HAR in the shared episode, its creator dead or alive', { timeout: 90_000 }, async () => {
    const b = await replica('orch-b');
    await until(() => b.backend.stats().k8s_leader === 1, 'B leads');
    const a = await replica('orch-a');
    const orphan = await recordedOn(a, { record_har: true, ttl_seconds: 3 });
    const own = await recordedOn(b, { record_har: true, ttl_seconds: 3 });
    for (const [o, id] of [[a, orphan], [b, own]] as const) expect((await step(o, id)).statusCode).toBe(200);
    await a.backend.abandon();
    for (const id of [orphan, own]) {
      const ended = await until(async () => {
        const v = await readEpisode(path.join(shared, id)).catch(() => null);
        return v?.meta.termination ? v : null;
      }, `${id} ended`, 30_000);
      expect(ended.steps.map((s) => s.step)).toEqual([1]);
      const har = await until(() => {
        try {
          return JSON.parse(readFileSync(path.join(shared, id, 'network.har'), 'utf8')) as { log: { creator: { name: string }; comment: string } };
        } catch {
          return null;
        }
      }, `the HAR of ${id} in the shared directory`);
      expect(har.log.creator.name).toBe('grove-stub-worker');
    }
    await until(() => b.backend.reconciler.sandboxesExpired === 2, 'both counted as expired by the leader');
    await until(() => sim.listPodObjects().length === 0, 'the workers deleted');
    for (const w of kubelet.workers.values()) expect(w.hars.size).toBe(0);
  });
});
