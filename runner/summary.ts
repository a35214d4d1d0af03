// Aggregates per-task rows into summary.json. Pure.
import type { TerminationReason } from '../protocol/task.ts';
import type { EpisodeRow, Rate, RunSummary } from './types.ts';

/** Terminations that are the environment's or the operator's doing, never the model's. */
export const INFRA_REASONS: ReadonlySet<TerminationReason> = new Set(['env_error', 'website_error', 'aborted']);

export type RowClass = 'succeeded' | 'failed' | 'unparsed' | 'judge_error' | 'aborted' | 'infra';

/**
 * An episode's class in the summary: `aborted` (the operator stopped it: Ctrl-C, a cap) and `infra` (environment or
 * website) are never the model's fault; `unparsed` (the primary judge replied without a verdict and its original
 * leaves such episodes out) and `judge_error` are left out of the rate too.
 */
export function classifyRow(r: EpisodeRow): RowClass {
  if (r.termination.reason === 'aborted') return 'aborted';
  if (INFRA_REASONS.has(r.termination.reason)) return 'infra';
  if (r.success === true) return 'succeeded';
  if (r.success === null && r.verdicts[0]?.outcome === 'unparsed') return 'unparsed';
  if (r.success === null && r.verdicts.some((v) => v.outcome === 'judge_error')) return 'judge_error';
  return 'failed';
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  // Nearest-rank on a sorted array.
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);

/** Histogram keys: single values up to 30 steps, otherwise ~20 equal-width buckets "lo-hi". */
export function stepsHistogram(steps: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  if (steps.length === 0) return out;
  const max = Math.max(...steps);
  const width = max <= 30 ? 1 : Math.ceil((max + 1) / 20);
  for (let lo = 0; lo <= max; lo += width) out[width === 1 ? String(lo) : `${lo}-${lo + width - 1}`] = 0;
  for (const s of steps) {
    const lo = Math.floor(s / width) * width;
    out[width === 1 ? String(lo) : `${lo}-${lo + width - 1}`]++;
  }
  return out;
}

function rates(rows: EpisodeRow[], key: (r: EpisodeRow) => string | undefined): Record<string, Rate> {
  const acc: Record<string, { total: number; succeeded: number; counted: number }> = {};
  for (const r of rows) {
    const k = key(r);
    if (k === undefined) continue;
    const a = (acc[k] ??= { total: 0, succeeded: 0, counted: 0 });
    a.total++;
    const c = classifyRow(r);
    if (c === 'succeeded') a.succeeded++;
    if (c === 'succeeded' || c === 'failed') a.counted++;
  }
  const out: Record<string, Rate> = {};
  for (const k of Object.keys(acc).sort()) {
    out[k] = { total: acc[k].total, succeeded: acc[k].succeeded, success_rate: ratio(acc[k].succeeded, acc[k].counted) };
  }
  return out;
}

export interface SummaryMeta {
  run_id: string;
  suite: string;
  model?: string;
  policy?: string;
  judge?: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  /** Tasks selected for the run (rows may be fewer when a cap stopped it). */
  total: number;
  cost_usd?: number;
  env_retries?: number;
  stopped_early?: string;
}

export function summarize(rows: EpisodeRow[], meta: SummaryMeta): RunSummary {
  const counts: Record<RowClass, number> = { succeeded: 0, failed: 0, unparsed: 0, judge_error: 0, aborted: 0, infra: 0 };
  const termination_reasons: Record<string, number> = {};
  for (const r of rows) {
    counts[classifyRow(r)]++;
    termination_reasons[r.termination.reason] = (termination_reasons[r.termination.reason] ?? 0) + 1;
  }
  const steps = rows.map((r) => r.steps).sort((a, b) => a - b);
  const lat = rows.flatMap((r) => r.step_ms).sort((a, b) => a - b);
  const evaluated = counts.succeeded + counts.failed;
  return {
    run_id: meta.run_id,
    suite: meta.suite,
    model: meta.model,
    policy: meta.policy,
    judge: meta.judge,
    started_at: meta.started_at,
    finished_at: meta.finished_at,
    duration_ms: meta.duration_ms,
    total: meta.total,
    finished: rows.length,
    not_started: Math.max(0, meta.total - rows.length),
    succeeded: counts.succeeded,
    failed: counts.failed,
    judge_errors: counts.judge_error,
    unparsed: counts.unparsed,
    infra_failures: counts.infra,
    aborted: counts.aborted,
    success_rate: ratio(counts.succeeded, evaluated),
    success_rate_all: ratio(counts.succeeded, meta.total),
    by_site: rates(rows, (r) => r.site),
    by_level: rates(rows, (r) => r.level),
    termination_reasons,
    steps: {
      mean: mean(steps),
      median: percentile(steps, 50),
      max: steps.length ? steps[steps.length - 1] : 0,
      histogram: stepsHistogram(steps),
    },
    step_latency_ms: { mean: mean(lat), p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99) },
    tokens: {
      prompt: rows.reduce((a, r) => a + r.tokens.prompt, 0),
      completion: rows.reduce((a, r) => a + r.tokens.completion, 0),
    },
    cost_usd: meta.cost_usd,
    env_retries: meta.env_retries ?? rows.reduce((a, r) => a + Math.max(0, r.attempts - 1), 0),
    stopped_early: meta.stopped_early,
    episodes: rows,
  };
}

/** A fixed-width text table for the terminal (demo, `grove run`). */
export function summaryTable(s: RunSummary): string {
  const lines: string[] = [];
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  lines.push(`run ${s.run_id} (${s.suite}${s.model ? `, ${s.model}` : ''})`);
  lines.push(
    `  tasks ${s.total}  finished ${s.finished}  succeeded ${s.succeeded}  failed ${s.failed}  ` +
      `judge errors ${s.judge_errors}  unparsed ${s.unparsed}  env/website failures ${s.infra_failures}  aborted ${s.aborted}`,
  );
  lines.push(`  success rate ${pct(s.success_rate)} (strict ${pct(s.success_rate_all)})`);
  const siteW = Math.max(4, ...Object.keys(s.by_site).map((k) => k.length));
  lines.push(`  ${'site'.padEnd(siteW)}  tasks  ok  rate`);
  for (const [site, r] of Object.entries(s.by_site)) {
    lines.push(`  ${site.padEnd(siteW)}  ${String(r.total).padStart(5)}  ${String(r.succeeded).padStart(2)}  ${pct(r.success_rate).padStart(6)}`);
  }
  lines.push(`  terminations: ${Object.entries(s.termination_reasons).map(([k, v]) => `${k}=${v}`).join(', ') || 'none'}`);
  lines.push(
    `  steps mean ${s.steps.mean.toFixed(1)} max ${s.steps.max}; step latency p50 ${s.step_latency_ms.p50.toFixed(0)} ms, ` +
      `p90 ${s.step_latency_ms.p90.toFixed(0)} ms`,
  );
  if (s.stopped_early) lines.push(`  stopped early: ${s.stopped_early}`);
  return lines.join('\n');
}
