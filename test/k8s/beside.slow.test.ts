// The apps served beside the sandbox on its worker pod, with real `grove worker` processes (ProcessKubelet: Chromium
// inside) against the simulated API server: an offline-site task episode on a browser pod scored by its reward (the
// worker's sites on its loopback, the session state read back by the orchestrator), a browser paired with a claw
// sandbox placed on the claw's pod (its UI there, its visits in the audit log, graded), also through a second replica
// that did not create the claw sandbox, and what a page in another sandbox cannot reach. test/k8s/containers.slow.test.ts does the same with the images, as podman containers.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GroveClient } from '../../client/index.ts';
import { podRecords } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { ProcessKubelet } from '../../k8s/sim/kubelets.ts';
import { startOrchestrator, type Orchestrator } from './harness.ts';
import { evaluate, offlineTask, runPlan } from './offline-episode.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-beside-'));
const kubelet = new ProcessKubelet(process.env);
const sim = new KubeSim(kubelet);
kubelet.sim = sim;
let orch: Orchestrator;
let client: GroveClient;
let base = '';
const podOf = (id: string) => sim.listPodObjects().find((p) => podRecords(p as never).get(id)?.state === 'ready')?.metadata.name;

const CONFIG = {
  workerPort: 21000 + Math.floor(Math.random() * 1000),
  readyTimeoutSeconds: 90,
  templates: { browser: { type: 'browser' as const, placement: 'shared' as const, maxPerWorker: 4, warmPool: 0 }, shell: { type: 'shell' as const, placement: 'pod' as const, warmPool: 0 } },
};

beforeAll(async () => {
  await sim.start();
  orch = await startOrchestrator(sim, CONFIG, 'orch-beside', { dataDir: dir });
  base = await orch.app.listen({ host: '127.0.0.1', port: 0 });
  client = new GroveClient({ baseUrl: base });
}, 120_000);

afterAll(async () => {
  await orch?.close();
  await sim.close();
  kubelet.killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('apps beside the sandbox on its pod', { timeout: 300_000 }, () => {
  let sitesHost = '';
  let clawOrigin = '';

  test('an offline-site task on a browser pod: started on the worker\'s sites, scored from the session state read back', async () => {
    const task = offlineTask('Shop--0');
    const sb = await client.createAndWait({ type: 'browser', task: { suite: 'offline', id: task.id }, som: true }, 120);
    expect(sb.status).toBe('ready');
    const first = await client.observation(sb.sandbox_id, { screenshot: 'none' });
    // The worker's own loopback, never the orchestrator's (which runs no sites at all).
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/shop\/.*grove_session=gym-/);
    sitesHost = new URL(first.url).host;
    const answer = await runPlan(client, sb.sandbox_id, task);
    expect(answer).toBeDefined();
    const scored = await evaluate(client, sb.sandbox_id, answer);
    expect(scored.verdict?.outcome, scored.verdict?.reasoning).toBe('success');
    expect(scored.reward).toBe(1);
    // The same task untouched scores 0 from the state (an empty cart), not a judge error.
    const idle = await client.createAndWait({ type: 'browser', task: { suite: 'offline', id: task.id } }, 120);
    const zero = await evaluate(client, idle.sandbox_id, 'done');
    expect(zero.verdict?.outcome, zero.verdict?.reasoning).toBe('failure');
    expect(zero.reward).toBe(0);
    await client.deleteSandbox(sb.sandbox_id);
    await client.deleteSandbox(idle.sandbox_id);
  });

  test('a browser paired with a claw sandbox runs on the claw\'s pod: the UI there, its visits audited, graded', async () => {
    const claw = await client.createAndWait({ type: 'claw', task_id: 'hand-doc-summary' } as never, 120);
    clawOrigin = claw.claw!.origin;
    expect(clawOrigin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const b = await client.createAndWait({ type: 'browser', claw_sandbox: claw.sandbox_id }, 120);
    expect(b.status).toBe('ready');
    expect(podOf(b.sandbox_id)).toBe(podOf(claw.sandbox_id));
    const obs = await client.observation(b.sandbox_id, { screenshot: 'none' });
    expect(obs.url.startsWith(clawOrigin)).toBe(true);
    expect(obs.last_action_error).toBeNull();
    // A page of the apps, opened in the paired browser: the apps read it as actor "web", in the claw's audit log.
    const app = claw.claw!.apps[0]!;
    const page = await client.step(b.sandbox_id, { action: { action: 'goto', url: `${clawOrigin}/${app}` }, screenshot: 'none' });
    expect(page.observation.last_action_error).toBeNull();
    expect(page.observation.url).toBe(`${clawOrigin}/${app}`);
    const audit = await client.request('GET', `/sandboxes/${claw.sandbox_id}/claw/audit`).then(async (r) => JSON.parse(await r.text()));
    expect(audit.entries.some((e: { actor: string }) => e.actor === 'web')).toBe(true);
    const graded = await client.request('POST', `/sandboxes/${claw.sandbox_id}/claw/grade`, {}).then(async (r) => JSON.parse(await r.text()));
    expect(graded).toMatchObject({ task_id: 'hand-doc-summary', passed: false });
    await client.deleteSandbox(b.sandbox_id);
    // Closing the browser left the claw sandbox (and its pod) alone.
    expect((await client.request('GET', `/sandboxes/${claw.sandbox_id}/claw/state`)).status).toBe(200);
    await client.deleteSandbox(claw.sandbox_id);
  });

  test('paired through a replica that did not create the claw sandbox: the browser on the claw\'s pod, at its login', async () => {
    const claw = await client.createAndWait({ type: 'claw', task_id: 'hand-doc-summary' } as never, 120);
    const b = await startOrchestrator(sim, CONFIG, 'orch-beside-b', { dataDir: path.join(dir, 'b') });
    try {
      const viaB = new GroveClient({ baseUrl: await b.app.listen({ host: '127.0.0.1', port: 0 }) });
      const paired = await viaB.createAndWait({ type: 'browser', claw_sandbox: claw.sandbox_id }, 120);
      expect(paired.status).toBe('ready');
      expect(podOf(paired.sandbox_id)).toBe(podOf(claw.sandbox_id));
      const obs = await viaB.observation(paired.sandbox_id, { screenshot: 'none' });
      expect(obs.url.startsWith(claw.claw!.origin)).toBe(true);
      expect(obs.last_action_error).toBeNull();
      // Its page visits are in the claw's audit log, read through the replica that created the claw.
      const app = claw.claw!.apps[0]!;
      await viaB.step(paired.sandbox_id, { action: { action: 'goto', url: `${claw.claw!.origin}/${app}` }, screenshot: 'none' });
      const audit = await client.request('GET', `/sandboxes/${claw.sandbox_id}/claw/audit`).then(async (r) => JSON.parse(await r.text()));
      expect(audit.entries.some((e: { actor: string }) => e.actor === 'web')).toBe(true);
      await viaB.deleteSandbox(paired.sandbox_id);
      viaB.close();
    } finally {
      await b.close();
    }
    await client.deleteSandbox(claw.sandbox_id);
  });

  test('attacker: a page in another sandbox reaches neither the apps of other sandboxes nor the orchestrator', async () => {
    expect(sitesHost && clawOrigin).toBeTruthy();
    const other = await client.createAndWait({ type: 'browser' }, 120);
    for (const url of [`http://${sitesHost}/__grove/state/gym-x`, `${clawOrigin}/login?token=guess`, `${base}/sandboxes`]) {
      const r = await client.step(other.sandbox_id, { action: { action: 'goto', url }, screenshot: 'none' });
      // Refused by the sandbox's network policy before any byte left the browser (loopback is not in its allow list).
      expect(r.observation.last_action_error?.code, url).toBe('network_blocked');
    }
    await client.deleteSandbox(other.sandbox_id);
  });
});
