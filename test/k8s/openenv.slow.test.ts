// OpenEnv on the kubernetes backend: OpenEnv's /ws sessions and its /mcp WebSocket on an orchestrator whose
// sandboxes live on worker pods (the simulated API server; real `grove worker` processes started by ProcessKubelet:
// Chromium and bubblewrap run in them). A browser episode on a shared worker pod, a shell episode on a pod of its own
// (gone with the session), shell tools over /mcp, a wrong key, and a worker killed under a session (a stable error
// code, the session goes on with a new episode). Claw: a task episode on a pod of its own, its terminal reward the
// grade POST /sandboxes/{id}/claw/grade gives (read back from the worker's apps). SWE: the repository prepared in a
// shell pod, the gold patch graded 1 in a grading pod of its own. With OPENENV_CHECKOUT (and OPENENV_PYTHON), OpenEnv's
// own Python clients run their claw, swe and MCP checks against this orchestrator (test/openenv/openenv_client_check.py).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { builtinTask } from '../../claw-env/tasks/index.ts';
import { L } from '../../k8s/labels.ts';
import { podRecords } from '../../k8s/records.ts';
import { fixtureInstances } from '../../swe-env/fixture.ts';
import { Frames } from '../openenv/support.ts';
import { until, type Orchestrator } from './harness.ts';
import { ProcessCluster } from './process-cluster.ts';

const KEY = 'k8s-openenv-key-0123456789';
const cluster = new ProcessCluster('openenv');
const { sim, kubelet } = cluster;
let orch: Orchestrator;
let ws = '';
let siteHost = '';

const PAGE = `<!doctype html><title>start</title>
<button style="position:absolute;left:0;top:0;width:400px;height:300px" onclick="document.title='clicked'">go</button>`;

beforeAll(async () => {
  await cluster.start({
    replica: 'orch-openenv',
    workerPortBase: 20000,
    readyTimeoutSeconds: 90,
    grove: { authDisabled: false, apiKey: KEY },
    site: (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE),
  });
  orch = cluster.orch;
  siteHost = cluster.siteHost;
  ws = cluster.url.replace(/^http/, 'ws');
}, 60_000);

afterAll(() => cluster.close());

const url = (env: string, route = 'ws', key = KEY) => `${ws}/openenv/${key}/${env}/${route}`;
const podOf = (sandboxId: string) => sim.listPodObjects().find((p) => p.metadata.labels?.[L.sandbox] === sandboxId);
/** The worker pod whose records hold the sandbox (a shared browser pod records each sandbox it serves). */
const recordedOn = (sandboxId: string) => sim.listPodObjects().find((p) => podRecords(p as never).has(sandboxId));

const CHECKOUT = process.env.OPENENV_CHECKOUT ?? '';
const PYTHON = process.env.OPENENV_PYTHON ?? 'python3';
const SRC = path.join(CHECKOUT, 'src');
const pyReady = CHECKOUT !== '' && existsSync(path.join(SRC, 'openenv/core/env_client.py')) &&
  spawnSync(PYTHON, ['-c', 'import openenv.core.generic_client'], { env: { ...process.env, PYTHONPATH: SRC } }).status === 0;

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

  test('claw: a task episode on a pod of its own; the terminal reward is the grade /claw/grade gives, from the worker', async () => {
    const task = builtinTask('hand-triage-urgent')!;
    const s = await Frames.open(url('claw'));
    const reset = await s.send({ type: 'reset', data: { task: task.id, episode_id: 'k8s-c' } });
    expect(reset.type, JSON.stringify(reset).slice(0, 300)).toBe('observation');
    expect(reset.data.observation.goal).toBe(task.prompt);
    expect(reset.data.observation.result.tools).toContain('mail_update_message');
    const state = (await s.send({ type: 'state' })).data;
    expect(state).toMatchObject({ episode_id: 'k8s-c', task_id: task.id });
    const sandboxId = state.sandbox_id as string;
    // The apps run on the worker pod (the claw sandbox's own, its records name it); the orchestrator holds a relay.
    const pod = recordedOn(sandboxId);
    expect(pod?.metadata.labels?.[L.sandbox]).toBe(sandboxId);
    expect(kubelet.procs.has(pod!.metadata.name)).toBe(true);
    // The task's solution, one tool step each (the last through OpenEnv's call_tool action), then the answer.
    const steps = task.solution!;
    for (const [i, st] of steps.entries()) {
      const out = i === steps.length - 1
        ? await s.send({ type: 'step', data: { type: 'call_tool', tool_name: st.tool, arguments: st.args } })
        : await s.send({ type: 'step', data: { tool: st.tool, arguments: st.args } });
      expect(out.type, JSON.stringify(out).slice(0, 300)).toBe('observation');
      expect(out.data.done).toBe(false);
    }
    const end = await s.send({ type: 'step', data: { answer: task.answer } });
    expect(end.data).toMatchObject({ done: true, reward: 1, observation: { grade: { task_id: task.id, passed: true } } });
    // The same path as the route: the orchestrator's /claw/grade on the same sandbox gives the same grade.
    const route = await orch.app.inject({ method: 'POST', url: `/sandboxes/${sandboxId}/claw/grade`, headers: { 'x-api-key': KEY }, payload: { answer: task.answer } });
    expect(route.json()).toEqual(end.data.observation.grade);
    // The audit log the grade read is the worker's: every solution step, as actor tool (the call_tool as mcp).
    const audit = await orch.app.inject({ url: `/sandboxes/${sandboxId}/claw/audit`, headers: { 'x-api-key': KEY } });
    expect(audit.json().entries.map((e: { tool: string }) => e.tool)).toEqual(steps.map((st) => st.tool));
    // A new episode of the same task answered at once: nothing done, the grade fails (not a cached one).
    expect((await s.send({ type: 'reset', data: { task: task.id } })).type).toBe('observation');
    const second = (await s.send({ type: 'state' })).data.sandbox_id as string;
    expect(second).not.toBe(sandboxId);
    const lazy = await s.send({ type: 'step', data: { answer: task.answer } });
    expect(lazy.data.done).toBe(true);
    expect(lazy.data.reward).toBeLessThan(1);
    expect(lazy.data.observation.grade.passed).toBe(false);
    // Attacker: an unknown task, a tool the apps do not have, unparseable arguments: stable codes, no stack trace.
    const badTask = await s.send({ type: 'reset', data: { task: '../../etc/passwd' } });
    expect(badTask.data.code).toBe('VALIDATION_ERROR');
    expect((await s.send({ type: 'reset', data: { task: task.id } })).type).toBe('observation');
    const unknown = await s.send({ type: 'step', data: { tool: 'no_such_tool', arguments: {} } });
    expect(unknown.data.observation).toMatchObject({ status: 404, error: { code: 'unknown_tool' } });
    const junk = await s.send({ type: 'step', data: { tool: 'mail_update_message', arguments: '{not json' } });
    expect(junk.data.observation.status).toBeGreaterThanOrEqual(400);
    for (const r of [badTask, unknown, junk]) expect(JSON.stringify(r)).not.toMatch(/at \w+ \(|node_modules|127\.191\./);
    await s.close();
    await until(() => !podOf(sandboxId) && !podOf(second), 'the claw pods to be deleted', 60_000);
  }, 240_000);

  test.runIf(pyReady)("OpenEnv's own Python clients: claw, swe and MCP (over /ws, HTTP /mcp and the /mcp WebSocket) on pods", async () => {
    const script = path.resolve(import.meta.dirname, '../openenv/openenv_client_check.py');
    const run = spawn(PYTHON, [script, ws.replace(/^ws/, 'http'), KEY, 'claw', 'swe', 'mcp', 'wsmcp'], { env: { ...process.env, PYTHONPATH: SRC }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout.on('data', (d: Buffer) => (out += d.toString()));
    run.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((ok) => run.once('exit', ok));
    console.log(out);
    expect(out).toMatch(/^4 passed, 0 failed$/m);
    expect(code).toBe(0);
    await until(() => !sim.listPodObjects().some((p) => p.metadata.labels?.[L.sandbox]), 'every sandbox pod to be deleted', 60_000);
  }, 600_000);

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
  // Last: after it, new pods did not become ready within 90 s in one full run at load ~40 (each test alone passes).
  test('swe: the repository at its base commit in a shell pod; the gold patch graded 1 in a grading pod', async () => {
    const inst = (await fixtureInstances()).find((i) => i.instance_id === 'grove__textkit-2')!;
    const s = await Frames.open(url('swe'));
    const reset = await s.send({ type: 'reset', data: { task: inst.instance_id } });
    expect(reset.type, JSON.stringify(reset).slice(0, 500)).toBe('observation');
    expect(reset.data.observation.problem_statement).toBe(inst.problem_statement);
    const sandboxId = (await s.send({ type: 'state' })).data.sandbox_id as string;
    expect(podOf(sandboxId)).toBeDefined();
    const head = await s.send({ type: 'step', data: { command: 'git rev-parse HEAD && pwd' } });
    expect(head.data.observation.stdout).toBe(`${inst.base_commit}\n/workspace/repo\n`);
    const pods = new Set<string>();
    const watch = setInterval(() => sim.listPodObjects().forEach((p) => p.metadata.labels?.[L.sandbox] && pods.add(p.metadata.labels[L.sandbox])), 50);
    const gold = await s.send({ type: 'step', data: { submit: true, patch: inst.patch } });
    clearInterval(watch);
    expect(gold.data, JSON.stringify(gold).slice(0, 500)).toMatchObject({ done: true, reward: 1, observation: { evaluation: { resolved: true, resolution: 'FULL' } } });
    // Graded in a sandbox of its own (a second shell pod), deleted after.
    const graders = [...pods].filter((id) => id !== sandboxId);
    expect(graders.length).toBeGreaterThanOrEqual(1);
    await until(() => graders.every((id) => !podOf(id)), 'the grading pod to be deleted', 60_000);
    // A command's submit line with an empty diff: reward 0.
    const empty = await s.send({ type: 'step', data: { command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached' } });
    expect(empty.data.code ?? null).toBe('EXECUTION_ERROR');
    expect((await s.send({ type: 'reset', data: { task: inst.instance_id } })).type).toBe('observation');
    const second = (await s.send({ type: 'state' })).data.sandbox_id as string;
    const none = await s.send({ type: 'step', data: { command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached' } });
    expect(none.data).toMatchObject({ done: true, reward: 0, observation: { evaluation: { error: 'empty_patch' } } });
    await s.close();
    await until(() => !podOf(sandboxId) && !podOf(second), 'the swe pods to be deleted', 60_000);
  }, 600_000);
});
