// Agreement of Grove's Claw-Eval path with Claw-Eval's own grading on a real checkout: scripted trajectories of the
// checkout's ready, judge-free service tasks (reference-like: every read tool without required arguments once, then
// an answer; and doing nothing) run (1) through `grove claw run --claw-eval`'s batch loop and (2) as episode sandboxes
// of a server started with --claw-eval (REST /claw-eval/call + /claw-eval/grade, the path harnesses take); every batch
// trace is then graded by the checkout's own CLI (`python -m claw_eval.cli grade --trace T --task tasks/<id>
// --no-judge`). Printed: per path, trials whose task_score (and completion/robustness/safety, at the CLI's printed
// precision) equal the CLI's.
//
//   node --import tsx bench/claw-eval-agreement.ts --claw-eval DIR [--limit N] [--index-url URL] [--cache DIR]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedGrove } from '../cli/commands/run-embedded.ts';
import { GroveClient } from '../client/index.ts';
import type { ClawEvalTask } from '../claw-env/claw-eval/checkout.ts';
import { prepareClawEvalCheckout } from '../claw-env/claw-eval/host.ts';
import { runClawEval } from '../runner/claw-eval/run.ts';
import { ScriptedClawEvalPolicy } from '../runner/claw-eval/trial.ts';

const { values } = parseArgs({ options: { 'claw-eval': { type: 'string' }, limit: { type: 'string' }, 'index-url': { type: 'string' }, cache: { type: 'string' } } });
if (!values['claw-eval']) throw new Error('--claw-eval DIR is required');
const cacheDir = values.cache ?? path.join(os.homedir(), '.cache', 'grove');
const READ = /(list|get|search|query|read|view|fetch|check|find|lookup)/i;
const p = await prepareClawEvalCheckout({ dir: values['claw-eval'], cacheDir, indexUrl: values['index-url'] });
const out = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-eval-agreement-'));
try {
  const tasks = p.tasks.filter((t) => t.status === 'ready' && !t.needs_judge && !t.sandbox && !t.user_agent).slice(0, Number(values.limit ?? 1e9));
  const script = (t: ClawEvalTask, trial: number) =>
    trial === 0
      ? { calls: t.tools.filter((x) => READ.test(x.name) && !((x.input_schema as { required?: unknown[] }).required?.length)).map((x) => ({ name: x.name, args: {} })), answer: 'Here is what I found; nothing was changed.' }
      : { calls: [], answer: 'I cannot do that.' };
  const { results } = await runClawEval({ root: p.root, python: p.python, driver: p.driver, tasks, trials: 2, concurrency: 2, out, policy: new ScriptedClawEvalPolicy(script) });
  // (1) the checkout's own CLI on each batch trace
  const fmt = (r: { task_score: number; scores: Record<string, number> }) => `${r.task_score.toFixed(2)} c${r.scores.completion!.toFixed(2)} r${r.scores.robustness!.toFixed(2)} s${r.scores.safety!.toFixed(1)}`;
  let agree = 0;
  let graded = 0;
  const differ: string[] = [];
  for (const r of results) {
    if (!r.grade) {
      differ.push(`${r.task_id}#${r.trial}: errored in Grove (${r.error?.slice(0, 120)})`);
      continue;
    }
    const trace = path.join(out, 'traces', `${r.task_id}.t${r.trial}.jsonl`);
    const task = tasks.find((t) => t.id === r.task_id)!;
    let text: string;
    try {
      text = execFileSync(p.python.python, ['-m', 'claw_eval.cli', 'grade', '--trace', trace, '--task', task.dir, '--no-judge'], { cwd: p.root, env: { PATH: '/usr/bin:/bin', PYTHONPATH: path.join(p.root, 'src'), HOME: out }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      differ.push(`${r.task_id}#${r.trial}: the CLI failed: ${String((err as { stderr?: string }).stderr ?? err).slice(-200)}`);
      continue;
    }
    graded++;
    const v = (k: string) => Number(new RegExp(`^${k}:\\s+([0-9.]+)`, 'm').exec(text)?.[1]);
    const theirs = `${v('task_score').toFixed(2)} c${v('completion').toFixed(2)} r${v('robustness').toFixed(2)} s${v('safety').toFixed(1)}`;
    const ours = fmt(r.grade);
    if (theirs === ours) agree++;
    else differ.push(`${r.task_id}#${r.trial}: Grove ${ours}, claw_eval.cli ${theirs}`);
  }
  console.log(`${tasks.length} tasks (ready, judge-free, services only) × 2 trajectories: Grove batch vs the checkout's claw_eval.cli grade: ${agree}/${results.length} agree (${graded} graded by the CLI)`);
  // (2) the same trajectories as episode sandboxes of a server with --claw-eval
  const grove = await startEmbeddedGrove({ maxSandboxes: 8, flags: { clawEval: p.root, clawEvalCache: cacheDir, ...(values['index-url'] ? { clawEvalIndexUrl: values['index-url'] } : {}) } });
  const client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 300_000 });
  let same = 0;
  try {
    for (const r of results) {
      const task = tasks.find((t) => t.id === r.task_id)!;
      const s = script(task, r.trial);
      const info = await client.createAndWait({ type: 'claw', claw_eval_task: task.id, labels: {} } as never, 300);
      for (const c of s.calls) await client.request('POST', `/sandboxes/${info.sandbox_id}/claw-eval/call`, { tool: c.name, arguments: c.args });
      const g = JSON.parse(await (await client.request('POST', `/sandboxes/${info.sandbox_id}/claw-eval/grade`, { answer: s.answer })).text()) as { task_score?: number; scores?: Record<string, number> };
      await client.deleteSandbox(info.sandbox_id);
      const ep = g.task_score !== undefined ? fmt(g as never) : 'errored';
      if (r.grade && ep === fmt(r.grade) && JSON.stringify(g.scores) === JSON.stringify(r.grade.scores)) same++;
      else differ.push(`${r.task_id}#${r.trial}: episode ${ep}, batch ${r.grade ? fmt(r.grade) : 'errored'}`);
    }
  } finally {
    client.close();
    await grove.close();
  }
  console.log(`episode sandboxes (REST, the harness path) vs the batch: ${same}/${results.length} identical grades`);
  for (const d of differ) console.log(`  differs: ${d}`);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${readdirSync(os.tmpdir()).filter((d) => d.startsWith(`grove-claw-eval-${process.pid}-`)).length} temp folders of this process left before cleanup`);
} finally {
  rmSync(out, { recursive: true, force: true });
  rmSync(p.tmp, { recursive: true, force: true });
}
