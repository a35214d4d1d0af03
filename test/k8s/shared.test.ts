// Several orchestrator replicas sharing state through the sandbox records on the worker pods (k8s/records.ts,
// k8s/shared.ts), against the simulated API server with stub workers: a sandbox created on one replica is served,
// heartbeated, listed and deleted on another; the leader expires it whoever holds it; a dead replica's sandboxes
// live on; placement from two replicas never puts more than maxPerWorker sandboxes on a worker.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { L } from '../../k8s/labels.ts';
import { liveCount, podRecords } from '../../k8s/records.ts';
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

const SHARED = { templates: { b: { type: 'browser' as const, placement: 'shared' as const, maxPerWorker: 2 } } };

async function replica(id: string, k8s: Record<string, unknown> = SHARED): Promise<Orchestrator> {
  const o = await startOrchestrator(sim, k8s, id);
  orchestrators.push(o);
  return o;
}

async function create(o: Orchestrator, body: Record<string, unknown> = {}): Promise<string> {
  const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', ...body } });
  expect(res.statusCode).toBe(201);
  return res.json().sandbox_id;
}

async function info(o: Orchestrator, id: string, wait = false) {
  const res = await o.app.inject({ method: 'GET', url: `/sandboxes/${id}${wait ? '/wait?timeout=30' : ''}` });
  return { status: res.statusCode, body: res.json() };
}

async function step(o: Orchestrator, id: string) {
  const res = await o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
  return { status: res.statusCode, body: res.json() };
}

const pods = () => sim.listPodObjects();

describe('any replica serves any sandbox', () => {
  test('created on A: stepped, listed and deleted on B; A then answers 410 with the reason', async () => {
    const a = await replica('orch-a');
    const b = await replica('orch-b');
    const id = await create(a, { labels: { run: 'r7' } });
    expect((await info(a, id, true)).body.status).toBe('ready');
    const reads = () => sim.count('GET pods') + sim.count('LIST pods');
    const before = reads();
    // B never saw the create: on first contact it reads the record once (its watch may lag A's write by a few ms),
    // then serves the sandbox from its cache, talking to the worker only.
    const s1 = await step(b, id);
    expect(s1.status).toBe(200);
    expect(s1.body.observation.step).toBe(1);
    expect(reads() - before).toBe(1);
    for (let i = 2; i <= 4; i++) expect((await step(b, id)).body.observation.step).toBe(i);
    expect(reads() - before).toBe(1);
    const list = (await b.app.inject({ method: 'GET', url: '/sandboxes' })).json();
    expect(list.sandboxes ?? list).toEqual(expect.arrayContaining([expect.objectContaining({ sandbox_id: id, labels: { run: 'r7' }, status: 'ready' })]));
    expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    await until(() => pods().length === 0, 'the emptied worker deleted');
    const onA = await step(a, id);
    expect(onA.status).toBe(410);
    expect(onA.body.error.code).toBe('sandbox_closed');
    expect((await info(a, id)).body.status).toBe('closed');
    expect(b.backend.stats().k8s_sandboxes_adopted).toBe(1);
  });

  test('a sandbox still being created on A: B waits for it, then serves it', async () => {
    kubelet.startMs = 300;
    const a = await replica('orch-a');
    const b = await replica('orch-b');
    // Asked on B at once, as a load balancer may route the client's next call: B waits for A's record.
    const id = await create(a);
    const waited = await info(b, id, true);
    expect(waited.body).toMatchObject({ status: 'ready' });
    expect((await step(b, id)).status).toBe(200);
  });

  test('created on B, heartbeat on A, expired by A as the leader after the heartbeat extended it', async () => {
    const a = await replica('orch-a');
    await until(() => a.backend.stats().k8s_leader === 1, 'A leads');
    const b = await replica('orch-b');
    const id = await create(b, { idle_timeout_seconds: 2 });
    // A second sandbox on the same worker keeps the pod (and so the first one's tombstone) in place.
    const keep = await create(b);
    for (const x of [id, keep]) expect((await info(b, x, true)).body.status).toBe('ready');
    expect(pods()).toHaveLength(1);
    const created = Date.parse(podRecords(pods()[0]).get(id)!.created);
    await until(() => Date.now() > created + 1000, 'a second after the creation');
    const hb = await a.app.inject({ method: 'POST', url: `/sandboxes/${id}/heartbeat` });
    expect(hb.statusCode).toBe(200);
    const beat = Date.parse(hb.json().last_used_at);
    // Recorded on the pod, so B sees it too.
    await until(() => Date.parse(podRecords(pods()[0]).get(id)!.seen) >= beat, 'the heartbeat recorded');
    await until(async () => Date.parse((await info(b, id)).body.last_used_at) >= beat, 'B sees the heartbeat');
    const closed = await until(() => {
      const r = podRecords(pods()[0]).get(id);
      return r?.state === 'closed' ? r : null;
    }, 'the sandbox expired');
    expect(closed.reason).toBe('expired_idle');
    expect(Date.parse(closed.closed!)).toBeGreaterThanOrEqual(beat + 2000);
    await until(() => a.backend.reconciler.sandboxesExpired === 1, 'counted by the leader');
    expect(b.backend.reconciler.sandboxesExpired).toBe(0);
    await until(async () => (await step(b, id)).status === 410, 'B closed it too');
    expect((await step(b, id)).body.error.message).toContain('expired_idle');
    expect((await step(b, keep)).status).toBe(200);
    expect(kubelet.workers.get(pods()[0]!.metadata.name)!.hosted).toBe(1);
  });

  test('A dies: B serves the sandboxes A created, and deletes them', async () => {
    const a = await replica('orch-a');
    const b = await replica('orch-b');
    const ids = [await create(a), await create(a), await create(a)];
    for (const id of ids) expect((await info(a, id, true)).body.status).toBe('ready');
    await a.backend.abandon();
    await a.app.close();
    orchestrators.splice(orchestrators.indexOf(a), 1);
    await until(() => b.backend.stats().k8s_leader === 1, 'B leads');
    for (const id of ids) expect((await step(b, id)).status).toBe(200);
    expect(pods().every((p) => p.metadata.labels[L.owner] === 'orch-a')).toBe(true);
    for (const id of ids) expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    await until(() => pods().length === 0, 'workers deleted');
  });

  test('a graceful shutdown hands live sandboxes over when another replica is alive', async () => {
    const a = await replica('orch-a');
    const b = await replica('orch-b');
    const id = await create(a);
    expect((await info(a, id, true)).body.status).toBe('ready');
    await a.close();
    orchestrators.splice(orchestrators.indexOf(a), 1);
    expect((await step(b, id)).status).toBe(200);
    // The last replica closes what is left.
    await b.close();
    orchestrators.splice(orchestrators.indexOf(b), 1);
    await until(() => pods().length === 0, 'workers deleted at the last shutdown');
  });
});

describe('placement across replicas', () => {
  test('two replicas placing at once never put more than maxPerWorker sandboxes on a worker', async () => {
    const a = await replica('orch-a');
    const b = await replica('orch-b');
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2 ? a : b)));
    for (const [i, id] of ids.entries()) expect((await info(i % 2 ? a : b, id, true)).body.status).toBe('ready');
    const workers = pods();
    expect(workers.length).toBeGreaterThanOrEqual(5);
    for (const p of workers) {
      expect(liveCount(p)).toBeLessThanOrEqual(2);
      expect(kubelet.workers.get(p.metadata.name)!.hosted).toBeLessThanOrEqual(2);
    }
    expect(workers.reduce((n, p) => n + liveCount(p), 0)).toBe(10);
    // Load placed by the other replica counts: a new sandbox on A fills a worker B half-filled, not a new pod.
    await b.app.inject({ method: 'DELETE', url: `/sandboxes/${ids[0]}` });
    await until(() => a.backend.cache.all().some((p) => liveCount(p) === 1), 'A sees the freed slot');
    const before = pods().length;
    const more = await create(a);
    expect((await info(a, more, true)).body.status).toBe('ready');
    expect(pods()).toHaveLength(before);
    expect(sim.invalid).toEqual([]);
  });
});
