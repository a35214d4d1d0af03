// Claims from a replica's share of the warm pool (k8s/warm-share.ts, k8s/claim-writes.ts), against the simulated
// API server with stub workers: the claim waits on no API call (the write lands after the sandbox is ready), two
// replicas claiming at once never share a pod, and a replica that dies mid-claim (sandbox started on the worker,
// claim never written) leaves no pod behind and no pod handed out twice.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { L } from '../../k8s/labels.ts';
import { podRecords } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

let sim: KubeSim;
let kubelet: StubKubelet;
const orchestrators: Orchestrator[] = [];

beforeEach(async () => {
  kubelet = new StubKubelet();
  sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  await sim.start();
});

afterEach(async () => {
  for (const o of orchestrators.splice(0)) await o.close();
  await sim.close();
  expect(sim.invalid).toEqual([]);
});

const pool = (n: number) => ({ templates: { b: { type: 'browser' as const, placement: 'pod' as const, warmPool: n } } });

async function replica(id: string, n: number): Promise<Orchestrator> {
  const o = await startOrchestrator(sim, pool(n), id);
  orchestrators.push(o);
  return o;
}

async function createReady(o: Orchestrator): Promise<string> {
  const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser' } });
  expect(res.statusCode).toBe(201);
  const id = res.json().sandbox_id as string;
  const info = (await o.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json();
  expect(info.status).toBe('ready');
  return id;
}

function pods(selector: (p: Record<string, any>) => boolean = () => true) {
  return sim.listPodObjects().filter(selector);
}

const reservedBy = (owner: string) => pods((p) => p.metadata.labels[L.state] === 'warm' && p.metadata.labels[L.owner] === owner && p.status.phase === 'Running');

/** Every live sandbox record and the pods that carry it: a double claim is a record on two pods or two on one pod. */
function recordsByPod(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of pods()) out.set(p.metadata.name, [...podRecords(p as never).values()].filter((r) => r.state !== 'closed').map((r) => r.id));
  return out;
}

describe('claims from the replica share of the warm pool', () => {
  test('the sandbox is ready before its claim is written: no API call on the claim path', async () => {
    const o = await replica('orch-a', 2);
    await until(() => reservedBy('orch-a').length === 2, 'both warm pods reserved by the only replica');
    // Every PATCH fails twice first (retried with backoff): had the claim waited for its write, ready would too.
    sim.failNext(3, 503, { method: 'PATCH' });
    const id = await createReady(o);
    const pod = pods((p) => p.metadata.labels[L.sandbox] === id);
    expect(pod).toHaveLength(0);
    expect(o.backend.stats()).toMatchObject({ k8s_warm_local_claims: 1, k8s_warm_hits: 1, k8s_warm_misses: 0 });
    // Then the claim and the ready record land (one merged write, or two), and the step works all along.
    const claimed = await until(() => pods((p) => p.metadata.labels[L.sandbox] === id && p.metadata.labels[L.state] === 'claimed')[0], 'claim written');
    await until(() => podRecords(pods((p) => p.metadata.name === claimed.metadata.name)[0] as never).get(id)?.state === 'ready', 'record ready');
    const step = await o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
    expect(step.statusCode).toBe(200);
    expect((await o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    await until(() => pods((p) => p.metadata.name === claimed.metadata.name).length === 0, 'claimed pod deleted');
    await until(() => reservedBy('orch-a').length === 2, 'share refilled');
  });

  test('two replicas claiming at once: each pod serves one sandbox, each replica only its own reservations', async () => {
    const a = await replica('orch-a', 6);
    const b = await replica('orch-b', 6);
    await until(() => a.backend.reconciler.liveReplicas === 2 && b.backend.reconciler.liveReplicas === 2, 'both see two replicas');
    await until(() => reservedBy('orch-a').length >= 3 && reservedBy('orch-b').length >= 3, 'three reserved each');
    const reservedA = new Set(reservedBy('orch-a').map((p) => p.metadata.name));
    const reservedB = new Set(reservedBy('orch-b').map((p) => p.metadata.name));
    // More claims than the pool holds, from both at once: shares, then guarded claims of unreserved pods, then cold pods.
    const ids = await Promise.all([...Array.from({ length: 8 }, () => createReady(a)), ...Array.from({ length: 8 }, () => createReady(b))]);
    const fromA = new Set(ids.slice(0, 8));
    await until(() => pods((p) => p.metadata.labels[L.state] === 'claimed').length === 16, 'every claim written');
    const byPod = recordsByPod();
    const placed = [...byPod.values()].flat();
    expect(placed.sort()).toEqual([...ids].sort());
    for (const recs of byPod.values()) expect(recs.length).toBeLessThanOrEqual(1);
    for (const p of pods((q) => q.metadata.labels[L.state] === 'claimed')) {
      const owner = p.metadata.labels[L.owner];
      expect(owner).toBe(fromA.has(p.metadata.labels[L.sandbox]) ? 'orch-a' : 'orch-b');
      // A reservation is claimed by its replica only.
      if (reservedA.has(p.metadata.name)) expect(owner).toBe('orch-a');
      if (reservedB.has(p.metadata.name)) expect(owner).toBe('orch-b');
    }
    expect(a.backend.stats().k8s_warm_local_claims! + b.backend.stats().k8s_warm_local_claims!).toBeGreaterThanOrEqual(6);
    for (const id of ids) {
      const o = fromA.has(id) ? a : b;
      expect((await o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    }
    await until(() => pods((p) => p.metadata.labels[L.state] === 'claimed').length === 0, 'claimed pods deleted');
  });

  test('a replica dying mid-claim: its reservations are deleted, never handed out again, the pool refills', async () => {
    const a = await replica('orch-a', 2);
    const b = await replica('orch-b', 2);
    await until(() => reservedBy('orch-a').length === 1 && reservedBy('orch-b').length === 1, 'one reserved each');
    const [mine] = reservedBy('orch-a');
    const name = mine!.metadata.name as string;
    // The claim write of A's pod never gets through: A dies with the sandbox started on the worker, unrecorded.
    sim.failNext(1000, 503, { method: 'PATCH', path: new RegExp(`/pods/${name}$`) });
    const id = await createReady(a);
    expect(kubelet.workers.get(name)!.hosted).toBe(1);
    expect(pods((p) => p.metadata.name === name)[0]!.metadata.labels).toMatchObject({ [L.state]: 'warm', [L.owner]: 'orch-a' });
    await a.backend.abandon();
    await a.app.close();
    orchestrators.splice(orchestrators.indexOf(a), 1);
    // B knows no record of the sandbox: 404 after waiting for one to appear, never a claim of A's pod.
    const lookup = await b.app.inject({ method: 'GET', url: `/sandboxes/${id}` });
    expect(lookup.statusCode).toBe(404);
    await until(() => b.backend.stats().k8s_leader === 1, 'B leads', 30_000);
    await until(() => pods((p) => p.metadata.name === name).length === 0, "A's reservation deleted by the leader", 30_000);
    // B claims meanwhile and after: never A's pod; the pool is back to two, both B's now.
    const later = await createReady(b);
    expect(pods((p) => p.metadata.labels[L.sandbox] === later)[0]?.metadata.name ?? '').not.toBe(name);
    await until(() => reservedBy('orch-b').length === 2, 'pool refilled and reserved by B', 30_000);
    for (const recs of recordsByPod().values()) expect(recs.length).toBeLessThanOrEqual(1);
    expect(pods((p) => p.metadata.labels[L.owner] === 'orch-a')).toHaveLength(0);
  });
});
