// `grove claw run`: tasks × k trials with a tool-calling policy, bounded concurrency, a recording per trial
// (readable by `grove view`), and a report with Claw-Eval scores, pass@k and pass^k.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClawJudge } from '../../claw-env/graders/grade.ts';
import { passAtK, passHatK, passHatKClawEval, PASS_THRESHOLD, round } from '../../claw-env/graders/score.ts';
import type { ClawTask } from '../../claw-env/tasks/format.ts';
import type { EpisodeMeta } from '../../protocol/recording.ts';
import type { ClawEnvFactory } from './env.ts';
import { runClawTrial, type ClawTrial } from './episode.ts';
import type { ToolPolicy } from './policy.ts';

export interface ClawRunOptions {
  tasks: ClawTask[];
  policy: ToolPolicy;
  env: ClawEnvFactory;
  trials: number;
  concurrency: number;
  /** Run directory (recordings under episodes/, summary.json, report.md); none = no files. */
  out?: string;
  judge?: ClawJudge;
  runId?: string;
  onTrial?: (t: ClawTrial, done: number, total: number) => void;
}

interface ClawTaskRow {
  task_id: string;
  trials: number;
  passes: number;
  mean_score: number;
  pass_at_k: number;
  /** τ-bench's unbiased pass^k, C(c,k)/C(n,k). */
  pass_hat_k: number;
  /** Claw-Eval's pass^k (models/scoring.py), (c/n)^k. */
  pass_hat_k_claw_eval: number;
  safety_violations: number;
  errors: number;
}

export interface ClawReport {
  run_id: string;
  policy: string;
  tasks: number;
  trials_per_task: number;
  k: number;
  pass_threshold: number;
  mean_score: number;
  mean_completion: number;
  mean_robustness: number;
  safety_rate: number;
  pass_at_1: number;
  pass_at_k: number;
  pass_hat_k: number;
  pass_hat_k_claw_eval: number;
  rows: ClawTaskRow[];
  duration_ms: number;
}

function episodeMeta(t: ClawTrial, task: ClawTask, runId: string, policy: string): EpisodeMeta {
  const g = t.grade;
  return {
    episode_id: `${t.task_id}__t${t.trial}`,
    run_id: runId,
    task: { id: task.id, suite: 'claw', site: task.apps.join(','), question: task.prompt, extra: { source: task.source, category: task.category }, flags: [] },
    config: { policy, max_turns: task.limits.max_turns, trial: t.trial },
    versions: {},
    started_at: t.started_at,
    finished_at: new Date(Date.parse(t.started_at) + t.duration_ms).toISOString(),
    status: 'complete',
    steps: t.steps.length,
    termination: t.termination,
    answer: t.answer,
    // reward: pass (score ≥ 0.75) as 1, else 0 (the viewer counts reward > 0 as success); the score is in the verdict.
    ...(g ? { reward: g.passed ? 1 : 0 } : {}),
    verdicts: g
      ? [
          {
            judge: 'claw',
            outcome: g.passed ? 'success' : 'failure',
            score: g.score,
            reasoning: [`score ${g.score} = safety ${g.safety} × (0.8 × completion ${g.completion} + 0.2 × robustness ${g.robustness})`, ...g.checks.map((c) => `${c.passed ? '✓' : '✗'} ${c.name}: ${c.detail}`), ...g.safety_violations.map((v) => `UNSAFE: ${v}`)].join('\n'),
            details: g as unknown as Record<string, unknown>,
          },
        ]
      : [],
  };
}

async function record(dir: string, t: ClawTrial, task: ClawTask, runId: string, policy: string): Promise<void> {
  const ep = path.join(dir, 'episodes', `${t.task_id}__t${t.trial}`);
  await mkdir(ep, { recursive: true });
  await writeFile(path.join(ep, 'steps.jsonl'), t.steps.map((s) => JSON.stringify(s)).join('\n') + (t.steps.length ? '\n' : ''));
  await writeFile(path.join(ep, 'episode.json'), JSON.stringify(episodeMeta(t, task, runId, policy), null, 1));
}

export function summarize(trials: ClawTrial[], k: number, meta: { run_id: string; policy: string; duration_ms: number }): ClawReport {
  const byTask = new Map<string, ClawTrial[]>();
  for (const t of trials) byTask.set(t.task_id, [...(byTask.get(t.task_id) ?? []), t]);
  const rows: ClawTaskRow[] = [...byTask].map(([task_id, ts]) => {
    const passes = ts.filter((t) => t.grade?.passed).length;
    return {
      task_id,
      trials: ts.length,
      passes,
      mean_score: round(ts.reduce((s, t) => s + (t.grade?.score ?? 0), 0) / ts.length),
      pass_at_k: passAtK(ts.length, passes, Math.min(k, ts.length)),
      pass_hat_k: passHatK(ts.length, passes, Math.min(k, ts.length)),
      pass_hat_k_claw_eval: passHatKClawEval(ts.length, passes, Math.min(k, ts.length)),
      safety_violations: ts.filter((t) => t.grade && t.grade.safety === 0).length,
      errors: ts.filter((t) => !t.grade || t.termination.reason === 'generation_error').length,
    };
  });
  const mean = (f: (t: ClawTrial) => number) => (trials.length ? round(trials.reduce((s, t) => s + f(t), 0) / trials.length) : 0);
  const meanRows = (f: (r: ClawTaskRow) => number) => (rows.length ? round(rows.reduce((s, r) => s + f(r), 0) / rows.length) : 0);
  return {
    ...meta,
    tasks: rows.length,
    trials_per_task: rows.length ? Math.max(...rows.map((r) => r.trials)) : 0,
    k,
    pass_threshold: PASS_THRESHOLD,
    mean_score: mean((t) => t.grade?.score ?? 0),
    mean_completion: mean((t) => t.grade?.completion ?? 0),
    mean_robustness: mean((t) => t.grade?.robustness ?? 0),
    safety_rate: mean((t) => t.grade?.safety ?? 0),
    pass_at_1: meanRows((r) => passAtK(r.trials, r.passes, 1)),
    pass_at_k: meanRows((r) => r.pass_at_k),
    pass_hat_k: meanRows((r) => r.pass_hat_k),
    pass_hat_k_claw_eval: meanRows((r) => r.pass_hat_k_claw_eval),
    rows,
  };
}

export function reportText(r: ClawReport): string {
  const lines = [
    `Claw run ${r.run_id} · policy ${r.policy} · ${r.tasks} task(s) × ${r.trials_per_task} trial(s)`,
    `mean score ${r.mean_score} (completion ${r.mean_completion}, robustness ${r.mean_robustness}, safe ${r.safety_rate})`,
    `pass@1 ${r.pass_at_1} · pass@${r.k} ${r.pass_at_k} · pass^${r.k} τ-bench unbiased C(c,k)/C(n,k) ${r.pass_hat_k} · pass^${r.k} Claw-Eval (c/n)^k ${r.pass_hat_k_claw_eval} (pass = score ≥ ${r.pass_threshold})`,
    '',
    '| task | trials | passes | mean score | pass@k | pass^k C(c,k)/C(n,k) | pass^k (c/n)^k | unsafe |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.task_id} | ${x.trials} | ${x.passes} | ${x.mean_score} | ${x.pass_at_k} | ${x.pass_hat_k} | ${x.pass_hat_k_claw_eval} | ${x.safety_violations} |`),
  ];
  return lines.join('\n');
}

export async function runClaw(opts: ClawRunOptions): Promise<{ report: ClawReport; trials: ClawTrial[] }> {
  const started = Date.now();
  const runId = opts.runId ?? `claw-${new Date(started).toISOString().replace(/[:.]/g, '-')}`;
  const jobs = opts.tasks.flatMap((task) => Array.from({ length: opts.trials }, (_, i) => ({ task, trial: i + 1 })));
  const trials: ClawTrial[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { task, trial } = jobs[next++];
      const t = await runClawTrial(task, trial, opts.policy, opts.env, { judge: opts.judge });
      trials.push(t);
      if (opts.out) await record(opts.out, t, task, runId, opts.policy.name);
      opts.onTrial?.(t, trials.length, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, jobs.length)) }, worker));
  trials.sort((a, b) => a.task_id.localeCompare(b.task_id) || a.trial - b.trial);
  const report = summarize(trials, opts.trials, { run_id: runId, policy: opts.policy.name, duration_ms: Date.now() - started });
  if (opts.out) {
    await mkdir(opts.out, { recursive: true });
    await writeFile(path.join(opts.out, 'claw-summary.json'), JSON.stringify(report, null, 1));
    await writeFile(path.join(opts.out, 'claw-report.md'), reportText(report) + '\n');
  }
  return { report, trials };
}
