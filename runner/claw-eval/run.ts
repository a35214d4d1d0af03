// `grove claw run --claw-eval DIR`: k trials of each ready task of the checkout, N at a time, graded by the tasks'
// own graders; a summary as Claw-Eval's batch prints it (errored trials left out; avg score, pass@1, pass^k as
// (c/n)^k) with τ-bench's unbiased pass^k C(c,k)/C(n,k) beside it, each named by its definition. --out writes one
// trace per trial in Claw-Eval's JSONL trace format (trace_start, message, tool_dispatch, audit_snapshot, trace_end,
// grading_result), which `claw-eval grade --trace` reads as well.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ClawEvalTask } from '../../claw-env/claw-eval/checkout.ts';
import type { ClawEvalTrace } from '../../claw-env/claw-eval/grade.ts';
import { passAtK, passHatK, passHatKClawEval, PASS_THRESHOLD, round } from '../../claw-env/graders/score.ts';
import { runClawEvalTrial, type ClawEvalTrialOptions, type ClawEvalTrialResult } from './trial.ts';

export interface ClawEvalTaskRow {
  task_id: string;
  trials: number;
  errored: number;
  passes: number;
  avg_score: number;
  pass_at_1: number;
  /** Claw-Eval's pass^k: (c/n)^n over the n graded trials. */
  pass_hat_k_claw_eval: number;
  /** τ-bench's unbiased pass^k: C(c,k)/C(n,k) with k the trials asked for (0 when fewer were graded). */
  pass_hat_k_unbiased: number;
  scores: number[];
  errors: string[];
}

export interface ClawEvalReport {
  k: number;
  tasks: ClawEvalTaskRow[];
  graded_tasks: number;
  errored_tasks: number;
  avg_score: number;
  pass_at_1: number;
  pass_hat_k_claw_eval: number;
  pass_hat_k_unbiased: number;
  trials_per_minute: number;
  duration_ms: number;
}

export function summarizeClawEval(results: ClawEvalTrialResult[], k: number, durationMs: number): ClawEvalReport {
  const by = new Map<string, ClawEvalTrialResult[]>();
  for (const r of results) by.set(r.task_id, [...(by.get(r.task_id) ?? []), r]);
  const rows: ClawEvalTaskRow[] = [];
  for (const [task_id, rs] of by) {
    const scores = rs.filter((r) => r.grade).map((r) => r.grade!.task_score);
    const n = scores.length;
    const c = scores.filter((s) => s >= PASS_THRESHOLD).length;
    rows.push({
      task_id,
      trials: rs.length,
      errored: rs.length - n,
      passes: c,
      avg_score: n ? round(scores.reduce((a, b) => a + b, 0) / n) : 0,
      pass_at_1: passAtK(n, c, 1),
      pass_hat_k_claw_eval: passHatKClawEval(n, c, n),
      pass_hat_k_unbiased: passHatK(n, c, k),
      scores,
      errors: rs.filter((r) => r.error).map((r) => r.error!),
    });
  }
  const graded = rows.filter((r) => r.trials > r.errored);
  const mean = (f: (r: ClawEvalTaskRow) => number) => (graded.length ? round(graded.reduce((a, r) => a + f(r), 0) / graded.length) : 0);
  return {
    k,
    tasks: rows,
    graded_tasks: graded.length,
    errored_tasks: rows.length - graded.length,
    avg_score: mean((r) => r.avg_score),
    pass_at_1: mean((r) => r.pass_at_1),
    pass_hat_k_claw_eval: mean((r) => r.pass_hat_k_claw_eval),
    pass_hat_k_unbiased: mean((r) => r.pass_hat_k_unbiased),
    trials_per_minute: durationMs > 0 ? round((results.length * 60_000) / durationMs, 2) : 0,
    duration_ms: Math.round(durationMs),
  };
}

export function clawEvalReportText(r: ClawEvalReport): string {
  const lines = [`Claw-Eval (the checkout's own services, graders and compute_task_score), k=${r.k}`];
  lines.push('task                                     graded  err  avg    pass@1  pass^k (c/n)^k  pass^k C(c,k)/C(n,k)');
  for (const t of r.tasks) lines.push(`${t.task_id.padEnd(40)} ${String(t.trials - t.errored).padStart(6)} ${String(t.errored).padStart(4)}  ${t.avg_score.toFixed(3)}  ${t.pass_at_1.toFixed(3)}   ${t.pass_hat_k_claw_eval.toFixed(3)}           ${t.pass_hat_k_unbiased.toFixed(3)}`);
  lines.push(`tasks graded ${r.graded_tasks}, all trials errored ${r.errored_tasks}`);
  lines.push(`avg score ${r.avg_score.toFixed(4)}  pass@1 ${r.pass_at_1.toFixed(4)}  Claw-Eval pass^k (c/n)^k ${r.pass_hat_k_claw_eval.toFixed(4)}  τ-bench unbiased pass^k C(c,k)/C(n,k) ${r.pass_hat_k_unbiased.toFixed(4)}`);
  lines.push(`${r.trials_per_minute} trials/minute over ${(r.duration_ms / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

/** Claw-Eval's trace JSONL for one trial. */
export function traceJsonl(task: ClawEvalTask, trial: ClawEvalTrialResult, model: string): string {
  const id = `${task.id}-t${trial.trial}`;
  const ev: unknown[] = [{ type: 'trace_start', trace_id: id, task_id: task.id, model }];
  const t: ClawEvalTrace = trial.trace ?? { messages: [], dispatches: [], audit_data: {} };
  for (const m of t.media_events ?? []) ev.push({ type: 'media_load', trace_id: id, ...m });
  let d = 0;
  for (const m of t.messages) {
    ev.push({ type: 'message', trace_id: id, message: m });
    // dispatches follow the assistant message that asked for them, as Claw-Eval's loop writes them
    if (m.role === 'assistant') for (const b of m.content) if (b.type === 'tool_use' && t.dispatches[d]) ev.push({ type: 'tool_dispatch', trace_id: id, ...t.dispatches[d++] });
  }
  for (const [service_name, audit_data] of Object.entries(t.audit_data)) ev.push({ type: 'audit_snapshot', trace_id: id, service_name, audit_url: '', audit_data });
  ev.push({ type: 'trace_end', trace_id: id, total_turns: trial.turns, failure_modes: trial.error ? [trial.error] : [], user_agent_rounds: trial.user_rounds ?? 0, user_agent_max_rounds: task.user_agent?.max_rounds ?? 0 });
  if (trial.grade) ev.push({ type: 'grading_result', trace_id: id, task_id: task.id, scores: trial.grade.scores, task_score: trial.grade.task_score, passed: trial.grade.passed });
  return ev.map((e) => JSON.stringify(e)).join('\n') + '\n';
}

export interface ClawEvalRunOptions extends Omit<ClawEvalTrialOptions, 'signal'> {
  tasks: ClawEvalTask[];
  trials: number;
  concurrency: number;
  out?: string;
  signal?: AbortSignal;
  onTrial?: (r: ClawEvalTrialResult, done: number, total: number) => void;
}

export async function runClawEval(o: ClawEvalRunOptions): Promise<{ report: ClawEvalReport; results: ClawEvalTrialResult[] }> {
  const jobs = o.tasks.flatMap((task) => Array.from({ length: o.trials }, (_, trial) => ({ task, trial })));
  const results: ClawEvalTrialResult[] = [];
  o = { ...o, prompts: o.prompts ?? new Map() };
  if (o.out) mkdirSync(path.join(o.out, 'traces'), { recursive: true });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length && !o.signal?.aborted) {
      const { task, trial } = jobs[next++]!;
      const r = await runClawEvalTrial(task, trial, o);
      results.push(r);
      if (o.out) {
        writeFileSync(path.join(o.out, 'traces', `${task.id}.t${trial}.jsonl`), traceJsonl(task, r, o.policy.name));
        // the env snapshot the grader saw, beside the trace (Claw-Eval saves its own next to its trace too)
        if (r.trace?.env_snapshot) writeFileSync(path.join(o.out, 'traces', `${task.id}.t${trial}.env_snapshot.json`), JSON.stringify(r.trace.env_snapshot));
      }
      o.onTrial?.(r, results.length, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, jobs.length)) }, worker));
  const report = summarizeClawEval(results, o.trials, performance.now() - started);
  if (o.out) writeFileSync(path.join(o.out, 'claw-eval-summary.json'), JSON.stringify({ report, trials: results.map(({ trace: _t, ...r }) => r) }, null, 2));
  return { report, results };
}
