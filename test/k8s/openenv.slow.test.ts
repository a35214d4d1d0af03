// OpenEnv on the kubernetes backend: OpenEnv's /ws sessions and its /mcp WebSocket on an orchestrator whose
// sandboxes live on worker pods (the simulated API server; real `grove worker` processes started by ProcessKubelet:
// Chromium and bubblewrap run in them). A browser episode on a shared worker pod, a shell episode on a pod of its own
// (gone with the session), shell tools over /mcp, a wrong key, and a worker killed under a session (a stable error
// code, the session goes on with a new episode).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { L } from '../../k8s/labels.ts';
import { podRecords } from '../../k8s/records.ts';
import { ProcessKubelet } from '../../k8s/sim/kubelets.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { Frames } from '../openenv/support.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

const KEY = 'k8s-openenv-key-0123456789';
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-openenv-'));
const kubelet = new ProcessKubelet(process.env);
const sim = new KubeSim(kubelet);
kubelet.sim = sim;
let orch: Orchestrator;
let ws = '';
let site: http.Server;
let siteHost = '';

const PAGE = `<!doctype html><title>start</title>
<button style="position:absolute;left:0;top:0;width:400px;height:300px" onclick="document.title='clicked'">go</button>`;

beforeAll(async () => {
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  await sim.start();
  orch = await startOrchestrator(
    sim,
    {
      workerPort: 20000 + Math.floor(Math.random() * 1000),
      readyTimeoutSeconds: 90,
      templates: {
        browser: { type: 'browser', placement: 'shared', maxPerWorker: 4, warmPool: 0 },
        shell: { type: 'shell', placement: 'pod', warmPool: 0 },
      },
    },
    'orch-openenv',
    { dataDir: dir, authDisabled: false, apiKey: KEY },
  );
  ws = (await orch.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
}, 60_000);

afterAll(async () => {
  await orch?.close();
  await sim.close();
  kubelet.killAll();
  await new Promise((r) => site.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const url = (env: string, route = 'ws', key = KEY) => `${ws}/openenv/${key}/${env}/${route}`;
const podOf = (sandboxId: string) => sim.listPodObjects().find((p) => p.metadata.labels?.[L.sandbox] === sandboxId);
/** The worker pod whose records hold the sandbox (a shared browser pod records each sandbox it serves). */
const recordedOn = (sandboxId: string) => sim.listPodObjects().find((p) => podRecords(p as never).has(sandboxId));

describe('OpenEnv on the kubernetes backend', () => {
  test('browser: an episode on a worker pod, stepped through OpenEnv; the sandbox goes with the session', async () => {
    const s = await Frames.open(url('browser'));
    const reset = await s.send({ type: 'reset', data: { start_url: `http://${siteHost}/`, network: { allow: [siteHost] }, viewport: { width: 640, height: 400 }, episode_id: 'k8s-b' } });
    expect(reset.type, JSON.stringify(reset).slice(0, 300)).toBe('observation');
    expect(reset.data.observation).toMatchObject({ title: 'start', screenshot: { mime: 'image/jpeg', width: 640, height: 400 } });
    const sandboxId = (await s.send({ type: 'state' })).data.sandbox_id as string;
    // A worker pod serves the sandbox (its records name it); the orchestrator runs no browser of its own.
    const pod = recordedOn(sandboxId);
    expect(pod?.status?.phase).toBe('Running');
    expect(kubelet.procs.has(pod!.metadata.name)).toBe(true);
    const step = await s.send({ type: 'step', data: { action: { action: 'click', x: 100, y: 100, space: 'css_px' } } });
    expect(step.data).toMatchObject({ done: false, reward: null, observation: { title: 'clicked' } });
    expect(step.data.observation.screenshot.base64.length).toBeGreaterThan(1000);
    // A computer-use tool through OpenEnv's MCP step action runs on the same pod's page.
    const shot = await s.send({ type: 'step', data: { type: 'call_tool', tool_name: 'screenshot', arguments: {} } });
    expect(shot.data.observation.error).toBeNull();
    expect(shot.data.observation.result.content.some((c: { type: string }) => c.type === 'image')).toBe(true);
    await s.close();
    await until(async () => (await orch.app.inject({ method: 'GET', url: `/sandboxes/${sandboxId}`, headers: { 'x-api-key': KEY } })).json().status === 'closed', 'the browser sandbox to close with the session', 30_000);
  }, 180_000);

  test('shell: an episode on a pod of its own; exec steps; the pod is deleted with the session', async () => {
    const s = await Frames.open(url('shell'));
    const reset = await s.send({ type: 'reset', data: { episode_id: 'k8s-s' } });
    expect(reset.type, JSON.stringify(reset).slice(0, 300)).toBe('observation');
    const sandboxId = (await s.send({ type: 'state' })).data.sandbox_id as string;
    expect(podOf(sandboxId)).toBeDefined();
    const out = await s.send({ type: 'step', data: { command: 'echo from-the-pod > /workspace/f && cat /workspace/f' } });
    expect(out.data.observation).toMatchObject({ exit_code: 0, stdout: 'from-the-pod\n' });
    await s.close();
    await until(() => !podOf(sandboxId), 'the shell pod to be deleted', 60_000);
  }, 180_000);

  test('shell tools over the /mcp WebSocket run on the pod; wrong key refused at the handshake', async () => {
    const m = await Frames.open(url('shell', 'mcp'));
    const call = await m.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec', arguments: { command: 'echo over-mcp' } } });
    expect(call.error, JSON.stringify(call).slice(0, 300)).toBeUndefined();
    expect(JSON.stringify(call.result)).toContain('over-mcp');
    const sandboxId = orch.app.grove.registry.list().find((i) => i.type === 'shell' && i.status !== 'closed')?.sandbox_id;
    expect(sandboxId && podOf(sandboxId)).toBeTruthy();
    await m.close();
    await until(() => !podOf(sandboxId!), 'the shell pod to be deleted', 60_000);
    const status = await new Promise<number>((ok, fail) => {
      const w = new WebSocket(url('shell', 'mcp', 'wrong-key-0123456789'));
      w.once('unexpected-response', (_q, r) => {
        ok(r.statusCode ?? 0);
        w.terminate();
      });
      w.once('open', () => ok(101));
      w.once('error', fail);
    });
    expect(status).toBe(403);
  }, 180_000);

  test('attacker/fault: the worker pod killed under a session answers a stable error code; a new reset starts anew', async () => {
    const s = await Frames.open(url('shell'));
    expect((await s.send({ type: 'reset', data: {} })).type).toBe('observation');
    const first = (await s.send({ type: 'state' })).data.sandbox_id as string;
    kubelet.kill(podOf(first)!.metadata.name);
    const err = await until(async () => {
      const r = await s.send({ type: 'step', data: { command: 'true' } });
      return r.type === 'error' ? r : null;
    }, 'a step on the dead pod to fail', 60_000);
    // The k8s backend's own code: worker_lost while the pod is gone, sandbox_closed once the reconciler closed it.
    expect(err.data.code).toBe('EXECUTION_ERROR');
    expect(['worker_lost', 'sandbox_closed']).toContain(err.data.grove_code);
    expect(err.data.message).not.toMatch(/at \w+ \(|node_modules/);
    const again = await s.send({ type: 'reset', data: {} });
    expect(again.type, JSON.stringify(again).slice(0, 300)).toBe('observation');
    const second = (await s.send({ type: 'state' })).data.sandbox_id as string;
    expect(second).not.toBe(first);
    expect((await s.send({ type: 'step', data: { command: 'echo alive' } })).data.observation.stdout).toBe('alive\n');
    await s.close();
    await until(() => !podOf(second), 'the second shell pod to be deleted', 60_000);
  }, 240_000);
});
