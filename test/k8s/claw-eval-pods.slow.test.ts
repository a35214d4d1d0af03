// Claw-Eval episodes on worker pods that are real containers: the simulated API server with the podman kubelet,
// each pod a container of the image scripts/claw-eval-image.sh builds from the fixture checkout (FROM the worker
// image: the checkout at the orchestrator's path, its venv built at build time), run as the pod spec says (uid 10001,
// read-only root, no capabilities, /tmp an emptyDir). The orchestrator (in this process, with its own copy of the
// checkout, the user model and the judge) relays the calls, answers the simulated user and grades on the trace read
// back: grades equal to the same trajectories graded on one machine. Also: the services in the container are the
// pod user's processes without bubblewrap, the pod holds no judge or user-model setting, and nothing is left.
// Needs root, podman, localhost/grove-worker:dev (scripts/images.sh) and the fixture image:
//   scripts/claw-eval-image.sh test/claw-env/fixtures/claw-eval-checkout
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClawEvalHost, prepareClawEvalCheckout, type PreparedCheckout } from '../../claw-env/claw-eval/host.ts';
import { clawEvalImageName } from '../../k8s/claw-eval-image.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodmanKubelet, podmanImageMissing } from '../../k8s/sim/podman-kubelet.ts';
import { podRecords } from '../../k8s/records.ts';
import { runClawEval } from '../../runner/claw-eval/run.ts';
import { chatUserModel } from '../../runner/claw-eval/trial.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { clawEvalPodHooks } from '../../server/claw-eval-pods.ts';
import { equipClawEvalHost } from '../../server/claw-eval.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';
import { drive, scripted, type Turn } from './claw-eval-drive.ts';
import { startOrchestrator, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const ROOT = path.resolve(__dirname, '../claw-env/fixtures/claw-eval-checkout');
const IMAGE = clawEvalImageName(ROOT);
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const missing = podmanImageMissing(IMAGE);

const N01: Turn[][] = [
  [{ call: 'notes_list', args: {} }, { call: 'notes_get', args: { note_id: 'n1' } }, { call: 'notes_get', args: { note_id: 'n2' } }, { say: 'Budget review: 120k. Team offsite moved to Friday.' }],
  [{ call: 'notes_get', args: { note_id: { bad: 1 } } }, { call: 'notes_get', args: { note_id: 'n1' } }, { call: 'notes_list', args: {} }, { say: 'Budget only.' }],
];
const CLARIFY: Turn[] = [{ say: 'Which note do you mean?' }, { call: 'notes_list', args: {} }, { say: 'It is the Budget review note.' }];

describe.skipIf(missing !== null)(`Claw-Eval episodes on podman worker pods${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const kubelet = new PodmanKubelet({ readyTimeoutMs: 240_000 });
  const sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  let orch: Orchestrator;
  let host: ClawEvalHost;
  let prepared: PreparedCheckout;
  let user: OpenAITestServer;
  // made here, not at import: a suite skipped (no image) runs no afterAll to remove it
  let tmp: string | undefined;
  const api = (method: string, url: string, body?: unknown) => orch.app.inject({ method: method as 'GET', url, ...(body === undefined ? {} : { payload: body as Obj }) }).then((r) => ({ status: r.statusCode, json: (r.body ? JSON.parse(r.body) : undefined) as any, text: r.body }));

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-claw-eval-pods-'));
    const CACHE = path.join(tmp, 'cache');
    user = await startOpenAIServer((req) => (JSON.stringify(req.body.messages).includes('Budget review') ? 'Thanks! [DONE]' : 'The one about money, I think.'));
    prepared = await prepareClawEvalCheckout({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX });
    await sim.start();
    orch = await startOrchestrator(sim, {
      workerPort: 22000 + Math.floor(Math.random() * 1000),
      readyTimeoutSeconds: 240,
      templates: { 'claw-eval': { type: 'claw-eval', placement: 'pod', warmPool: 0, image: IMAGE, resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } } } },
    });
    host = new ClawEvalHost({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX });
    equipClawEvalHost(host, loadConfig({ env: {}, flags: { clawEvalUserUrl: user.url, clawEvalUserModel: 'user-m' } }), undefined);
    orch.backend.clawEval = clawEvalPodHooks(host);
  }, 600_000);

  afterAll(async () => {
    await orch?.close();
    await kubelet.removeAll();
    await sim.close();
    await host?.close();
    await user?.close();
    if (prepared) rmSync(prepared.tmp, { recursive: true, force: true });
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  async function createEpisode(task: string): Promise<{ id: string; container: string }> {
    const r = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: task });
    expect(r.status, r.text).toBe(201);
    const w = await api('GET', `/sandboxes/${r.json.sandbox_id}/wait?timeout=240`);
    expect(w.json.status, w.text).toBe('ready');
    const pod = sim.listPodObjects().find((p) => podRecords(p as never).has(r.json.sandbox_id))! as Obj;
    return { id: r.json.sandbox_id, container: kubelet.container(pod.metadata.name)! };
  }

  async function batch(task: string, turns: Turn[]): Promise<[number, Record<string, number>]> {
    const b = await runClawEval({ root: prepared.root, python: prepared.python, driver: prepared.driver, tasks: [prepared.tasks.find((t) => t.id === task)!], trials: 1, concurrency: 1, policy: scripted(turns), userModel: chatUserModel({ baseURL: user.url, model: 'user-m' }) });
    const g = b.results[0]!.grade!;
    return [g.task_score, g.scores];
  }

  test('REST on a container pod: services as the pod user without bubblewrap, graded on the orchestrator as one machine grades', async () => {
    const scores = [];
    for (const turns of N01) {
      const { id, container } = await createEpisode('N01_notes_summary');
      // inside the pod: the checkout's services as uid 10001, no bwrap; the pod has no judge or user-model setting
      const ps = execFileSync('/usr/bin/podman', ['top', container, 'user', 'args'], { encoding: 'utf8' });
      expect(ps).toMatch(/grove_claw_eval_driver\.py serve/);
      expect(ps).not.toMatch(/bwrap/);
      for (const line of ps.split('\n').slice(1).filter(Boolean)) expect(line.trim().split(/\s+/)[0], line).toMatch(/^(10001|grove)$/);
      const env = execFileSync('/usr/bin/podman', ['inspect', '-f', '{{range .Config.Env}}{{println .}}{{end}}', container], { encoding: 'utf8' });
      expect(env).toMatch(/GROVE_CLAW_EVAL_ISOLATION=pod/);
      expect(env).not.toMatch(/JUDGE|CLAW_EVAL_USER|K8S_TOKEN_SECRET/);
      // the checkout is read-only in the pod
      expect(() => execFileSync('/usr/bin/podman', ['exec', container, 'touch', path.join(ROOT, 'tasks', 'x')], { stdio: 'pipe' })).toThrow();
      const { grade } = await drive(api, id, turns);
      scores.push([grade.task_score, grade.scores]);
      expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    }
    expect(scores.map((s) => s[0])).toEqual([1, 0.68]);
    expect(scores).toEqual([await batch('N01_notes_summary', N01[0]!), await batch('N01_notes_summary', N01[1]!)]);
  }, 900_000);

  test('user_agent on a container pod: replies answered by the orchestrator\'s user model, the turns recorded in the pod', async () => {
    const before = user.requests.length;
    const { id } = await createEpisode('N04_user_agent');
    const { replies, grade } = await drive(api, id, CLARIFY);
    expect(replies).toEqual([
      { user: '[user_agent]\nThe one about money, I think.', done: false, rounds: 1 },
      { user: null, done: true, rounds: 1 },
    ]);
    expect(user.requests.length - before).toBe(2);
    await api('DELETE', `/sandboxes/${id}`);
    expect([grade.task_score, grade.scores]).toEqual(await batch('N04_user_agent', CLARIFY));
    // every pod and container is gone once its episode is
    for (let end = Date.now() + 60_000; sim.listPodObjects().length && Date.now() < end; ) await new Promise((r) => setTimeout(r, 250));
    expect(sim.listPodObjects()).toEqual([]);
    expect(execFileSync('/usr/bin/podman', ['ps', '-aq', '--filter', `label=grove.sim=${kubelet.run}`], { encoding: 'utf8' }).trim()).toBe('');
  }, 900_000);
});
