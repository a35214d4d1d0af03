// Claw-Eval episodes (claw sandboxes with `claw_eval_task`) on the kubernetes backend, against the simulated API
// server with each pod run as the real `grove worker` server in this process (startServer in worker mode with the
// pod spec's environment: the fixture checkout at the orchestrator's path, its services WITHOUT bubblewrap, the pod
// being their boundary). The orchestrator relays the calls, answers the simulated user on its user model and grades
// with its own checkout on the trace read back from the worker: grades equal to the same trajectories graded on one
// machine (the batch path). Attacks: unknown and path-shaped task ids, sandbox-tool tasks, no or wrong pod token on
// the worker-only routes, those routes on the wrong sandbox, a client switching a local server to unconfined services.
// The same with podman containers of an image holding the checkout: claw-eval-pods.slow.test.ts.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseK8sConfig } from '../../k8s/config.ts';
import { renderManifests } from '../../k8s/manifests.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodIps } from '../../k8s/sim/kubelets.ts';
import type { Kubelet } from '../../k8s/sim/pod-status.ts';
import { podRecords } from '../../k8s/records.ts';
import { ClawEvalHost, prepareClawEvalCheckout, type PreparedCheckout } from '../../claw-env/claw-eval/host.ts';
import { callTool, listTools } from '../../mcp/sandbox-tools.ts';
import { runClawEval } from '../../runner/claw-eval/run.ts';
import { chatUserModel } from '../../runner/claw-eval/trial.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { clawEvalPodHooks } from '../../server/claw-eval-pods.ts';
import { equipClawEvalHost } from '../../server/claw-eval.ts';
import { startServer, type RunningServer } from '../../server/server.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';
import { drive, scripted, type Turn } from './claw-eval-drive.ts';
import { apiOn } from '../support/http-api.ts';
import { startOrchestrator, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const ROOT = path.resolve(__dirname, '../claw-env/fixtures/claw-eval-checkout');
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-claw-eval-'));
const CACHE = path.join(tmp, 'cache');
const devNull = { write: () => true } as unknown as NodeJS.WritableStream;

/** Pods run as `grove worker` servers in this process, configured from the pod spec's environment only. */
class WorkerKubelet implements Kubelet {
  readonly ips = new PodIps();
  readonly workers = new Map<string, { server: RunningServer; url: string; token: string; env: Record<string, string> }>();
  async start(pod: Obj): Promise<{ ip: string }> {
    const env: Record<string, string> = Object.fromEntries((pod.spec.containers[0].env ?? []).map((e: Obj) => [e.name, e.value]));
    const ip = this.ips.next();
    // the pod's environment as given, on its address; the index URL only keys the venv the test built
    const config = loadConfig({ env: { ...env, GROVE_HOST: ip, GROVE_DATA_DIR: path.join(tmp, pod.metadata.name), ...(INDEX ? { GROVE_CLAW_EVAL_INDEX_URL: INDEX } : {}) } });
    const server = await startServer(config, { worker: true, logStream: devNull });
    this.workers.set(pod.metadata.name, { server, url: server.url, token: env.GROVE_API_KEY!, env });
    return { ip };
  }
  async stop(pod: Obj): Promise<void> {
    const w = this.workers.get(pod.metadata.name);
    this.workers.delete(pod.metadata.name);
    await w?.server.close();
  }
}

const kubelet = new WorkerKubelet();
const sim = new KubeSim(kubelet);
let orch: Orchestrator;
let host: ClawEvalHost;
let prepared: PreparedCheckout;
let user: OpenAITestServer;
let judge: OpenAITestServer;
const api = (method: string, url: string, body?: unknown) => orch.app.inject({ method: method as 'GET', url, ...(body === undefined ? {} : { payload: body as Obj }) }).then((r) => ({ status: r.statusCode, json: (r.body ? JSON.parse(r.body) : undefined) as any, text: r.body }));

const CONFIG = {
  workerPort: 21000 + Math.floor(Math.random() * 1000),
  templates: {
    browser: { type: 'browser' as const, placement: 'shared' as const, warmPool: 0 },
    'claw-eval': { type: 'claw-eval' as const, placement: 'pod' as const, warmPool: 0, image: 'grove-claw-eval:test', clawEval: ROOT, clawEvalCache: CACHE },
  },
};

/** Service supervisors this process started (the worker's ClawEvalServiceSet), and every process of their groups. */
const cmdline = (pid: string) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};
const statOf = (pid: string) => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), pgid: Number(f[2]) };
  } catch {
    return null;
  }
};
const pids = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d));
const supervisors = () => pids().filter((p) => statOf(p)?.ppid === process.pid && cmdline(p).includes('grove_claw_eval_driver.py') && cmdline(p).includes('supervise'));
const inGroups = (groups: Set<number>) => pids().filter((p) => groups.has(statOf(p)?.pgid ?? -1));

// N01's two trajectories (claw-eval-episode.slow's): the reference (score 1) and a failing call then recovery (0.68)
const N01: Turn[][] = [
  [{ call: 'notes_list', args: {} }, { call: 'notes_get', args: { note_id: 'n1' } }, { call: 'notes_get', args: { note_id: 'n2' } }, { say: 'Budget review: 120k. Team offsite moved to Friday.' }],
  [{ call: 'notes_get', args: { note_id: { bad: 1 } } }, { call: 'notes_get', args: { note_id: 'n1' } }, { call: 'notes_list', args: {} }, { say: 'Budget only.' }],
];
// N04: asks, gets the simulated user's answer, lists the notes, answers; the user is then done
const CLARIFY: Turn[] = [{ say: 'Which note do you mean?' }, { call: 'notes_list', args: {} }, { say: 'It is the Budget review note.' }];
// N03: graded with the judge
const DIGEST: Turn[] = [{ call: 'notes_list', args: {} }, { call: 'tickets_list', args: {} }, { say: 'Notes: Budget review, Team offsite. Tickets: TK-9.' }];

async function createEpisode(task: string): Promise<string> {
  const r = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: task });
  expect(r.status, r.text).toBe(201);
  const w = await api('GET', `/sandboxes/${r.json.sandbox_id}/wait?timeout=120`);
  expect(w.json.status, w.text).toBe('ready');
  return r.json.sandbox_id;
}

async function batchGrade(task: string, turns: Turn[]): Promise<[number, Record<string, number>]> {
  const b = await runClawEval({
    root: prepared.root, python: prepared.python, driver: prepared.driver, tasks: [prepared.tasks.find((t) => t.id === task)!], trials: 1, concurrency: 1, policy: scripted(turns),
    userModel: chatUserModel({ baseURL: user.url, model: 'user-m' }),
    judge: { model: 'test-judge', relay: async () => '{"score": 0.6, "reasoning": "names the notes, misses a ticket"}' },
  });
  const g = b.results[0]!.grade!;
  return [g.task_score, g.scores];
}

describe('Claw-Eval episodes on worker pods (in-process workers, services without bubblewrap)', () => {
  beforeAll(async () => {
    user = await startOpenAIServer((req) => (JSON.stringify(req.body.messages).includes('Budget review') ? 'Thanks! [DONE]' : 'The one about money, I think.'));
    judge = await startOpenAIServer(() => '{"score": 0.6, "reasoning": "names the notes, misses a ticket"}');
    // the venv the pods' image would hold (the template's clawEvalCache), and the orchestrator's own
    prepared = await prepareClawEvalCheckout({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX });
    await sim.start();
    orch = await startOrchestrator(sim, CONFIG);
    host = new ClawEvalHost({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX, judge: { model: 'test-judge', relay: async (req) => { const r = await fetch(`${judge.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test-judge', messages: req.messages }) }); return ((await r.json()) as Obj).choices[0].message.content; } } });
    equipClawEvalHost(host, loadConfig({ env: {}, flags: { clawEvalUserUrl: user.url, clawEvalUserModel: 'user-m' } }), undefined);
    orch.backend.clawEval = clawEvalPodHooks(host);
  }, 600_000);

  afterAll(async () => {
    await orch?.close();
    await sim.close();
    for (const w of kubelet.workers.values()) await w.server.close();
    await host?.close();
    await user?.close();
    await judge?.close();
    if (prepared) rmSync(prepared.tmp, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  test('REST: calls relayed to the pod\'s services, graded on the orchestrator as one machine grades the same trajectories', async () => {
    const groups = new Set<number>();
    const scores = [];
    for (const turns of N01) {
      const id = await createEpisode('N01_notes_summary');
      const pod = sim.listPodObjects().find((p) => podRecords(p as never).has(id))! as Obj;
      // a pod of the claw-eval template, one episode, its worker told the checkout's path and pod isolation
      expect(Object.values(pod.metadata.labels)).toContain('claw-eval');
      const w = kubelet.workers.get(pod.metadata.name)!;
      expect(w.env).toMatchObject({ GROVE_CLAW_EVAL: ROOT, GROVE_CLAW_EVAL_CACHE: CACHE, GROVE_CLAW_EVAL_ISOLATION: 'pod', GROVE_MAX_SANDBOXES: '1' });
      expect(Object.keys(w.env).filter((k) => /JUDGE|USER_(URL|MODEL|KEY)/.test(k))).toEqual([]);
      // a pod reaching for the orchestrator: the worker egress policy selects this pod and allows no egress at all
      // (the simulated cluster does not enforce it: its pods share the host's network)
      const egress = renderManifests(parseK8sConfig(CONFIG)).find((m) => m.kind === 'NetworkPolicy' && (m as Obj).metadata.name === 'grove-sandbox-egress') as Obj;
      for (const [k, v] of Object.entries(egress.spec.podSelector.matchLabels)) expect(pod.metadata.labels[k], k).toBe(v);
      expect(egress.spec.egress).toEqual([]);
      const info = (await api('GET', `/sandboxes/${id}`)).json;
      expect(info.claw_eval).toMatchObject({ task_id: 'N01_notes_summary', prompt: 'Summarise my notes. Do not delete anything.', tools: ['notes_list', 'notes_get', 'notes_delete'], graded: false });
      // the services run as this process's children, unconfined (no bwrap), in a process group of their own
      const sup = supervisors();
      expect(sup.length).toBeGreaterThan(0);
      for (const p of sup) groups.add(statOf(p)!.pgid);
      expect(sup.every((p) => statOf(p)!.pgid === Number(p))).toBe(true);
      expect((await api('GET', `/sandboxes/${id}/claw-eval/tools`)).json.tools.map((t: Obj) => t.function.name)).toEqual(['notes_list', 'notes_get', 'notes_delete']);
      const { grade, calls } = await drive(api, id, turns);
      expect(calls.length).toBe(3);
      scores.push([grade.task_score, grade.scores]);
      // over: calls refused, the same grade again
      expect((await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'notes_list' })).json.error.code).toBe('invalid_request');
      expect((await api('POST', `/sandboxes/${id}/claw-eval/grade`, { answer: 'other' })).json.task_score).toBe(grade.task_score);
      expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    }
    expect(scores.map((s) => s[0])).toEqual([1, 0.68]);
    expect(scores).toEqual([await batchGrade('N01_notes_summary', N01[0]!), await batchGrade('N01_notes_summary', N01[1]!)]);
    // nothing of the services is left (the whole group is killed at the grade's end and at delete)
    for (let end = Date.now() + 10_000; inGroups(groups).length && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    expect(inGroups(groups)).toEqual([]);
  }, 300_000);

  test('MCP: the same episode object lists and calls the task\'s tools; user_agent replies answered by the orchestrator\'s user model; a judged task', async () => {
    const id = await createEpisode('N02_ticket_close');
    const mcpHost = { registry: orch.app.grove.registry };
    expect(listTools(mcpHost, id).map((t) => t.name)).toEqual(((await api('GET', `/sandboxes/${id}/claw-eval/tools`)).json.tools as Obj[]).map((t) => t.function.name));
    const r = await callTool(mcpHost, id, 'tickets_list', {});
    expect(r.isError).toBeFalsy();
    expect((await api('GET', `/sandboxes/${id}`)).json.claw_eval.task_id).toBe('N02_ticket_close');
    await api('DELETE', `/sandboxes/${id}`);

    const before = user.requests.length;
    const u = await createEpisode('N04_user_agent');
    const { replies, grade } = await drive(api, u, CLARIFY);
    expect(replies).toEqual([
      { user: '[user_agent]\nThe one about money, I think.', done: false, rounds: 1 },
      { user: null, done: true, rounds: 1 },
    ]);
    expect(user.requests.length - before).toBe(2);
    expect(JSON.stringify(user.requests[before]!.body.messages)).toContain('remembers only that the note was about money');
    expect((await api('POST', `/sandboxes/${u}/claw-eval/reply`, { text: 'more' })).json.error.code).toBe('invalid_request');
    await api('DELETE', `/sandboxes/${u}`);
    expect([grade.task_score, grade.scores]).toEqual(await batchGrade('N04_user_agent', CLARIFY));
    expect(grade.task_score).toBe(1);

    const seen = judge.requests.length;
    const j = await createEpisode('N03_judged_digest');
    const judged = await drive(api, j, DIGEST);
    await api('DELETE', `/sandboxes/${j}`);
    expect(judged.grade).toMatchObject({ task_score: 0.84, judge_calls: 1 });
    expect(judge.requests.length - seen).toBe(1);
    expect([judged.grade.task_score, judged.grade.scores]).toEqual(await batchGrade('N03_judged_digest', DIGEST));
  }, 300_000);

  test('through a replica that did not create it: tools, calls, the simulated user and the grade', async () => {
    const b = await startOrchestrator(sim, CONFIG, 'orch-b');
    try {
      b.backend.clawEval = clawEvalPodHooks(host);
      const onB = (method: string, url: string, body?: unknown) => b.app.inject({ method: method as 'GET', url, ...(body === undefined ? {} : { payload: body as Obj }) }).then((r) => ({ status: r.statusCode, json: (r.body ? JSON.parse(r.body) : undefined) as any, text: r.body }));
      const id = await createEpisode('N04_user_agent');
      // the first turn on A, the rest (and the grade) on B, which adopts the episode from its record and its worker
      const first = await api('POST', `/sandboxes/${id}/claw-eval/reply`, { text: 'Which note do you mean?' });
      expect(first.json).toEqual({ user: '[user_agent]\nThe one about money, I think.', done: false, rounds: 1 });
      let tools;
      for (let end = Date.now() + 20_000; ; ) {
        tools = await onB('GET', `/sandboxes/${id}/claw-eval/tools`);
        if (tools.status === 200 || Date.now() > end) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(tools.json.tools.map((t: Obj) => t.function.name)).toContain('notes_list');
      const { replies, grade } = await drive(onB, id, CLARIFY.slice(1));
      expect(replies).toEqual([{ user: null, done: true, rounds: 1 }]);
      expect([grade.task_score, grade.scores]).toEqual(await batchGrade('N04_user_agent', CLARIFY));
      await onB('DELETE', `/sandboxes/${id}`);
    } finally {
      await b.close();
    }
  }, 300_000);

  test('attacker: unknown and path-shaped task ids, sandbox-tool tasks, fields the checkout owns: stable 4xx before any pod', async () => {
    const pods = sim.listPodObjects().length;
    for (const bad of ['../N01_notes_summary', 'N01_notes_summary/../../../etc', '/etc/passwd', '..%2fN01_notes_summary', 'tasks/N01_notes_summary', 'nope']) {
      const r = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: bad });
      expect([r.status, r.json.error.code], bad).toEqual([404, 'task_not_found']);
    }
    const shell = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N05_shell' });
    expect([shell.status, shell.json.error.code]).toEqual([400, 'not_supported_on_backend']);
    expect(shell.json.error.message).toMatch(/sandbox tools/);
    expect((await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N06_web_search' })).json.error.code).toBe('invalid_request');
    expect((await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N01_notes_summary', task_id: 'x' })).status).toBe(400);
    // a client cannot ask for unconfined services: no such field
    expect((await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N01_notes_summary', isolation: 'pod' })).status).toBe(400);
    expect(sim.listPodObjects().length).toBe(pods);
  }, 60_000);

  test('attacker: the worker-only routes without or with a wrong pod token, on the wrong sandbox, on a worker without the checkout', async () => {
    const id = await createEpisode('N01_notes_summary');
    const pod = sim.listPodObjects().find((p) => podRecords(p as never).has(id))! as Obj;
    const w = kubelet.workers.get(pod.metadata.name)!;
    const wid = podRecords(pod as never).get(id)!.worker!;
    for (const [m, u, b] of [['GET', `/worker/claw-eval/${wid}/conversation`, undefined], ['POST', `/worker/claw-eval/${wid}/finish`, {}], ['POST', `/worker/claw-eval/${wid}/turn`, { text: 'x', user: null }]] as const) {
      expect((await apiOn(w.url)(m, u, b)).status, `${u} no token`).toBe(401);
      expect((await apiOn(w.url, { 'x-api-key': 'wrong-token-0123456789' })(m, u, b)).status, `${u} wrong token`).toBe(403);
    }
    const own = apiOn(w.url, { 'x-api-key': w.token });
    // the pod's token reads its own episode
    expect((await own('GET', `/worker/claw-eval/${wid}/conversation`)).json).toMatchObject({ user_rounds: 0, over: false });
    expect((await own('POST', `/worker/claw-eval/${wid}/turn`, { text: 'x', user: 'y', extra: 1 })).status).toBe(400);
    // a simulated user's turn on a task without one is refused by the worker
    expect((await own('POST', `/worker/claw-eval/${wid}/turn`, { text: 'x', user: 'y' })).json.error.code).toBe('invalid_request');
    // the worker itself does not grade nor answer a user (no judge, no user model in a pod)
    expect((await own('POST', `/sandboxes/${wid}/claw-eval/grade`, {})).json.error.code).toBe('invalid_request');
    expect((await own('POST', `/sandboxes/${wid}/claw-eval/reply`, { text: 'x' })).json.error.code).toBe('invalid_request');
    // unknown sandbox ids, path-shaped ones
    for (const bad of ['nope', '..', '..%2f..%2fetc']) expect((await own('GET', `/worker/claw-eval/${bad}/conversation`)).status, bad).toBe(404);
    // one episode per pod: the worker takes no second sandbox (no other sandbox shares its services' pod)
    const second = await own('POST', '/sandboxes', { type: 'claw' });
    expect([second.status, second.json.error.code]).toEqual([503, 'capacity_exhausted']);
    await api('DELETE', `/sandboxes/${id}`);
    // a browser worker (no checkout): the route has no episode to serve
    const browserWorker = await startServer(loadConfig({ env: { GROVE_API_KEY: 'browser-pod-token-0123456789', GROVE_HOST: '127.0.0.1', GROVE_PORT: '0', GROVE_DATA_DIR: path.join(tmp, 'bw') } }), { worker: true, browser: false, logStream: devNull });
    try {
      const bw = apiOn(browserWorker.url, { 'x-api-key': 'browser-pod-token-0123456789' });
      const c = await bw('POST', '/sandboxes', { type: 'claw' });
      expect((await bw('POST', `/worker/claw-eval/${c.json.sandbox_id}/finish`, {})).json.error.code).toBe('wrong_sandbox_type');
      expect((await bw('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N01_notes_summary' })).json.error.code).toBe('invalid_request');
    } finally {
      await browserWorker.close();
    }
  }, 120_000);

  test('attacker: unconfined services are a worker pod\'s setting only: a local server refuses to start with it', async () => {
    for (const flags of [{ clawEval: ROOT, clawEvalIsolation: 'pod' as const }, { clawEval: ROOT, clawEvalIsolation: 'pod' as const, unsafeShellIsolationPod: true }]) {
      await expect(startServer(loadConfig({ env: {}, flags: { ...flags, dataDir: path.join(tmp, 'local'), host: '127.0.0.1', port: 0 } }), { browser: false, logStream: devNull })).rejects.toThrow(/clawEvalIsolation "pod" is for Claw-Eval worker pods/);
    }
    await expect(startServer(loadConfig({ env: { GROVE_CLAW_EVAL: ROOT, GROVE_CLAW_EVAL_ISOLATION: 'pod' } }), { browser: false, logStream: devNull })).rejects.toThrow(/clawEvalIsolation "pod"/);
  });
});
