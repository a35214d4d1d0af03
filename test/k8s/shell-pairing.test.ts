// A shell paired with a claw sandbox on the kubernetes backend (k8s/paired-shell.ts), against the simulated API
// server: its worker is an ephemeral container added to the claw sandbox's running pod by PATCH
// pods/{name}/ephemeralcontainers (the client library's strategic-merge patch, validated as the real server does),
// recorded on the pod so any replica serves it, ended when the shell closes while the pod stays. Pods run as the
// real worker app in this process (the claw pod's apps; the ephemeral container's pod-isolated shell worker).
// Real containers (the shell's loopback reaching the apps, what it cannot see): shell-pairing-pods.slow.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { podRecords } from '../../k8s/records.ts';
import { AppKubelet } from './app-kubelet.ts';
import { closeCluster, startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-pairing-'));
const envOf = (c: Obj) => Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e.value])) as Record<string, string>;

const kubelet = new AppKubelet(dir);
const sim = new KubeSim(kubelet);
let orch: Orchestrator;
let other: Orchestrator;
const call = (o: Orchestrator, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => o.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Obj }) });
const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => call(orch, method, url, payload);
const podOf = (id: string) => sim.listPodObjects().find((p) => podRecords(p as never).has(id))!;

const CONFIG = {
  workerPort: 21000 + Math.floor(Math.random() * 1000),
  templates: { browser: { type: 'browser' as const, placement: 'shared' as const, maxPerWorker: 4, warmPool: 0 }, shell: { type: 'shell' as const, placement: 'pod' as const, warmPool: 0 } },
};

async function ready(o: Orchestrator, body: Obj): Promise<Obj> {
  const created = await call(o, 'POST', '/sandboxes', body);
  expect(created.statusCode, created.body).toBe(201);
  const info = (await call(o, 'GET', `/sandboxes/${created.json().sandbox_id}/wait?timeout=20`)).json();
  expect(info.status, JSON.stringify(info)).toBe('ready');
  return info;
}

/** A PATCH of the subresource as a client sends it (bearer token, the media type given). */
const patchEphemeral = (pod: string, type: string, body: unknown) =>
  fetch(`${sim.url}/api/v1/namespaces/grove/pods/${pod}/ephemeralcontainers`, { method: 'PATCH', headers: { authorization: `Bearer ${sim.token}`, 'content-type': type }, body: JSON.stringify(body) });

beforeAll(async () => {
  await sim.start();
  orch = await startOrchestrator(sim, CONFIG);
  other = await startOrchestrator(sim, CONFIG, 'orch-b');
}, 30_000);

afterAll(async () => {
  await closeCluster([orch, other].filter(Boolean), sim);
  await kubelet.closeAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('a shell paired with a claw sandbox, on the claw pod', () => {
  test('an ephemeral container of the claw pod runs its worker; it reaches the apps; closing it ends the worker, the pod stays', async () => {
    const claw = await ready(orch, { type: 'claw', world_seed: 4, apps: ['todo'] });
    const pod = podOf(claw.sandbox_id);
    const shell = await ready(orch, { type: 'shell', claw_sandbox: claw.sandbox_id });
    expect(sim.count('PATCH pods/ephemeralcontainers')).toBe(1);
    expect(shell.shell.notes.join(' ')).toContain(`paired with claw sandbox ${claw.sandbox_id}: runs in an ephemeral container of its pod`);
    // No new pod: the shell's record is on the claw pod, naming its own worker there.
    const after = sim.listPodObjects().find((p) => p.metadata.name === pod.metadata.name)!;
    expect(sim.listPodObjects().length).toBe(1);
    const rec = podRecords(after as never).get(shell.sandbox_id)!;
    expect(rec).toMatchObject({ type: 'shell', state: 'ready', paired: { port: CONFIG.workerPort + 1 } });
    const [eph] = after.spec.ephemeralContainers;
    expect(eph.name).toBe(rec.paired!.container);
    // Nothing of the pod but its network: no volume, another user, no capability, not the worker's token.
    expect(eph.volumeMounts).toBeUndefined();
    expect(after.spec.shareProcessNamespace).toBeUndefined();
    expect(eph.securityContext).toMatchObject({ runAsUser: 10002, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(envOf(eph).GROVE_API_KEY).not.toBe(envOf(after.spec.containers[0]).GROVE_API_KEY);
    expect(envOf(eph)).toMatchObject({ GROVE_PORT: String(CONFIG.workerPort + 1), GROVE_SHELL_ISOLATION: 'pod', GROVE_MAX_SANDBOXES: '1' });
    expect(after.status.ephemeralContainerStatuses).toEqual([expect.objectContaining({ name: eph.name, state: { running: expect.anything() } })]);

    // The apps from the shell, with the pairing's environment (here the same loopback; real containers: the slow test).
    const exec = async (command: string, o = orch) => (await call(o, 'POST', `/sandboxes/${shell.sandbox_id}/exec`, { command, timeout_s: 20 })).json();
    expect((await exec('echo "$CLAW_ORIGIN"')).stdout.trim()).toBe(claw.claw.origin);
    const made = await exec(`node -e 'fetch(process.env.CLAW_ORIGIN + "/api/tools/todo_create", { method: "POST", headers: { authorization: "Bearer " + process.env.CLAW_TOKEN, "content-type": "application/json" }, body: JSON.stringify({ title: "from the shell" }) }).then((r) => r.text()).then(console.log)'`);
    expect(JSON.parse(made.stdout).todo.title, made.stderr).toBe('from the shell');
    const audit = (await inject('GET', `/sandboxes/${claw.sandbox_id}/claw/audit`)).json().entries;
    expect(audit.map((e: Obj) => [e.tool, e.status])).toEqual([['todo_create', 200]]);

    // Another replica serves it from its record (the ephemeral container's port and token).
    expect((await exec('echo other', other)).stdout).toBe('other\n');

    // Closing: the shell's worker ends (its container terminated; it stays in the spec), the pod and the claw stay.
    expect((await inject('DELETE', `/sandboxes/${shell.sandbox_id}`)).statusCode).toBe(204);
    await until(() => kubelet.exited.includes(`${pod.metadata.name}/${eph.name}`), 'the shell worker ended');
    const closed = await until(() => sim.listPodObjects().find((p) => p.metadata.name === pod.metadata.name && p.status.ephemeralContainerStatuses?.[0]?.state?.terminated), 'the container terminated');
    expect(closed.spec.ephemeralContainers.length).toBe(1);
    expect(podRecords(closed as never).get(shell.sandbox_id)).toMatchObject({ state: 'closed' });
    expect((await inject('GET', `/sandboxes/${claw.sandbox_id}/claw/state`)).statusCode).toBe(200);

    // A second shell takes the next port and container; closing the claw sandbox then the shell deletes the pod.
    const again = await ready(orch, { type: 'shell', claw_sandbox: claw.sandbox_id });
    expect(podRecords(podOf(again.sandbox_id) as never).get(again.sandbox_id)!.paired!.port).toBe(CONFIG.workerPort + 2);
    expect((await inject('DELETE', `/sandboxes/${claw.sandbox_id}`)).statusCode).toBe(204);
    expect(sim.listPodObjects().some((p) => p.metadata.name === pod.metadata.name)).toBe(true);
    expect((await inject('DELETE', `/sandboxes/${again.sandbox_id}`)).statusCode).toBe(204);
    await until(() => !sim.listPodObjects().some((p) => p.metadata.name === pod.metadata.name), 'the claw pod deleted');
  }, 60_000);

  test('the pairings the local backend refuses are refused with the same codes; an image cannot be paired', async () => {
    const claw = await ready(orch, { type: 'claw', world_seed: 5, apps: ['todo'] });
    const plainShell = await ready(orch, { type: 'shell' });
    for (const [body, code] of [
      [{ claw_sandbox: 'sb_nope' }, 'invalid_request'],
      [{ claw_sandbox: plainShell.sandbox_id }, 'invalid_request'],
      [{ claw_sandbox: claw.sandbox_id, image: 'docker.io/library/python:3.12' }, 'not_supported_on_backend'],
      [{ claw_sandbox: claw.sandbox_id, allow: ['example.com'] }, 'not_supported_on_backend'],
    ] as Array<[Obj, string]>) {
      const r = await inject('POST', '/sandboxes', { type: 'shell', ...body });
      expect([r.statusCode, r.json().error.code], r.body).toEqual([400, code]);
    }
    expect((await inject('DELETE', `/sandboxes/${claw.sandbox_id}`)).statusCode).toBe(204);
    const gone = await inject('POST', '/sandboxes', { type: 'shell', claw_sandbox: claw.sandbox_id });
    expect([gone.statusCode, gone.json().error.code]).toEqual([400, 'invalid_request']);
    expect(sim.count('PATCH pods/ephemeralcontainers')).toBe(2); // the two shells of the test before
    await inject('DELETE', `/sandboxes/${plainShell.sandbox_id}`);
  }, 60_000);
});

describe('a paired shell through another replica, and expired', () => {
  test('a replica that did not create the claw sandbox pairs a shell with it; a paired shell that expires has its worker ended', async () => {
    const claw = await ready(orch, { type: 'claw', world_seed: 7, apps: ['todo'] });
    const pod = podOf(claw.sandbox_id);
    const shell = await ready(other, { type: 'shell', claw_sandbox: claw.sandbox_id, ttl_seconds: 3 });
    expect(podOf(shell.sandbox_id).metadata.name).toBe(pod.metadata.name);
    const seen = await call(other, 'POST', `/sandboxes/${shell.sandbox_id}/exec`, { command: 'echo "$CLAW_ORIGIN"', timeout_s: 20 });
    expect(seen.json().stdout.trim()).toBe(claw.claw.origin);
    // Its TTL ends it (whichever replica closes it first): the worker in the container is ended, the pod stays.
    const eph = podOf(shell.sandbox_id).spec.ephemeralContainers.at(-1).name as string;
    await until(() => kubelet.exited.includes(`${pod.metadata.name}/${eph}`), 'the expired shell worker ended', 30_000);
    expect((await inject('GET', `/sandboxes/${claw.sandbox_id}/claw/state`)).statusCode).toBe(200);
    expect((await inject('DELETE', `/sandboxes/${claw.sandbox_id}`)).statusCode).toBe(204);
    await until(() => !sim.listPodObjects().some((p) => p.metadata.name === pod.metadata.name), 'the claw pod deleted', 30_000);
  }, 60_000);
});

describe('a claw pod takes 8 paired shells in its life', () => {
  test('each one an ephemeral container that stays; the 9th answers 400 invalid_request and adds nothing', async () => {
    const claw = await ready(orch, { type: 'claw', world_seed: 8, apps: ['todo'] });
    const pod = podOf(claw.sandbox_id);
    const ports: number[] = [];
    for (let i = 0; i < 8; i++) {
      const shell = await ready(orch, { type: 'shell', claw_sandbox: claw.sandbox_id });
      ports.push(podRecords(podOf(shell.sandbox_id) as never).get(shell.sandbox_id)!.paired!.port);
      expect((await inject('DELETE', `/sandboxes/${shell.sandbox_id}`)).statusCode).toBe(204);
    }
    expect(ports).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => CONFIG.workerPort + n));
    const before = sim.count('PATCH pods/ephemeralcontainers');
    const ninth = await inject('POST', '/sandboxes', { type: 'shell', claw_sandbox: claw.sandbox_id });
    expect([ninth.statusCode, ninth.json().error.code]).toEqual([400, 'invalid_request']);
    expect(ninth.json().error.message).toMatch(/has had 8 paired shells/);
    expect(sim.count('PATCH pods/ephemeralcontainers')).toBe(before);
    expect(sim.listPodObjects().find((p) => p.metadata.name === pod.metadata.name)!.spec.ephemeralContainers).toHaveLength(8);
    expect((await inject('DELETE', `/sandboxes/${claw.sandbox_id}`)).statusCode).toBe(204);
  }, 90_000);
});

describe('the ephemeralcontainers subresource of the simulated API server', () => {
  test('strategic merge adds by name; existing containers cannot be removed or changed; forbidden fields, stale versions and media types', async () => {
    const claw = await ready(orch, { type: 'claw', world_seed: 6, apps: ['todo'] });
    const pod = podOf(claw.sandbox_id);
    const name = pod.metadata.name as string;
    const c = { name: 'debug', image: 'grove-worker:dev', args: ['worker'] };
    const added = await patchEphemeral(name, 'application/strategic-merge-patch+json', { spec: { ephemeralContainers: [c] } });
    expect(added.status).toBe(200);
    expect((await added.json()).spec.ephemeralContainers).toEqual([c]);
    const again = await patchEphemeral(name, 'application/strategic-merge-patch+json', { spec: { ephemeralContainers: [c] } });
    expect(again.status).toBe(200); // the same container merged onto itself: no change
    for (const [type, body, status] of [
      ['application/merge-patch+json', { spec: { ephemeralContainers: [] } }, 422], // removal
      ['application/strategic-merge-patch+json', { spec: { ephemeralContainers: [{ ...c, image: 'other:1' }] } }, 422], // change
      ['application/strategic-merge-patch+json', { spec: { ephemeralContainers: [{ name: 'p', image: 'x:1', ports: [{ containerPort: 1 }] }] } }, 422],
      ['application/strategic-merge-patch+json', { spec: { ephemeralContainers: [{ name: 'r', image: 'x:1', resources: { limits: { cpu: '1' } } }] } }, 422],
      ['application/strategic-merge-patch+json', { spec: { ephemeralContainers: [{ name: 'worker', image: 'x:1' }] } }, 422], // the pod's container's name
      ['application/strategic-merge-patch+json', { metadata: { resourceVersion: '1' }, spec: { ephemeralContainers: [{ name: 'late', image: 'x:1' }] } }, 409],
      ['application/yaml', { spec: {} }, 415],
    ] as Array<[string, Obj, number]>) {
      const r = await patchEphemeral(name, type, body);
      expect([r.status, (await r.json()).kind], JSON.stringify(body)).toEqual([status, 'Status']);
    }
    const listed = await patchEphemeral(name, 'application/json-patch+json', [{ op: 'add', path: '/spec/ephemeralContainers/-', value: { name: 'second', image: 'x:1' } }]);
    expect(listed.status).toBe(200);
    expect((await listed.json()).spec.ephemeralContainers.map((e: Obj) => e.name)).toEqual(['debug', 'second']);
    expect((await inject('DELETE', `/sandboxes/${claw.sandbox_id}`)).statusCode).toBe(204);
  }, 60_000);
});
