// The apps a worker pod serves beside its sandboxes (k8s/beside.ts, k8s/remote-claw.ts, server/worker-sites.ts),
// against the simulated API server with in-process workers that are the real worker app (buildApp + the worker
// routes, with the pod's token; no browser environment, so no Chromium here): Claw sandboxes on pods with every claw
// route answered by the worker's own apps and grader, the offline sites on the worker's loopback, and the attacks on
// these surfaces. Browsers on these pods (offline task episodes, a paired browser): relay.slow and containers.slow.
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SITES_PLACEHOLDER } from '../../k8s/beside.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodIps } from '../../k8s/sim/kubelets.ts';
import type { Kubelet } from '../../k8s/sim/pod-status.ts';
import { podRecords } from '../../k8s/records.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { registerWorkerRoutes } from '../../server/worker-routes.ts';
import { PLACEHOLDER_BASE } from '../../sites/tasks.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-beside-'));

/** Pods run as the real worker app in this process, on a loopback address of their own. */
class AppKubelet implements Kubelet {
  readonly ips = new PodIps();
  readonly apps = new Map<string, { app: FastifyInstance; url: string; token: string }>();
  async start(pod: Obj): Promise<{ ip: string }> {
    const env = Object.fromEntries((pod.spec.containers[0].env ?? []).map((e: Obj) => [e.name, e.value]));
    const ip = this.ips.next();
    const config = loadConfig({ env: {}, flags: { apiKey: env.GROVE_API_KEY, dataDir: path.join(dir, pod.metadata.name), reaperIntervalMs: 200 } });
    const app = await buildApp({ config, environments: {} });
    registerWorkerRoutes(app, config.recordingsDir);
    await app.listen({ host: ip, port: pod.spec.containers[0].ports[0].containerPort });
    this.apps.set(pod.metadata.name, { app, url: `http://${ip}:${(app.server.address() as AddressInfo).port}`, token: env.GROVE_API_KEY });
    return { ip };
  }
  async stop(pod: Obj): Promise<void> {
    const w = this.apps.get(pod.metadata.name);
    this.apps.delete(pod.metadata.name);
    await w?.app.close();
  }
}

const kubelet = new AppKubelet();
const sim = new KubeSim(kubelet);
let orch: Orchestrator;
const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => orch.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Obj }) });

async function createClaw(body: Obj): Promise<string> {
  const created = await inject('POST', '/sandboxes', { type: 'claw', ...body });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().sandbox_id as string;
  const ready = await inject('GET', `/sandboxes/${id}/wait?timeout=20`);
  expect(ready.json().status, ready.body).toBe('ready');
  return id;
}

const CONFIG = {
  workerPort: 20000 + Math.floor(Math.random() * 1000),
  // Shared browser workers: a claw sandbox still gets a pod of its own.
  templates: { browser: { type: 'browser' as const, placement: 'shared' as const, maxPerWorker: 4, warmPool: 0 }, shell: { type: 'shell' as const, placement: 'pod' as const, warmPool: 0 } },
};

beforeAll(async () => {
  await sim.start();
  orch = await startOrchestrator(sim, CONFIG);
}, 30_000);

afterAll(async () => {
  await orch?.close();
  await sim.close();
  for (const w of kubelet.apps.values()) await w.app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Claw sandboxes on worker pods', () => {
  test('a task sandbox on its own pod: tools, calls, state, audit, reset and grading answered by the worker', async () => {
    const id = await createClaw({ task_id: 'hand-doc-summary' });
    const pod = sim.listPodObjects().find((p) => podRecords(p as never).has(id))!;
    expect(podRecords(pod as never).get(id)).toMatchObject({ type: 'claw', state: 'ready', template: 'browser' });
    const info = (await inject('GET', `/sandboxes/${id}`)).json();
    // The apps' origin is the pod's loopback, never the orchestrator's.
    expect(info.claw.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.claw.task_id).toBe('hand-doc-summary');

    const tools = (await inject('GET', `/sandboxes/${id}/claw/tools`)).json().tools as Obj[];
    expect(tools.map((t) => t.function.name)).toContain('mail_list_messages');
    const inbox = (await inject('POST', `/sandboxes/${id}/claw/call`, { tool: 'mail_list_messages', arguments: '{}' })).json();
    expect(inbox).toMatchObject({ status: 200, seq: 1 });
    // The worker's own sandbox holds the audit entry (read there directly with the pod's token).
    const w = kubelet.apps.get(pod.metadata.name)!;
    const wid = podRecords(pod as never).get(id)!.worker!;
    const direct = await fetch(`${w.url}/sandboxes/${wid}/claw/audit`, { headers: { 'x-api-key': w.token } }).then((r) => r.json());
    expect(direct.entries.map((e: Obj) => e.tool)).toEqual(['mail_list_messages']);
    const audit = (await inject('GET', `/sandboxes/${id}/claw/audit?since=0`)).json();
    expect(audit).toEqual(direct);
    expect((await inject('GET', `/sandboxes/${id}/claw/state`)).json().state.mail.messages.length).toBeGreaterThan(0);

    // Graded by the orchestrator on the audit log and state read back: nothing was done yet, so the task fails, with
    // its checks listed — exactly as the worker grades its own sandbox.
    const graded = (await inject('POST', `/sandboxes/${id}/claw/grade`, { answer: 'done' })).json();
    expect(graded).toMatchObject({ task_id: 'hand-doc-summary' });
    expect(graded.passed).toBe(false);
    expect(graded.checks.length).toBeGreaterThan(0);
    const own = await fetch(`${w.url}/sandboxes/${wid}/claw/grade`, { method: 'POST', headers: { 'x-api-key': w.token, 'content-type': 'application/json' }, body: '{"answer":"done"}' }).then((r) => r.json());
    expect(graded).toEqual(own);

    // The in-process shape MCP's claw tools call (ClawSandbox.toolDefs / call), answered by the worker.
    const held = orch.app.grove.registry.use(id) as unknown as { toolDefs(): Obj[]; call(t: string, a: unknown, actor: string): Promise<Obj> };
    expect(held.toolDefs().map((t) => t.function.name)).toEqual(tools.map((t) => t.function.name));
    expect(await held.call('mail_list_messages', {}, 'mcp')).toMatchObject({ status: 200, entry: { seq: 2 } });
    expect((await held.call('mail_get_message', { id: 'nope' }, 'mcp')).status).toBeGreaterThanOrEqual(400);
    expect((await inject('GET', `/sandboxes/${id}/claw/audit?since=1`)).json().entries.map((e: Obj) => e.actor)).toEqual(['mcp', 'mcp']);

    const reset = await inject('POST', `/sandboxes/${id}/claw/reset`, {});
    expect(reset.json()).toEqual({ ok: true });
    expect((await inject('GET', `/sandboxes/${id}/claw/audit`)).json().entries).toEqual([]);

    // Isolation: another claw sandbox never shares the pod (the template is shared), and the pod goes with its sandbox.
    const second = await createClaw({ world_seed: 2 });
    const secondPod = sim.listPodObjects().find((p) => podRecords(p as never).has(second))!;
    expect(secondPod.metadata.name).not.toBe(pod.metadata.name);
    expect(secondPod.metadata.labels['grove.dev/sandbox']).toBe(second);
    for (const x of [id, second]) expect((await inject('DELETE', `/sandboxes/${x}`)).statusCode).toBe(204);
    await until(() => !sim.listPodObjects().some((p) => p.metadata.name === pod.metadata.name || p.metadata.name === secondPod.metadata.name), 'the claw pods deleted');
  });

  test('through a replica that did not create it: its details read from the worker, a browser paired with it on its pod', async () => {
    const id = await createClaw({ task_id: 'hand-doc-summary' });
    const origin = (await inject('GET', `/sandboxes/${id}`)).json().claw;
    const b = await startOrchestrator(sim, CONFIG, 'orch-b');
    try {
      // B never saw the claw sandbox: it adopts it from the pod's record and reads the origin and token from the worker.
      const seen = (await b.app.inject({ method: 'GET', url: `/sandboxes/${id}` })).json();
      expect(seen.claw).toEqual(origin);
      const pods = sim.listPodObjects().length;
      const creates = sim.count('CREATE pods');
      const paired = await b.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', claw_sandbox: id } });
      expect(paired.statusCode, paired.body).toBe(201);
      const browser = paired.json().sandbox_id as string;
      // Placed on the claw's pod (the only place its origin is reachable), by B, whose worker was asked to start it:
      // these workers serve no browsers, so it refused (beside.slow pairs a real one through another replica).
      const settled = (await b.app.inject({ method: 'GET', url: `/sandboxes/${browser}/wait?timeout=20` })).json();
      expect(settled.status).toBe('error');
      expect(settled.error.code).not.toBe('invalid_request');
      expect([sim.listPodObjects().length, sim.count('CREATE pods')]).toEqual([pods, creates]);
      expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${browser}` })).statusCode).toBe(204);
      // A claw id B does not know anywhere: 400 as on the replica that created nothing.
      const none = await b.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', claw_sandbox: 'sb_00000000deadbeef' } });
      expect([none.statusCode, none.json().error.code]).toEqual([400, 'invalid_request']);
    } finally {
      await b.close();
    }
    expect((await inject('DELETE', `/sandboxes/${id}`)).statusCode).toBe(204);
  });

  test('attacks: bad task ids, bad pairing, bad arguments answer 4xx with stable codes; no route leaks the worker', async () => {
    const bad = await inject('POST', '/sandboxes', { type: 'claw', task_id: '../../etc/passwd' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_request');
    const id = await createClaw({ world_seed: 3 });
    const reset = await inject('POST', `/sandboxes/${id}/claw/reset`, { task_id: 'no-such-task' });
    expect([reset.statusCode, reset.json().error.code]).toEqual([400, 'invalid_request']);
    const noTask = await inject('POST', `/sandboxes/${id}/claw/grade`, {});
    expect([noTask.statusCode, noTask.json().error.code]).toEqual([400, 'invalid_request']);
    // Reset to a task on the worker: graded against that task (its id read back from the worker).
    expect((await inject('POST', `/sandboxes/${id}/claw/reset`, { task_id: 'hand-doc-summary' })).statusCode).toBe(200);
    expect((await inject('POST', `/sandboxes/${id}/claw/grade`, {})).json().task_id).toBe('hand-doc-summary');
    // Arguments the apps refuse come back as the app's 4xx inside a 200 (as locally), never as a worker error.
    const call = (await inject('POST', `/sandboxes/${id}/claw/call`, { tool: 'mail_get_message', arguments: { id: '"><script>' } })).json();
    expect(call.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(call)).not.toMatch(/127\.\d+\.\d+\.\d+:\d+|stack/);
    const unknownTool = await inject('POST', `/sandboxes/${id}/claw/call`, { tool: 'rm -rf /', arguments: {} });
    expect(unknownTool.statusCode).toBeLessThan(500);
    // A Claw-Eval task needs the orchestrator's checkout (and a claw-eval template: test/k8s/claw-eval-pods.test.ts).
    const pods = sim.listPodObjects().length;
    const clawEval = await inject('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'T01' });
    expect([clawEval.statusCode, clawEval.json().error.code]).toEqual([400, 'invalid_request']);
    expect(clawEval.json().error.message).toMatch(/no Claw-Eval checkout/);
    // A shell is paired in an ephemeral container of this pod (test/k8s/shell-pairing.test.ts), on the worker image:
    // one with an image of its own cannot be.
    const shell = await inject('POST', '/sandboxes', { type: 'shell', claw_sandbox: id, image: 'docker.io/library/python:3.12' });
    expect([shell.statusCode, shell.json().error.code]).toEqual([400, 'not_supported_on_backend']);
    expect(shell.json().error.message).toMatch(/ephemeral container of the claw sandbox's pod, on the worker image/);
    expect(sim.listPodObjects()).toHaveLength(pods);
    // Pairing with what is not a claw sandbox, or with nothing.
    const nothing = await inject('POST', '/sandboxes', { type: 'browser', claw_sandbox: 'sb_nope' });
    expect([nothing.statusCode, nothing.json().error.code]).toEqual([400, 'invalid_request']);
    expect((await inject('DELETE', `/sandboxes/${id}`)).statusCode).toBe(204);
    const gone = await inject('GET', `/sandboxes/${id}/claw/state`);
    expect(gone.statusCode).toBe(410);
  });
});

describe('offline sites beside the sandbox', () => {
  test('the orchestrator runs no sites: offline tasks start on the placeholder host, which workers replace', async () => {
    expect(SITES_PLACEHOLDER).toBe(PLACEHOLDER_BASE);
    const tasks = (await inject('GET', '/tasks?suite=offline')).json().tasks as Obj[];
    expect(tasks.length).toBeGreaterThan(30);
    const catalog = orch.app.grove.episodes.catalog;
    const resolved = await catalog.resolve({ suite: 'offline', id: 'Shop--0' });
    expect(resolved.startUrl).toMatch(new RegExp(`^${PLACEHOLDER_BASE.replace(/\./g, '\\.')}/shop/.*grove_session=gym-`));
    expect(resolved).toMatchObject({ sitesBesideSandbox: true });
    expect(resolved.allowHost).toBeUndefined();
    // No sites server was started in the orchestrator (nothing of it a pod could be pointed at).
    expect((catalog as unknown as { sites?: unknown }).sites).toBeUndefined();
    const bad = await inject('POST', '/sandboxes', { type: 'browser', task: { suite: 'offline', id: 'Shop--999' } });
    expect([bad.statusCode, bad.json().error.code]).toEqual([404, 'task_not_found']);
    const badSuite = await inject('POST', '/sandboxes', { type: 'browser', task: { suite: '../offline', id: 'Shop--0' } });
    expect(badSuite.statusCode).toBeGreaterThanOrEqual(400);
    expect(badSuite.statusCode).toBeLessThan(500);
  });

  test("a worker's sites: loopback only, behind the pod's token, sessions by a checked id", async () => {
    // A pod to ask: a claw sandbox's.
    const id = await createClaw({});
    const pod = sim.listPodObjects().find((p) => podRecords(p as never).has(id))!;
    const w = kubelet.apps.get(pod.metadata.name)!;
    const call = (method: string, p: string, key: string | null = w.token) => fetch(`${w.url}${p}`, { method, headers: key ? { 'x-api-key': key } : {} });
    expect((await call('POST', '/worker/sites', null)).status).toBe(401);
    expect((await call('POST', '/worker/sites', 'wrong-token-wrong')).status).toBe(403);
    const started = await (await call('POST', '/worker/sites')).json();
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await (await call('POST', '/worker/sites')).json()).url).toBe(started.url);
    const page = await fetch(`${started.url}/shop/?grove_session=gym-test-1`);
    expect(page.status).toBe(200);
    const state = await (await call('GET', '/worker/sites/sessions/gym-test-1')).json();
    expect(state.id).toBe('gym-test-1');
    const missing = await call('GET', '/worker/sites/sessions/gym-never-seen');
    expect([missing.status, (await missing.json()).error.code]).toEqual([404, 'not_found']);
    const traversal = await call('GET', `/worker/sites/sessions/${encodeURIComponent('../../etc/passwd')}`);
    expect([traversal.status, (await traversal.json()).error.code]).toEqual([400, 'invalid_request']);
    expect((await inject('DELETE', `/sandboxes/${id}`)).statusCode).toBe(204);
  });
});
