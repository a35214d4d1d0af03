// A real Claw-Eval checkout's tasks on the kubernetes backend with real containers (`npm run bench:claw-eval-pods --
// --claw-eval DIR`): the simulated API server with the podman kubelet, each episode's pod a container of the image
// scripts/claw-eval-image.sh built from DIR (its services without bubblewrap, as the pod's user), the orchestrator in
// this process with DIR as its own checkout (grading, judge, simulated user). The same scripted trajectories
// (bench/claw-eval-agreement.ts's: every read tool without required arguments once, then an answer; and doing
// nothing) are driven over REST through the orchestrator and through a local server (`grove serve --claw-eval DIR`,
// the services in bubblewrap): printed, the trials whose task_score and scores are equal on both, and errors.
// Tasks with the sandbox tools (--kinds sandbox) run them on a shell pod of their own, a container of the sandbox
// image scripts/claw-eval-image.sh builds beside DIR's (k8s/claw-eval-tools.ts), and in a local shell sandbox on one
// machine; their trajectories: a Bash listing of /workspace, a Glob, a Read of the first file found, then an answer;
// and a Write then a Bash reading it back.
//
//   npm run bench:claw-eval-pods -- --claw-eval DIR [--image IMAGE] [--sandbox-image IMAGE] [--limit N] [--ids ID,…]
//       [--kinds services,judged,user_agent,sandbox] [--concurrency N] [--cache DIR] [--index-url URL]
import { mkdtempSync, rmSync } from 'node:fs';
import { startScriptedModels } from './claw-eval-models.ts';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedGrove } from '../cli/commands/run-embedded.ts';
import type { ClawEvalTask } from '../claw-env/claw-eval/checkout.ts';
import { ClawEvalHost, prepareClawEvalCheckout } from '../claw-env/claw-eval/host.ts';
import { KubernetesBackend } from '../k8s/backend.ts';
import { parseK8sConfig } from '../k8s/config.ts';
import { kubernetesEnvironments } from '../k8s/environments.ts';
import { KubeSim } from '../k8s/sim/api-server.ts';
import { clawEvalImageName, clawEvalSandboxImageName } from '../k8s/claw-eval-image.ts';
import { PodmanKubelet, podmanImageMissing } from '../k8s/sim/podman-kubelet.ts';
import { loadConfig } from '../sandbox/config.ts';
import { buildApp } from '../server/app.ts';
import { clawEvalPodHooks } from '../server/claw-eval-pods.ts';
import { equipClawEvalHost } from '../server/claw-eval.ts';

const { values } = parseArgs({ options: { 'claw-eval': { type: 'string' }, image: { type: 'string' }, 'sandbox-image': { type: 'string' }, limit: { type: 'string' }, ids: { type: 'string' }, kinds: { type: 'string' }, concurrency: { type: 'string' }, cache: { type: 'string' }, 'index-url': { type: 'string' } } });
if (!values['claw-eval']) throw new Error('--claw-eval DIR is required');
const dir = path.resolve(values['claw-eval']);
const image = values.image ?? clawEvalImageName(dir);
const kinds = new Set((values.kinds ?? 'services,judged').split(','));
const sandboxImage = values['sandbox-image'] ?? clawEvalSandboxImageName(dir);
const missing = podmanImageMissing(image) ?? (kinds.has('sandbox') || values.ids ? podmanImageMissing(sandboxImage) : null);
if (missing) throw new Error(`${missing} (scripts/claw-eval-image.sh ${dir})`);
const concurrency = Number(values.concurrency ?? 2);
const cacheDir = values.cache ?? path.join(os.homedir(), '.cache', 'grove');
const indexUrl = values['index-url'];
const READ = /(list|get|search|query|read|view|fetch|check|find|lookup)/i;
const TOKEN_SECRET = 'claw-eval-pods-bench-token-secret-0123';

type Api = (method: string, url: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;
const httpApi = (base: string, key: string): Api => async (method, url, body) => {
  const res = await fetch(base + url, { method, headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
};

/** One trial over REST: create, calls, (a user_agent task: a reply, then as long as the user answers), grade. */
async function trial(api: Api, t: ClawEvalTask, n: number): Promise<{ task_score: number; scores: Record<string, number> } | string> {
  const c = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: t.id });
  if (c.status !== 201) return `create ${c.status}: ${c.text.slice(0, 200)}`;
  const id = c.json.sandbox_id as string;
  try {
    const w = await api('GET', `/sandboxes/${id}/wait?timeout=300`);
    if (w.json?.status !== 'ready') return `start: ${w.text.slice(0, 300)}`;
    const calls = n === 0 ? t.tools.filter((x) => READ.test(x.name) && !((x.input_schema as { required?: unknown[] }).required?.length)) : [];
    for (const x of calls) {
      const r = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: x.name, arguments: {} });
      if (r.status !== 200) return `call ${x.name} ${r.status}: ${r.text.slice(0, 200)}`;
    }
    if (t.sandbox) {
      const why = await sandboxCalls(api, id, n);
      if (why) return why;
    }
    const answer = n === 0 ? 'Here is what I found; nothing was changed.' : 'I cannot do that.';
    if (t.user_agent) {
      for (let done = false, i = 0; !done && i < 10; i++) {
        const r = await api('POST', `/sandboxes/${id}/claw-eval/reply`, { text: answer });
        if (r.status !== 200) return `reply ${r.status}: ${r.text.slice(0, 200)}`;
        done = r.json.done;
      }
    }
    const g = await api('POST', `/sandboxes/${id}/claw-eval/grade`, t.user_agent ? {} : { answer });
    if (g.status !== 200) return `grade ${g.status}: ${g.text.slice(0, 200)}`;
    return g.json.score === null ? `grader errored: ${String(g.json.error).slice(0, 200)}` : { task_score: g.json.task_score, scores: g.json.scores };
  } finally {
    await api('DELETE', `/sandboxes/${id}`);
  }
}

/** A sandbox-tool task's calls: look around /workspace and read the first file (trial 0), or write a file and read
 * it back through Bash (trial 1). */
async function sandboxCalls(api: Api, id: string, n: number): Promise<string | null> {
  const call = async (tool: string, args: Record<string, unknown>) => {
    const r = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool, arguments: args });
    return r.status === 200 ? r.json : `call ${tool} ${r.status}: ${r.text.slice(0, 200)}`;
  };
  const steps: Array<[string, Record<string, unknown>]> =
    n === 0
      ? [['Bash', { command: 'ls /workspace; find /workspace -maxdepth 3 -type f | sort | head -50' }], ['Glob', { pattern: '**/*' }]]
      : [['Write', { file_path: 'notes.txt', content: 'draft: nothing done yet\n' }], ['Bash', { command: 'cat notes.txt; wc -c notes.txt' }]];
  let glob: unknown;
  for (const [tool, args] of steps) {
    const r = await call(tool, args);
    if (typeof r === 'string') return r;
    if (tool === 'Glob') glob = r.body;
  }
  const first = ((glob as { files?: { path?: string }[] } | undefined)?.files ?? []).map((f) => f.path).filter((x): x is string => typeof x === 'string').sort()[0];
  if (first) {
    const r = await call('Read', { file_path: first });
    if (typeof r === 'string') return r;
  }
  return null;
}

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (i < items.length) await fn(items[i++]!);
  }));
}

const p = await prepareClawEvalCheckout({ dir, cacheDir, indexUrl });
const model = await startScriptedModels();
const kind = (t: ClawEvalTask) =>
  t.status === 'ready' && (t.sandbox ? kinds.has('sandbox') : (!t.needs_judge || kinds.has('judged')) && (t.user_agent ? kinds.has('user_agent') : kinds.has('services') || t.needs_judge));
const tasks = p.tasks.filter((t) => (values.ids ? values.ids.split(',').includes(t.id) && t.status === 'ready' : kind(t))).slice(0, Number(values.limit ?? 1e9));
const flags = { clawEvalUserUrl: model.url, clawEvalUserModel: 'sim-user', judgeUrl: model.url, judgeModel: 'sim-judge' };
// one machine: grove serve --claw-eval DIR (services in bubblewrap)
const local = await startEmbeddedGrove({ maxSandboxes: 8, flags: { clawEval: dir, clawEvalCache: cacheDir, ...(indexUrl ? { clawEvalIndexUrl: indexUrl } : {}), ...flags } });
// pods: the simulated API server, podman containers of the image, this process as the orchestrator
const kubelet = new PodmanKubelet({ readyTimeoutMs: 300_000 });
const sim = new KubeSim(kubelet);
kubelet.sim = sim;
await sim.start();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-eval-pods-bench-'));
const config = loadConfig({ env: {}, flags: { authDisabled: true, maxSandboxes: 64, dataDir: dataDir, ...flags } });
const backend = new KubernetesBackend({
  config: parseK8sConfig({
    readyTimeoutSeconds: 300,
    workerPort: 23000 + Math.floor(Math.random() * 1000),
    // the sandbox tools on shell pods of the sandbox image (pod isolation, no egress)
    templates: { 'claw-eval': { type: 'claw-eval', placement: 'pod', warmPool: 0, image, sandboxTemplate: 'claw-eval-tools' }, 'claw-eval-tools': { type: 'shell', placement: 'pod', warmPool: 0, image: sandboxImage } },
  }),
  kubeConfig: sim.kubeConfig(),
  replicaId: 'bench',
  tokenSecret: TOKEN_SECRET,
  defaultTtlSeconds: 3600,
});
await backend.start();
const host = new ClawEvalHost({ dir, cacheDir, indexUrl, judge: undefined });
equipClawEvalHost(host, config, undefined);
// the judge as grove serve gives it (its --judge-url/--judge-model)
const { clawEvalJudgeRelay } = await import('../judges/claw-eval.ts');
host.o.judge = clawEvalJudgeRelay(model.url, 'sim-judge', undefined);
backend.clawEval = clawEvalPodHooks(host);
const app = await buildApp({ config, environments: kubernetesEnvironments(backend) });
await app.listen({ host: '127.0.0.1', port: 0 });
const orchUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const onPods = httpApi(orchUrl, '');
const onLocal = httpApi(local.url, local.apiKey);
const t0 = Date.now();
let equal = 0;
const differ: string[] = [];
const errors: string[] = [];
let done = 0;
try {
  await pool(tasks.flatMap((t) => [0, 1].map((n) => ({ t, n }))), concurrency, async ({ t, n }) => {
    const [a, b] = await Promise.all([trial(onPods, t, n), trial(onLocal, t, n)]);
    done++;
    if (typeof a === 'string' || typeof b === 'string') errors.push(`${t.id}#${n}: pods ${typeof a === 'string' ? a : 'ok'} | local ${typeof b === 'string' ? b : 'ok'}`);
    else if (JSON.stringify([a.task_score, a.scores]) === JSON.stringify([b.task_score, b.scores])) equal++;
    else differ.push(`${t.id}#${n}: pods ${JSON.stringify(a)} local ${JSON.stringify(b)}`);
    process.stderr.write(`[${done}/${tasks.length * 2}] ${t.id}#${n} pods ${typeof a === 'string' ? a.slice(0, 120) : a.task_score} local ${typeof b === 'string' ? b.slice(0, 120) : b.task_score}\n`);
  });
} finally {
  await app.close();
  await kubelet.removeAll();
  await sim.close();
  await local.close();
  await host.close();
  await model.close();
  rmSync(p.tmp, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
const load = (await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`claw-eval on pods: ${tasks.length} tasks (${values.ids ? `--ids, ${tasks.filter((t) => t.sandbox).length} with the sandbox tools` : [...kinds].join(',')}), ${tasks.length * 2} trials in ${((Date.now() - t0) / 1000).toFixed(0)} s at concurrency ${concurrency}, load ${load}`);
console.log(`  trials graded equal on pods and on one machine (task_score and every score): ${equal}/${tasks.length * 2}`);
console.log(`  differ: ${differ.length}; errored: ${errors.length}`);
for (const d of [...differ, ...errors]) console.log(`    ${d}`);
