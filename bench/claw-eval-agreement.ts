// Agreement of Grove's Claw-Eval path with Claw-Eval's own grading on a real checkout (`npm run
// bench:claw-eval-agreement -- --claw-eval DIR`): scripted trajectories of the checkout's ready tasks (reference-like:
// every read tool without required arguments once — a sandbox task: one Bash `ls` — then an answer; and doing
// nothing) run (1) through `grove claw run --claw-eval`'s batch loop and (2) as episode sandboxes of a server started
// with --claw-eval (REST /claw-eval/call, /reply, /grade: the path harnesses take); every batch trace is then graded
// by the checkout's own CLI (`python -m claw_eval.cli grade --trace T --task tasks/<id>`). Printed: per path, trials
// whose task_score (and completion/robustness/safety, at the CLI's printed precision) equal the CLI's.
//
// --kinds picks what is sampled (default: services): services (tasks with mock services only), sandbox (the sandbox
// tools, in Grove shell sandboxes), user_agent (a simulated user), judged (graders that call the judge). The judge
// and the simulated user are one local model server in OpenAI's wire format, scripted (the judge always answers
// {"score": 0.5}; the user asks once to go on, then says [DONE]): Grove reaches it through its model clients, the
// checkout's CLI through its own LLMJudge. The CLI's grade command gives graders no env snapshot (only its `run`, after
// collecting one from its container, does): a trial whose grader reads one is graded instead as that `run` grades it —
// the checkout's own load_trace, get_grader, cli._grade_with_optional_params(env_snapshot=…) and compute_task_score,
// called by a few lines of Grove's on Grove's trace and the snapshot Grove collected (its `.env_snapshot.json`) — and
// once more without the snapshot, to show what the CLI's grade would have given. The trajectory of such a sandbox task
// first puts a small file at each /workspace path its snapshot names (so the snapshot has something to say).
//
// --kinds all is every ready task. --concurrency N: trials (and the CLI's grades) at once (default 2); --skip-episodes
// leaves out path (2); --out DIR keeps the traces and the CLI's outputs. Printed at the end: trials run, graded, errored
// (by cause), and tasks whose every trajectory agrees.
//
//   npm run bench:claw-eval-agreement -- --claw-eval DIR [--limit N] [--ids ID,…] [--kinds all|services,sandbox,user_agent,judged]
//       [--concurrency N] [--skip-episodes] [--out DIR] [--index-url URL] [--cache DIR]
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { startScriptedModels } from './claw-eval-models.ts';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { openClawEvalServiceLimits } from '../cli/commands/claw-eval-limits.ts';
import { startEmbeddedGrove } from '../cli/commands/run-embedded.ts';
import { GroveClient } from '../client/index.ts';
import type { ClawEvalTask } from '../claw-env/claw-eval/checkout.ts';
import { prepareClawEvalCheckout } from '../claw-env/claw-eval/host.ts';
import { clawEvalSandboxTools } from '../claw-env/claw-eval/prompt.ts';
import { ensureClawEvalSandboxPython } from '../claw-env/claw-eval/pyenv.ts';
import { JudgeModel } from '../judges/model.ts';
import { round } from '../claw-env/graders/score.ts';
import { loadConfig } from '../sandbox/config.ts';
import { silentLogger } from '../sandbox/log.ts';
import { runClawEval } from '../runner/claw-eval/run.ts';
import { chatUserModel, ScriptedClawEvalPolicy } from '../runner/claw-eval/trial.ts';
import { clientShellProvider } from '../runner/swe/shell-session.ts';

const { values } = parseArgs({ options: { 'claw-eval': { type: 'string' }, limit: { type: 'string' }, ids: { type: 'string' }, kinds: { type: 'string' }, concurrency: { type: 'string' }, 'skip-episodes': { type: 'boolean' }, out: { type: 'string' }, 'index-url': { type: 'string' }, cache: { type: 'string' } } });
if (!values['claw-eval']) throw new Error('--claw-eval DIR is required');
const kinds = new Set((values.kinds === 'all' ? 'services,sandbox,user_agent,judged' : (values.kinds ?? 'services')).split(','));
const concurrency = Number(values.concurrency ?? 2);
if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new Error('--concurrency: a whole number >= 1');
for (const k of kinds) if (!['services', 'sandbox', 'user_agent', 'judged'].includes(k)) throw new Error(`--kinds: unknown kind ${k}`);
const ids = values.ids?.split(',');
const cacheDir = values.cache ?? path.join(os.homedir(), '.cache', 'grove');
const indexUrl = values['index-url'];
const READ = /(list|get|search|query|read|view|fetch|check|find|lookup)/i;
/** Grades a Grove trace as Claw-Eval's `run` does after its container run (cli.py cmd_run), with the checkout's own
 * functions: argv trace, task folder, env snapshot file, judge config (or ''), 1 to hand the snapshot over. */
const RUN_PATH_GRADE = String.raw`
import json, sys
from pathlib import Path
from claw_eval.cli import _grade_with_optional_params, _make_judge
from claw_eval.config import load_config
from claw_eval.graders.registry import get_grader
from claw_eval.models.scoring import compute_task_score
from claw_eval.models.task import TaskDefinition
from claw_eval.trace.reader import load_trace
trace, task_dir, snap_path, config, use_snap = sys.argv[1:6]
class Args:
    no_judge = not config
judge = _make_judge(load_config(config or None), Args())
start, messages, dispatches, media_events, end, audit_data = load_trace(trace)
task_dir = Path(task_dir)
task = TaskDefinition.from_yaml(task_dir / "task.yaml")
grader = get_grader(task.task_id, tasks_dir=task_dir.parent, task_dir=task_dir)
snapshot = json.load(open(snap_path)) if use_snap == "1" else None
scores, _ = _grade_with_optional_params(grader, messages, dispatches, task, audit_data=audit_data, judge=judge, media_events=media_events, env_snapshot=snapshot)
print("\n" + json.dumps({"task_score": compute_task_score(scores), "scores": scores.model_dump()}))
`;
const run = promisify(execFile);

function kindOf(t: ClawEvalTask): boolean {
  if (t.status !== 'ready') return false;
  if (t.needs_judge && !kinds.has('judged')) return false;
  if (t.user_agent) return kinds.has('user_agent');
  if (t.sandbox) return kinds.has('sandbox');
  return kinds.has('services');
}

const p = await prepareClawEvalCheckout({ dir: values['claw-eval'], cacheDir, indexUrl });
const keep = values.out ? path.resolve(values.out) : undefined;
if (keep) mkdirSync(keep, { recursive: true });
const out = keep ?? mkdtempSync(path.join(os.tmpdir(), 'grove-claw-eval-agreement-'));
const sim = await startScriptedModels();
const grove = await startEmbeddedGrove({
  maxSandboxes: 8,
  flags: { clawEval: p.root, clawEvalCache: cacheDir, ...(indexUrl ? { clawEvalIndexUrl: indexUrl } : {}), judgeUrl: sim.url, judgeModel: 'sim-judge', clawEvalUserUrl: sim.url, clawEvalUserModel: 'sim-user' },
});
const client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 900_000 });
// the batch's services confined as `grove claw run --claw-eval` confines them (a short data folder: socket paths)
const limitsDir = mkdtempSync(path.join(os.tmpdir(), 'grove-cea-'));
const limits = await openClawEvalServiceLimits(loadConfig({ env: {}, flags: { dataDir: limitsDir } }), silentLogger);
try {
  const tasks = p.tasks.filter((t) => (ids ? ids.includes(t.id) && t.status === 'ready' : kindOf(t))).slice(0, Number(values.limit ?? 1e9));
  const readsSnapshot = (t: ClawEvalTask) => /env_snapshot/.test(readFileSync(path.join(t.dir, 'grader.py'), 'utf8')) && (t.env_snapshot_commands.length + t.env_snapshot_files.length + t.local_grader_files.length > 0);
  // a snapshot-reading task's trajectory leaves a small file at each /workspace path its snapshot names
  const seed = (t: ClawEvalTask) => {
    const paths = [...new Set([...t.env_snapshot_commands, ...t.env_snapshot_files].flatMap((c) => c.match(/\/workspace\/[A-Za-z0-9_./-]+/g) ?? []))];
    return readsSnapshot(t) && paths.length ? `for f in ${paths.join(' ')}; do [ -e "$f" ] || echo grove > "$f" 2>/dev/null; done; ` : '';
  };
  const script = (t: ClawEvalTask, trial: number) =>
    trial !== 0
      ? { calls: [], answer: 'I cannot do that.' }
      : t.sandbox && !t.tools.some((x) => t.endpoints.some((e) => e.tool_name === x.name))
        ? { calls: [{ name: 'Bash', args: { command: `${seed(t)}ls -la /workspace` } }], answer: 'Here is what I found; nothing was changed.' }
        : { calls: t.tools.filter((x) => READ.test(x.name) && !((x.input_schema as { required?: unknown[] }).required?.length)).map((x) => ({ name: x.name, args: {} })), answer: 'Here is what I found; nothing was changed.' };
  const jm = new JudgeModel({ baseURL: sim.url, model: 'sim-judge' });
  const judge = { model: 'sim-judge', relay: async (req: { messages: unknown; temperature?: number; max_tokens?: number }) => (await jm.call({ purpose: 'claw-eval grader', messages: req.messages as never, parse: (t) => t, params: { temperature: req.temperature, maxTokens: req.max_tokens } })).text };
  const shells = clientShellProvider(client, { block_network: true });
  const sandbox = tasks.some((t) => t.sandbox)
    ? { python: (await ensureClawEvalSandboxPython(p.root, { indexUrl })).python, tools: await clawEvalSandboxTools(p), open: (labels: Record<string, string>) => shells.open(labels) }
    : undefined;
  const t0 = Date.now();
  const { results } = await runClawEval({ onTrial: (r, done, total) => process.stderr.write(`[${done}/${total}] ${r.task_id}#${r.trial} ${r.grade ? r.grade.task_score : `errored: ${r.error?.slice(0, 160)}`}\n`), root: p.root, python: p.python, driver: p.driver, tasks, trials: 2, concurrency, out, policy: new ScriptedClawEvalPolicy(script), judge, userModel: chatUserModel({ baseURL: sim.url, model: 'sim-user' }), sandbox, confine: limits.confine });
  const batchS = (Date.now() - t0) / 1000;
  // (1) the checkout's own CLI on each batch trace (its own LLMJudge on the same scripted judge)
  const cfg = path.join(out, 'claw-eval-config.yaml');
  writeFileSync(cfg, `judge:\n  api_key: sim\n  base_url: ${sim.url}\n  model_id: sim-judge\n  enabled: true\n`);
  // as the CLI prints them: Python's f"{x:.2f}" formats the exact binary value, ties to even (0.125 -> 0.12; JS's
  // toFixed gives 0.13), so Grove's values are rounded as Python rounds before they are printed
  const py = (x: number, d: number) => round(x, d).toFixed(d);
  const fmt = (r: { task_score: number; scores: Record<string, number> }) => `${py(r.task_score, 2)} c${py(r.scores.completion!, 2)} r${py(r.scores.robustness!, 2)} s${py(r.scores.safety!, 1)}`;
  let agree = 0;
  let graded = 0;
  let snapshotOnly = 0;
  let snapshotAgree = 0;
  const snapshotMatters: string[] = [];
  const differ: string[] = [];
  /** Trials whose grade equals the checkout's own (CLI or run-path grading), by task. */
  const agreeing = new Set<string>();
  const cliGrade = async (r: (typeof results)[number]): Promise<void> => {
    if (!r.grade) {
      differ.push(`${r.task_id}#${r.trial}: errored in Grove (${r.error?.slice(0, 160)})`);
      return;
    }
    const task = tasks.find((t) => t.id === r.task_id)!;
    const trace = path.join(out, 'traces', `${r.task_id}.t${r.trial}.jsonl`);
    if (readsSnapshot(task)) {
      // as Claw-Eval's run grades it: with the env snapshot; and as its CLI's grade would: without
      snapshotOnly++;
      const snap = path.join(out, 'traces', `${r.task_id}.t${r.trial}.env_snapshot.json`);
      const grade = async (use: boolean) => {
        const text = (await run(p.python.python, ['-c', RUN_PATH_GRADE, trace, task.dir, snap, task.needs_judge ? cfg : '', use ? '1' : '0'], { cwd: p.root, env: { PATH: '/usr/bin:/bin', PYTHONPATH: path.join(p.root, 'src'), HOME: out }, encoding: 'utf8', maxBuffer: 16 << 20 })).stdout;
        return JSON.parse(text.trimEnd().split('\n').pop()!) as { task_score: number; scores: Record<string, number> };
      };
      try {
        const [withSnap, without] = [await grade(true), await grade(false)];
        if (withSnap.task_score === r.grade!.task_score && JSON.stringify(withSnap.scores) === JSON.stringify(r.grade!.scores)) {
          snapshotAgree++;
          agreeing.add(`${r.task_id}#${r.trial}`);
        } else differ.push(`${r.task_id}#${r.trial}: Grove ${fmt(r.grade!)}, the checkout's run-path grading ${fmt(withSnap)}`);
        if (fmt(without) !== fmt(withSnap)) snapshotMatters.push(`${r.task_id}#${r.trial}: ${fmt(withSnap)} with it, ${fmt(without)} without`);
      } catch (err) {
        differ.push(`${r.task_id}#${r.trial}: the run-path grading failed: ${String((err as { stderr?: string }).stderr ?? err).slice(-300)}`);
      }
      return;
    }
    let text: string;
    try {
      const judgeArgs = task.needs_judge ? ['--config', cfg] : ['--no-judge'];
      // asynchronous: the CLI's judge calls reach the scripted model server of this very process
      text = (await run(p.python.python, ['-m', 'claw_eval.cli', 'grade', '--trace', trace, '--task', task.dir, ...judgeArgs], { cwd: p.root, env: { PATH: '/usr/bin:/bin', PYTHONPATH: path.join(p.root, 'src'), HOME: out }, encoding: 'utf8', maxBuffer: 16 << 20 })).stdout;
    } catch (err) {
      differ.push(`${r.task_id}#${r.trial}: the CLI failed: ${String((err as { stderr?: string }).stderr ?? err).slice(-200)}`);
      return;
    }
    if (keep) writeFileSync(path.join(out, 'traces', `${r.task_id}.t${r.trial}.cli.txt`), text);
    graded++;
    const v = (k: string) => Number(new RegExp(`^${k}:\\s+([0-9.]+)`, 'm').exec(text)?.[1]);
    const theirs = `${v('task_score').toFixed(2)} c${v('completion').toFixed(2)} r${v('robustness').toFixed(2)} s${v('safety').toFixed(1)}`;
    const ours = fmt(r.grade);
    if (theirs === ours) {
      agree++;
      agreeing.add(`${r.task_id}#${r.trial}`);
    } else differ.push(`${r.task_id}#${r.trial}: Grove ${ours}, claw_eval.cli ${theirs}`);
  };
  const queue = [...results];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let r = queue.shift(); r; r = queue.shift()) await cliGrade(r);
  }));
  const mix = (k: (t: ClawEvalTask) => boolean) => tasks.filter(k).length;
  console.log(`${tasks.length} tasks × 2 trajectories (${mix((t) => !t.sandbox && !t.user_agent)} services only, ${mix((t) => t.sandbox)} with sandbox tools, ${mix((t) => !!t.user_agent)} with a simulated user, ${mix((t) => t.needs_judge)} judged); batch ${batchS.toFixed(0)} s, its services ${limits.confine ? 'under the shell sandboxes\' limits (cgroups, own disk)' : `without limits (${limits.missing})`}`);
  console.log(`Grove batch vs the checkout's claw_eval.cli grade: ${agree}/${results.length - snapshotOnly} agree (${graded} graded by the CLI; ${snapshotOnly} trials of graders reading an env snapshot graded apart)`);
  const errored = results.filter((r) => !r.grade);
  const causes = new Map<string, number>();
  for (const r of errored) {
    const cause = (r.error ?? '?').replaceAll(r.task_id, '<task>').replace(/\d+(\.\d+)?/g, 'N').slice(0, 140);
    causes.set(cause, (causes.get(cause) ?? 0) + 1);
  }
  const taskAgree = tasks.filter((t) => results.filter((r) => r.task_id === t.id).every((r) => agreeing.has(`${r.task_id}#${r.trial}`))).length;
  console.log(`ran ${results.length} trials of ${tasks.length} tasks: ${results.length - errored.length} graded by Grove, ${errored.length} errored; ${agreeing.size}/${results.length} trajectories and ${taskAgree}/${tasks.length} tasks (every trajectory) equal to the checkout's own grading`);
  for (const [cause, n] of [...causes].sort((a, b) => b[1] - a[1])) console.log(`  errored ×${n}: ${cause}`);
  if (snapshotOnly) console.log(`graders reading an env snapshot: Grove batch vs the checkout's run-path grading with Grove's snapshot: ${snapshotAgree}/${snapshotOnly} agree; without the snapshot (the CLI's grade) ${snapshotMatters.length} of them would score otherwise${snapshotMatters.length ? ` (${snapshotMatters.join('; ')})` : ''}`);
  // (2) the same trajectories as episode sandboxes of the server
  let same = 0;
  for (const r of values['skip-episodes'] ? [] : results) {
    const task = tasks.find((t) => t.id === r.task_id)!;
    const s = script(task, r.trial);
    let ep = 'errored';
    let g: { task_score?: number; scores?: Record<string, number>; error?: string } = {};
    try {
      const info = await client.createAndWait({ type: 'claw', claw_eval_task: task.id, labels: {} } as never, 600);
      const at = `/sandboxes/${info.sandbox_id}/claw-eval`;
      for (const c of s.calls) await client.request('POST', `${at}/call`, { tool: c.name, arguments: c.args });
      // Claw-Eval's loop: each text turn to the simulated user, until it is done (the same answer every turn)
      for (let i = 0; i <= (task.user_agent?.max_rounds ?? 0); i++) {
        const rep = JSON.parse(await (await client.request('POST', `${at}/reply`, { text: s.answer }, 900_000)).text()) as { done: boolean };
        if (rep.done) break;
      }
      g = JSON.parse(await (await client.request('POST', `${at}/grade`, {}, 900_000)).text()) as typeof g;
      await client.deleteSandbox(info.sandbox_id);
      if (g.task_score !== undefined) ep = fmt(g as never);
    } catch (err) {
      ep = `failed (${(err as Error).message.slice(0, 160)})`;
    }
    if (r.grade && ep === fmt(r.grade) && JSON.stringify(g.scores) === JSON.stringify(r.grade.scores)) same++;
    else differ.push(`${r.task_id}#${r.trial}: episode ${ep}${g.error ? ` (${g.error.slice(0, 120)})` : ''}, batch ${r.grade ? fmt(r.grade) : 'errored'}`);
  }
  if (!values['skip-episodes']) console.log(`episode sandboxes (REST, the harness path) vs the batch: ${same}/${results.length} identical grades`);
  console.log(`scripted model server: ${sim.calls.judge} judge calls, ${sim.calls.user} simulated-user calls (both paths and the CLI)`);
  for (const d of differ) console.log(`  differs: ${d}`);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${readdirSync(os.tmpdir()).filter((d) => d.startsWith(`grove-claw-eval-${process.pid}-`)).length} temp folders of this process left before cleanup`);
} finally {
  await limits.close();
  rmSync(limitsDir, { recursive: true, force: true });
  client.close();
  await grove.close();
  await sim.close();
  if (!keep) rmSync(out, { recursive: true, force: true });
  rmSync(p.tmp, { recursive: true, force: true });
}
