// The kubernetes backend through the orchestrator's REST API, against the simulated Kubernetes API server with
// stub workers on per-pod loopback addresses: placement, warm pools, labels, back-pressure, API faults.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { A, L } from '../../k8s/labels.ts';
import { encodeRecord, liveCount, podRecords, recordKey } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';
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

async function orchestrator(...args: Parameters<typeof startOrchestrator> extends [unknown, ...infer R] ? R : never): Promise<Orchestrator> {
  const o = await startOrchestrator(sim, ...args);
  orchestrators.push(o);
  return o;
}

const POD_TEMPLATE = { templates: { b: { type: 'browser' as const, placement: 'pod' as const } } };

async function create(o: Orchestrator, body: Record<string, unknown> = {}) {
  const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', ...body } });
  return { status: res.statusCode, headers: res.headers, body: res.json() };
}

async function waitFor(o: Orchestrator, id: string) {
  return (await o.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json();
}

function pods(selector: (p: Record<string, any>) => boolean = () => true) {
  return sim.listPodObjects().filter(selector);
}

describe('placement', () => {
  test('one pod per sandbox: created claimed and labelled, reached over its IP, deleted with the sandbox', async () => {
    const o = await orchestrator(POD_TEMPLATE);
    const c = await create(o, { labels: { run: 'r1' } });
    expect(c.status).toBe(201);
    const info = await waitFor(o, c.body.sandbox_id);
    expect(info.status).toBe('ready');
    const [pod] = pods();
    expect(pod!.metadata.labels).toMatchObject({ [L.state]: 'claimed', [L.owner]: 'orch-a', [L.sandbox]: c.body.sandbox_id, [L.template]: 'b', [L.managedBy]: 'grove' });
    expect(Date.parse(pod!.metadata.annotations[A.expiresAt])).toBeGreaterThan(Date.now());
    validateK8sObject(pod);
    // The step goes to the worker at the pod IP with the pod's token, not through the Kubernetes API.
    const podCalls = () => [...sim.requests].filter(([k]) => k.endsWith('pods')).reduce((a, [, n]) => a + n, 0);
    const callsBefore = podCalls();
    const step = await o.app.inject({ method: 'POST', url: `/sandboxes/${c.body.sandbox_id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
    expect(step.statusCode).toBe(200);
    expect(step.json().observation.step).toBe(1);
    expect(podCalls()).toBe(callsBefore);
    expect(kubelet.workers.get(pod!.metadata.name)!.requests).toBeGreaterThan(0);
    expect((await o.app.inject({ method: 'DELETE', url: `/sandboxes/${c.body.sandbox_id}` })).statusCode).toBe(204);
    await until(() => pods().length === 0, 'pod deleted');
    expect(o.backend.stats()).toMatchObject({ k8s_warm_misses: 1, k8s_warm_hits: 0, k8s_pods_created: 1, k8s_pods_deleted: 1 });
  });

  test('shared workers host up to maxPerWorker sandboxes, placed by load; empty workers are deleted', async () => {
    const o = await orchestrator({ templates: { b: { type: 'browser', placement: 'shared', maxPerWorker: 3 } } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(o)).body.sandbox_id);
    for (const id of ids) expect((await waitFor(o, id)).status).toBe('ready');
    const workers = pods();
    expect(workers).toHaveLength(2);
    // The load is the live sandbox records on each pod (what every replica places by).
    const loads = workers.map((p) => liveCount(p)).sort();
    expect(loads).toEqual([2, 3]);
    expect(workers.map((p) => kubelet.workers.get(p.metadata.name)!.requests > 0)).toEqual([true, true]);
    for (const id of ids.slice(0, 3)) await o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` });
    // The next sandbox goes to the least-loaded worker that is left, not to a new pod.
    const again = (await create(o)).body.sandbox_id;
    expect((await waitFor(o, again)).status).toBe('ready');
    for (const id of [...ids.slice(3), again]) await o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` });
    await until(() => pods().length === 0, 'workers deleted');
    expect(o.backend.stats().k8s_pods_created).toBe(2);
  });
});

describe('warm pool', () => {
  test('kept full in the background; a claim from the replica share (hit, no API call), reported in /metrics', async () => {
    const o = await orchestrator({ templates: { b: { type: 'browser', placement: 'pod', warmPool: 2 } } });
    const warmReady = () => pods((p) => p.metadata.labels[L.state] === 'warm' && p.status.phase === 'Running').length;
    await until(() => warmReady() === 2, 'two warm pods');
    const createsBefore = sim.count('CREATE pods');
    const c = await create(o);
    expect((await waitFor(o, c.body.sandbox_id)).status).toBe('ready');
    const claimed = pods((p) => p.metadata.labels[L.sandbox] === c.body.sandbox_id);
    expect(claimed).toHaveLength(1);
    expect(o.backend.stats()).toMatchObject({ k8s_warm_hits: 1, k8s_warm_misses: 0 });
    // Claimed from the replica's share only once it reserved the pod; else by a guarded label patch.
    expect(o.backend.stats().k8s_warm_local_claims).toBeLessThanOrEqual(1);
    // Replenished: one new pod, two warm again.
    await until(() => warmReady() === 2, 'pool refilled');
    expect(sim.count('CREATE pods')).toBe(createsBefore + 1);
    const metrics = (await o.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/k8s_warm_hits\S* 1/);
  });

  test('two replicas never claim the same warm pod (the resourceVersion precondition decides)', async () => {
    const a = await orchestrator({ templates: { b: { type: 'browser', placement: 'pod', warmPool: 1 } } }, 'orch-a');
    const b = await orchestrator({ templates: { b: { type: 'browser', placement: 'pod', warmPool: 1 } } }, 'orch-b');
    await until(() => pods((p) => p.metadata.labels[L.state] === 'warm' && p.status.phase === 'Running').length >= 1, 'a warm pod');
    await until(() => b.backend.cache.all().some((p) => p.status?.phase === 'Running'), 'b sees it');
    const [x, y] = await Promise.all([create(a), create(b)]);
    expect((await waitFor(a, x.body.sandbox_id)).status).toBe('ready');
    expect((await waitFor(b, y.body.sandbox_id)).status).toBe('ready');
    const owners = pods((p) => p.metadata.labels[L.state] === 'claimed').map((p) => `${p.metadata.labels[L.owner]}:${p.metadata.labels[L.sandbox]}`);
    expect(owners.sort()).toEqual([`orch-a:${x.body.sandbox_id}`, `orch-b:${y.body.sandbox_id}`].sort());
    const s = [a.backend.stats(), b.backend.stats()];
    expect(s[0]!.k8s_warm_hits + s[1]!.k8s_warm_hits).toBe(1);
    expect(s[0]!.k8s_warm_misses + s[1]!.k8s_warm_misses).toBe(1);
  });
});

describe('statuses and back-pressure', () => {
  test('image-pull failure and unschedulable pods become clear sandbox errors', async () => {
    kubelet.fate = (pod) => (pod.metadata.labels[L.sandbox] === 'x' ? 'ok' : pod.spec.containers[0].image.includes('missing') ? 'image_pull' : 'unschedulable');
    const o = await orchestrator({ ...POD_TEMPLATE, workerImage: 'registry.example/missing:1', readyTimeoutSeconds: 1 });
    const pull = await waitFor(o, (await create(o)).body.sandbox_id);
    expect(pull.status).toBe('error');
    expect(pull.error.code).toBe('image_pull_failed');
    expect(pull.error.message).toContain('registry.example/missing:1');
    const o2 = await orchestrator({ ...POD_TEMPLATE, instance: 'other', readyTimeoutSeconds: 1 }, 'orch-2');
    const unsched = await waitFor(o2, (await create(o2)).body.sandbox_id);
    expect(unsched.status).toBe('error');
    expect(unsched.error.code).toBe('pod_unschedulable');
    expect(unsched.error.message).toContain('Insufficient memory');
  });

  test('a pod that never becomes ready times out as pod_start_timeout and its pod is deleted', async () => {
    kubelet.fate = () => 'never_ready';
    const o = await orchestrator({ ...POD_TEMPLATE, readyTimeoutSeconds: 1 });
    const info = await waitFor(o, (await create(o)).body.sandbox_id);
    expect(info.error.code).toBe('pod_start_timeout');
    await until(() => pods().length === 0, 'stuck pod deleted');
  });

  test('too many pods starting: 503 capacity_exhausted with Retry-After, before any pod is made', async () => {
    kubelet.fate = () => 'never_ready';
    const o = await orchestrator({ ...POD_TEMPLATE, maxStartingPods: 2 });
    expect((await create(o)).status).toBe(201);
    expect((await create(o)).status).toBe(201);
    await until(() => o.backend.stats().k8s_pods_starting === 2, 'two starting');
    const third = await create(o);
    expect(third.status).toBe(503);
    expect(third.body.error.code).toBe('capacity_exhausted');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    await until(() => o.backend.stats().k8s_pods_created === 2, 'two pods');
    expect(pods()).toHaveLength(2);
  });

  test('an unknown template is a 400, not a pod', async () => {
    const o = await orchestrator(POD_TEMPLATE);
    const r = await create(o, { labels: { template: 'gpu' } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('templates: b');
  });
});

describe('API faults', () => {
  test('429 (Retry-After) and 500 answers are retried with backoff; API concurrency stays bounded', async () => {
    // A server that takes 20 ms per answer, so concurrent calls overlap at the server.
    await sim.close();
    sim = new KubeSim(kubelet, { latencyMs: 20 });
    kubelet.sim = sim;
    await sim.start();
    const o = await orchestrator({ ...POD_TEMPLATE, api: { concurrency: 3, retries: 5, backoffMs: 5, maxBackoffMs: 50, maxQueue: 1000 } });
    sim.failNext(2, 429, { method: 'POST', path: /pods$/, retryAfter: 0 });
    sim.failNext(1, 500, { method: 'DELETE' });
    const ids = await Promise.all(Array.from({ length: 12 }, async () => (await create(o)).body.sandbox_id));
    for (const id of ids) expect((await waitFor(o, id)).status).toBe('ready');
    await Promise.all(ids.map((id) => o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })));
    await until(() => pods().length === 0, 'all deleted');
    expect(o.backend.stats().k8s_api_retries).toBeGreaterThanOrEqual(3);
    expect(sim.maxInFlight).toBeLessThanOrEqual(3);
    expect(sim.maxInFlight).toBeGreaterThan(1);
    expect(o.backend.api.throttle.maxActive).toBe(3);
  });

  test('a dropped watch is resumed, and a 410 Gone resourceVersion triggers a re-list; readiness is still seen', async () => {
    kubelet.startMs = 300;
    const o = await orchestrator(POD_TEMPLATE);
    const c = await create(o);
    await until(() => pods().length === 1, 'pod created');
    sim.dropWatches();
    await until(() => sim.watchCount === 1, 'watch reopened');
    expect((await waitFor(o, c.body.sandbox_id)).status).toBe('ready');
    const relists = o.backend.cache.relists;
    sim.compact();
    sim.dropWatches();
    const d = await create(o);
    expect((await waitFor(o, d.body.sandbox_id)).status).toBe('ready');
    await until(() => o.backend.cache.relists > relists, 're-list after 410');
  });

  test('a patch in a content type the API server does not take answers 415 (as the real one does)', async () => {
    const o = await orchestrator({ templates: { b: { type: 'browser', placement: 'pod', warmPool: 1 } } });
    const [pod] = await until(() => (pods().some((p) => p.status.phase === 'Running') ? pods() : null), 'a warm pod');
    await until(() => o.backend.cache.all().some((p) => p.status?.phase === 'Running'), 'the backend sees it ready');
    const c = await create(o);
    expect((await waitFor(o, c.body.sandbox_id)).status).toBe('ready');
    expect(sim.count('PATCH pods')).toBeGreaterThan(0);
    const res = await fetch(`${sim.url}/api/v1/namespaces/grove/pods/${pod!.metadata.name}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { labels: { x: 'y' } } }),
    });
    expect(res.status).toBe(415);
    const body = await res.json();
    validateK8sObject(body);
    expect(body).toMatchObject({ kind: 'Status', code: 415, reason: 'UnsupportedMediaType' });
    // The backend's own patches (the warm pool's refill above) used a patch content type the server takes.
    expect(o.backend.stats().k8s_api_retries).toBe(0);
  });
});

describe('expiry and reconciling', () => {
  test('a killed worker: its sandbox answers 410 sandbox_closed and the failed pod is reconciled away', async () => {
    const o = await orchestrator(POD_TEMPLATE);
    const id = (await create(o)).body.sandbox_id;
    await waitFor(o, id);
    const [pod] = pods();
    await kubelet.kill(pod!.metadata.name);
    await until(() => o.backend.stats().k8s_sandboxes_lost === 1, 'sandbox marked lost');
    const step = await o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
    expect(step.statusCode).toBe(410);
    expect(step.json().error.code).toBe('sandbox_closed');
    await o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` });
    await until(() => pods().length === 0, 'failed pod deleted');
  });

  test('orchestrator killed mid-flight: the next replica serves its ready sandboxes and deletes what was still starting', async () => {
    const a = await orchestrator(POD_TEMPLATE, 'orch-a');
    const ids = [(await create(a)).body.sandbox_id, (await create(a)).body.sandbox_id];
    for (const id of ids) expect((await waitFor(a, id)).status).toBe('ready');
    kubelet.fate = () => 'never_ready';
    const third = (await create(a)).body.sandbox_id; // still starting when the replica dies
    await until(() => pods().length === 3, 'the third pod');
    await a.backend.abandon();
    await a.app.close();
    orchestrators.splice(orchestrators.indexOf(a), 1);
    expect(pods().every((p) => p.metadata.labels[L.owner] === 'orch-a')).toBe(true);
    const b = await orchestrator(POD_TEMPLATE, 'orch-b');
    await until(() => b.backend.stats().k8s_leader === 1, 'b leads');
    // The half-made sandbox's record names a replica that is gone: closed, its pod deleted.
    await until(() => pods().length === 2, 'the starting pod deleted');
    expect(pods().map((p) => p.metadata.labels[L.sandbox]).sort()).toEqual([...ids].sort());
    // The ready ones are no orphans: b serves them from their records.
    for (const id of ids) {
      const step = await b.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
      expect(step.statusCode).toBe(200);
    }
    expect(b.backend.stats().k8s_sandboxes_adopted).toBe(2);
    expect((await b.app.inject({ method: 'GET', url: `/sandboxes/${third}` })).statusCode).toBe(404);
  });

  test('a sandbox past the TTL of its record is closed by the leader even when its creator is alive', async () => {
    const o = await orchestrator(POD_TEMPLATE);
    const id = (await create(o)).body.sandbox_id;
    await waitFor(o, id);
    const [pod] = pods();
    // As if the TTL passed: the record, not the creator's memory, is what the leader enforces.
    const rec = podRecords(pod).get(id)!;
    const past = { ...rec, created: new Date(Date.now() - 2 * rec.ttl * 1000).toISOString() };
    expect(await patchAnnotations(pod!.metadata.name, { [recordKey(id)]: encodeRecord(past) })).toBe(200);
    await until(() => o.backend.reconciler.sandboxesExpired === 1, 'expired by the leader');
    await until(() => pods().length === 0, 'expired pod gone');
    const step = await o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
    expect(step.statusCode).toBe(410);
    expect(step.json().error.message).toContain('expired_ttl');
  });

  test('a pod past its TTL annotation is deleted by the reconciler; its sandbox is closed', async () => {
    const o = await orchestrator(POD_TEMPLATE);
    const id = (await create(o)).body.sandbox_id;
    await waitFor(o, id);
    const [pod] = pods();
    expect(await patchAnnotations(pod!.metadata.name, { [A.expiresAt]: new Date(Date.now() - 1000).toISOString() })).toBe(200);
    await until(() => o.backend.reconciler.expiredDeleted === 1, 'deleted as expired');
    await until(() => pods().length === 0, 'expired pod gone');
    await until(async () => (await o.app.inject({ method: 'GET', url: `/sandboxes/${id}` })).json().status === 'closed', 'sandbox closed');
  });
});

/** A merge patch of a pod's annotations straight to the API server (as kubectl annotate would). */
async function patchAnnotations(name: string, annotations: Record<string, string | null>): Promise<number> {
  const res = await fetch(`${sim.url}/api/v1/namespaces/grove/pods/${name}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ metadata: { annotations } }),
  });
  return res.status;
}
