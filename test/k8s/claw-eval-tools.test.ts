// Claw-Eval tasks with the sandbox tools (Bash, Read, …) on the kubernetes backend, against the simulated API server:
// the episode's claw-eval pod is a `grove worker` server in this process (the services, the trace), its tools shell a
// shell pod of its own run as a real `grove worker` process (ProcessKubelet: uid 10001, /workspace its own, pod
// isolation). The orchestrator runs each sandbox-tool call on the shell pod through the checkout's sandbox server
// functions, records it in the worker's trace, collects the env snapshot there, grades: the grade equals the same
// trajectory graded on one machine (the batch with a local shell sandbox). Both pods go with the episode; a shell
// pod that cannot start fails the create with nothing left; a replica that did not create the episode runs its tools.
// Attacks: the agent's shell reaching the services' pod, its token and files (its processes: the .slow test),
// writing outside /workspace, the tools shell through the public API, forged dispatches on the worker-only route.
// The same with podman containers of the images: claw-eval-tools.slow.test.ts.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClawEvalHost, prepareClawEvalCheckout, type PreparedCheckout } from '../../claw-env/claw-eval/host.ts';
import { ensureClawEvalSandboxPython } from '../../claw-env/claw-eval/pyenv.ts';
import { parseK8sConfig } from '../../k8s/config.ts';
import { L } from '../../k8s/labels.ts';
import { renderManifests } from '../../k8s/manifests.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodIps, ProcessKubelet } from '../../k8s/sim/kubelets.ts';
import type { Kubelet } from '../../k8s/sim/pod-status.ts';
import { podRecords } from '../../k8s/records.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { clawEvalPodHooks } from '../../server/claw-eval-pods.ts';
import { startServer, type RunningServer } from '../../server/server.ts';
import { apiOn } from '../support/http-api.ts';
import { drive, injectCaller, oneMachineWithTools, type Caller, type Turn } from './claw-eval-drive.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const ROOT = path.resolve(__dirname, '../claw-env/fixtures/claw-eval-checkout');
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const devNull = { write: () => true } as unknown as NodeJS.WritableStream;
const isTools = (pod: Obj) => pod.metadata.labels?.[L.template] === 'tools';

/** Claw-eval pods as `grove worker` servers in this process (as claw-eval-pods.test.ts); shell pods as real worker
 * processes (ProcessKubelet); `failTools` makes a shell pod's image unpullable. */
class MixedKubelet implements Kubelet {
  readonly ips = new PodIps();
  readonly procs = new ProcessKubelet(process.env);
  readonly workers = new Map<string, { server: RunningServer; url: string; token: string }>();
  failTools = false;
  constructor(private readonly tmp: string) {}
  async start(pod: Obj) {
    if (isTools(pod)) return this.failTools ? { fail: 'image_pull' as const } : this.procs.start(pod);
    const env: Record<string, string> = Object.fromEntries((pod.spec.containers[0].env ?? []).map((e: Obj) => [e.name, e.value]));
    const ip = this.ips.next();
    const config = loadConfig({ env: { ...env, GROVE_HOST: ip, GROVE_DATA_DIR: path.join(this.tmp, pod.metadata.name), ...(INDEX ? { GROVE_CLAW_EVAL_INDEX_URL: INDEX } : {}) } });
    const server = await startServer(config, { worker: true, logStream: devNull });
    this.workers.set(pod.metadata.name, { server, url: server.url, token: env.GROVE_API_KEY! });
    return { ip };
  }
  async stop(pod: Obj) {
    if (isTools(pod)) return this.procs.stop(pod);
    const w = this.workers.get(pod.metadata.name);
    this.workers.delete(pod.metadata.name);
    await w?.server.close();
  }
}

const BASH: Turn[] = [{ call: 'Bash', args: { command: 'wc -l fixtures/data.txt' } }, { say: 'data.txt has 3 lines.' }];

describe('Claw-Eval sandbox-tool tasks on pods (the tools on a shell pod of their own)', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-claw-eval-tools-'));
  const CACHE = path.join(tmp, 'cache');
  const kubelet = new MixedKubelet(tmp);
  const sim = new KubeSim(kubelet);
  kubelet.procs.sim = sim;
  let orch: Orchestrator;
  let host: ClawEvalHost;
  let prepared: PreparedCheckout;
  let local: RunningServer;
  let config: Parameters<typeof startOrchestrator>[1];
  const api: Caller = (method, url, body) => injectCaller(orch.app)(method, url, body);
  const podsOf = (id: string) => {
    const all = sim.listPodObjects() as Obj[];
    const episode = all.find((p) => podRecords(p as never).has(id));
    const tools = all.find((p) => [...podRecords(p as never).values()].some((r) => r.of === id));
    return { episode, tools };
  };

  beforeAll(async () => {
    prepared = await prepareClawEvalCheckout({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX });
    // the Python the tools shell's image holds (k8s/Dockerfile.claw-eval-sandbox); here the host's, readable by uid 10001
    const sandboxPy = await ensureClawEvalSandboxPython(ROOT, { indexUrl: INDEX });
    config = {
      workerPort: 23000 + Math.floor(Math.random() * 1000),
      readyTimeoutSeconds: 120,
      templates: {
        'claw-eval': { type: 'claw-eval', placement: 'pod', warmPool: 0, image: 'grove-claw-eval:test', clawEval: ROOT, clawEvalCache: CACHE, sandboxTemplate: 'tools', sandboxPython: sandboxPy.python },
        tools: { type: 'shell', placement: 'pod', warmPool: 0 },
      },
    };
    await sim.start();
    orch = await startOrchestrator(sim, config);
    host = new ClawEvalHost({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX });
    orch.backend.clawEval = clawEvalPodHooks(host);
    // one machine: a local server's shell sandboxes (bubblewrap) for the batch
    local = await startServer(loadConfig({ env: {}, flags: { dataDir: path.join(tmp, 'local'), host: '127.0.0.1', port: 0, apiKey: 'local-key-0123456789abcdef' } }), { browser: false, logStream: devNull });
  }, 600_000);

  afterAll(async () => {
    await orch?.close();
    await sim.close();
    kubelet.procs.killAll();
    for (const w of kubelet.workers.values()) await w.server.close();
    await local?.close();
    await host?.close();
    if (prepared) rmSync(prepared.tmp, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  async function createEpisode(task: string, a = api): Promise<string> {
    const r = await a('POST', '/sandboxes', { type: 'claw', claw_eval_task: task });
    expect(r.status, r.text).toBe(201);
    const w = await a('GET', `/sandboxes/${r.json.sandbox_id}/wait?timeout=120`);
    expect(w.json.status, w.text).toBe('ready');
    return r.json.sandbox_id;
  }

  const oneMachine = (task: string, turns: Turn[]) => oneMachineWithTools({ url: local.url, apiKey: 'local-key-0123456789abcdef' }, { root: ROOT, prepared, indexUrl: INDEX }, task, turns);

  test('Bash on the shell pod, recorded in the worker\'s trace, the env snapshot from the shell pod: graded as on one machine; both pods go with the episode', async () => {
    const id = await createEpisode('N05_shell');
    const { episode, tools } = podsOf(id);
    expect(episode && tools && episode.metadata.name !== tools.metadata.name).toBe(true);
    expect(isTools(tools!)).toBe(true);
    const shellId = [...podRecords(tools as never).values()][0]!.id;
    // the tools shell is no sandbox of the API: not listed, not served by its id
    expect((await api('GET', '/sandboxes')).json.sandboxes.map((s: Obj) => s.sandbox_id)).toEqual([id]);
    for (const [m, u, b] of [['GET', `/sandboxes/${shellId}`], ['POST', `/sandboxes/${shellId}/exec`, { command: ['id'] }], ['DELETE', `/sandboxes/${shellId}`]] as const) {
      expect((await api(m, u, b)).status, `${m} ${u}`).toBe(404);
    }
    expect((await api('GET', `/sandboxes/${id}/claw-eval/tools`)).json.tools.map((t: Obj) => t.function.name)).toEqual(['Bash', 'Read', 'Write', 'Glob']);
    const call = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Bash', arguments: { command: 'wc -l fixtures/data.txt; id -u; pwd' } });
    expect(call.json.status, call.text).toBe(200);
    expect(call.json.body.stdout).toBe('3 fixtures/data.txt\n10001\n/workspace\n');
    // the call is in the episode's trace on the claw-eval pod
    const w = kubelet.workers.get(episode!.metadata.name)!;
    const wid = podRecords(episode as never).get(id)!.worker!;
    const conv = await apiOn(w.url, { 'x-api-key': w.token })('GET', `/worker/claw-eval/${wid}/conversation`);
    expect(JSON.stringify(conv.json.messages)).toContain('"name":"Bash"');
    const write = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Write', arguments: { file_path: 'notes/out.txt', content: 'hello' } });
    expect(write.json.status, write.text).toBe(200);
    const read = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Read', arguments: { file_path: 'notes/out.txt' } });
    expect(JSON.stringify(read.json.body)).toContain('hello');
    expect((await api('GET', `/sandboxes/${id}`)).json.steps ?? 3).toBe(3);
    expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    await until(() => !sim.listPodObjects().some((p) => p.metadata?.name === episode!.metadata.name || p.metadata?.name === tools!.metadata.name), 'both pods deleted');

    const id2 = await createEpisode('N05_shell');
    const { grade } = await drive(api, id2, BASH);
    expect(grade.task_score).toBe(1);
    expect([grade.task_score, grade.scores]).toEqual(await oneMachine('N05_shell', BASH));
    // over: sandbox-tool calls refused too
    expect((await api('POST', `/sandboxes/${id2}/claw-eval/call`, { tool: 'Bash', arguments: { command: 'true' } })).json.error.code).toBe('invalid_request');
    await api('DELETE', `/sandboxes/${id2}`);
    await until(() => sim.listPodObjects().length === 0, 'no pod left');
  }, 600_000);

  test('a replica that did not create the episode runs its sandbox tools and grades it', async () => {
    const b = await startOrchestrator(sim, config, 'orch-b');
    try {
      b.backend.clawEval = clawEvalPodHooks(host);
      const onB = (method: string, url: string, body?: unknown) => b.app.inject({ method: method as 'GET', url, ...(body === undefined ? {} : { payload: body as Obj }) }).then((r) => ({ status: r.statusCode, json: (r.body ? JSON.parse(r.body) : undefined) as any, text: r.body }));
      const id = await createEpisode('N05_shell');
      await until(async () => (await onB('GET', `/sandboxes/${id}/claw-eval/tools`)).status === 200, 'B serves the episode');
      // B lists the episode only, never its tools shell
      expect((await onB('GET', '/sandboxes')).json.sandboxes.map((s: Obj) => s.sandbox_id)).toEqual([id]);
      const { grade } = await drive(onB, id, BASH);
      expect([grade.task_score, grade.scores]).toEqual(await oneMachine('N05_shell', BASH));
      await onB('DELETE', `/sandboxes/${id}`);
      await until(() => sim.listPodObjects().length === 0, 'both pods deleted by B');
    } finally {
      await b.close();
    }
  }, 600_000);

  test('a shell pod that cannot start fails the create; no pod is left', async () => {
    kubelet.failTools = true;
    try {
      const r = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N05_shell' });
      expect(r.status).toBe(201);
      const w = await api('GET', `/sandboxes/${r.json.sandbox_id}/wait?timeout=120`);
      expect(w.json.status, w.text).toBe('error');
      // the failed create gives both pods back at once (the registry closes a sandbox whose start failed)
      await until(() => sim.listPodObjects().length === 0, 'no pod left');
      await api('DELETE', `/sandboxes/${r.json.sandbox_id}`);
    } finally {
      kubelet.failTools = false;
    }
    // without a sandboxTemplate: refused before any pod
    const cfg = parseK8sConfig({ templates: { ce: { type: 'claw-eval', placement: 'pod', image: 'x:1' } } });
    expect(cfg.templates.ce!.sandboxTemplate).toBeUndefined();
    expect(() => parseK8sConfig({ templates: { ce: { type: 'claw-eval', placement: 'pod', image: 'x:1', sandboxTemplate: 'ce' } } })).toThrow(/not a shell template/);
  }, 300_000);

  test('attacker: the agent\'s Bash cannot touch the services\' pod (token, files) nor write outside /workspace; forged dispatches refused', async () => {
    const id = await createEpisode('N05_shell');
    const { episode, tools } = podsOf(id);
    const w = kubelet.workers.get(episode!.metadata.name)!;
    const wid = podRecords(episode as never).get(id)!.worker!;
    const bash = async (command: string) => (await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Bash', arguments: { command } })).json.body as Obj;
    // the claw-eval pod's token is nowhere in the shell's environment; its data folder (services' state, trace) is
    // not readable (a pod's processes are out of reach too: claw-eval-tools.slow.test.ts, where pods are containers)
    const env = await bash('env; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"');
    expect(JSON.stringify(env)).not.toContain(w.token);
    const data = path.join(tmp, episode!.metadata.name);
    const ls = await bash(`ls ${data} 2>&1; cat ${data}/* 2>&1 | head -c 200`);
    expect(ls.stdout).toMatch(/Permission denied|No such file/);
    // its worker's routes answer only the orchestrator's token (on a cluster the ingress policy admits the
    // orchestrator only; the simulated pods share the host's network)
    const url = `${w.url}/worker/claw-eval/${wid}/conversation`;
    const peek = await bash(`python3 -c "import urllib.request as u, sys\ntry:\n  u.urlopen('${url}')\nexcept Exception as e: print(getattr(e, 'code', e))"`);
    expect(peek.stdout.trim()).toBe('401');
    const m = renderManifests(parseK8sConfig(config)) as Obj[];
    const egress = m.find((x) => x.kind === 'NetworkPolicy' && x.metadata.name === 'grove-sandbox-egress')!;
    const ingress = m.find((x) => x.kind === 'NetworkPolicy' && x.metadata.name === 'grove-sandbox-ingress')!;
    for (const pol of [egress, ingress]) for (const [k, v] of Object.entries(pol.spec.podSelector.matchLabels)) expect(tools!.metadata.labels[k], k).toBe(v);
    expect(egress.spec.egress).toEqual([]);
    // writes outside /workspace: refused (root's folders; the pod's root file system is read-only on a cluster)
    const write = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Write', arguments: { file_path: '/etc/grove-pwned', content: 'x' } });
    expect(write.json.status).toBeGreaterThanOrEqual(400);
    expect((await bash('touch /opt/grove-pwned /usr/grove-pwned 2>&1; echo rc=$?')).stdout).toMatch(/rc=1/);
    expect(existsSync('/etc/grove-pwned') || existsSync('/opt/grove-pwned')).toBe(false);
    // the worker-only dispatch route: no or a wrong token, a service tool's dispatch forged, a bad body
    const r0 = { dispatch: { tool_use_id: 'toolu_x', tool_name: 'Bash', endpoint_url: 'http://localhost:8080/exec', request_body: {}, response_status: 200, response_body: {}, latency_ms: 1 }, text: '{}', is_error: false, images: [] };
    expect((await apiOn(w.url)('POST', `/worker/claw-eval/${wid}/dispatch`, r0)).status).toBe(401);
    expect((await apiOn(w.url, { 'x-api-key': 'wrong-token-0123456789' })('POST', `/worker/claw-eval/${wid}/dispatch`, r0)).status).toBe(403);
    const own = apiOn(w.url, { 'x-api-key': w.token });
    expect((await own('POST', `/worker/claw-eval/${wid}/dispatch`, { ...r0, dispatch: { ...r0.dispatch, tool_name: 'notes_list' } })).json.error.code).toBe('invalid_request');
    expect((await own('POST', `/worker/claw-eval/${wid}/dispatch`, { ...r0, extra: 1 })).status).toBe(400);
    // the worker itself runs no sandbox tool (its pod holds the services: the agent's shell is elsewhere)
    expect((await own('POST', `/sandboxes/${wid}/claw-eval/call`, { tool: 'Bash', arguments: { command: 'id' } })).json.error.code).toBe('invalid_request');
    await api('DELETE', `/sandboxes/${id}`);
    await until(() => sim.listPodObjects().length === 0, 'no pod left');
  }, 300_000);
});
