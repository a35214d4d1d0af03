// Success-rate reports over judged episodes: overall, by site, by level, and DeepShop's per-dimension rates.
// Rates exclude judge_error episodes from the denominator; their count is shown apart. Replies without a verdict are
// counted apart as `unparsed` too: left out of the rate when the judge's original leaves them out (outcome
// `unparsed`, WebVoyager), counted as failures when the original does (WebJudge, DeepShop: `failure` + unparsed).
import type { Verdict } from '../protocol/task.ts';

/** One line of `<judge>_results.jsonl`: field names follow Online-Mind2Web's result lines where they overlap. */
export interface JudgeResultLine {
  episode: string;
  layout: string;
  task_id: string;
  task: string;
  suite: string;
  site: string;
  level?: string;
  judge: string;
  outcome: Verdict['outcome'];
  /** 1 success, 0 failure, null judge_error / unparsed. */
  predicted_label: 0 | 1 | null;
  /** The judge replied without a verdict (see the file comment for how it counts). */
  unparsed?: boolean;
  reasoning?: string;
  error_kind?: string;
  key_points?: string;
  image_judge_record?: unknown;
  evaluation_details?: unknown;
  input_text?: string;
  system_msg?: string;
  dimensions?: Record<string, 0 | 1 | null | 'judge_error'>;
  record?: string;
  /** Ground-truth outcome recorded in the episode (rule judge), for the agreement report. */
  truth?: Verdict['outcome'];
  truth_judge?: string;
  judged_at: string;
}

export function resultLine(
  base: Omit<JudgeResultLine, 'judge' | 'outcome' | 'predicted_label' | 'judged_at'>,
  v: Verdict,
): JudgeResultLine {
  const d = (v.details ?? {}) as Record<string, unknown>;
  const line: JudgeResultLine = {
    ...base,
    judge: v.judge,
    outcome: v.outcome,
    predicted_label: v.outcome === 'success' ? 1 : v.outcome === 'failure' ? 0 : null,
    reasoning: v.reasoning,
    judged_at: new Date().toISOString(),
  };
  if (typeof d.error_kind === 'string') line.error_kind = d.error_kind;
  if (v.outcome === 'unparsed' || d.unparsed === true) line.unparsed = true;
  if (typeof d.key_points === 'string') line.key_points = d.key_points;
  if (d.image_judge_record) line.image_judge_record = d.image_judge_record;
  if (d.evaluation_details) line.evaluation_details = d.evaluation_details;
  if (typeof d.input_text === 'string') line.input_text = d.input_text;
  if (typeof d.system_msg === 'string') line.system_msg = d.system_msg;
  if (d.dimensions) line.dimensions = d.dimensions as JudgeResultLine['dimensions'];
  if (typeof d.record === 'string') line.record = d.record;
  return line;
}

interface RateRow {
  episodes: number;
  success: number;
  failure: number;
  /** Replies without a verdict (outcome unparsed, or failures the original counts from such replies). */
  unparsed: number;
  judge_error: number;
  /** success / (success + failure); null when nothing was judged. */
  rate: number | null;
}

interface DimensionRow {
  present: number;
  passed: number;
  judge_error: number;
  rate: number | null;
}

export interface JudgeReport {
  judge: string;
  overall: RateRow;
  by_site: Record<string, RateRow>;
  by_level: Record<string, RateRow>;
  by_dimension?: Record<string, DimensionRow>;
}

const row = (): RateRow => ({ episodes: 0, success: 0, failure: 0, unparsed: 0, judge_error: 0, rate: null });
function add(r: RateRow, l: Pick<JudgeResultLine, 'outcome' | 'unparsed'>) {
  r.episodes++;
  if (l.outcome === 'unparsed' || l.unparsed) r.unparsed++;
  if (l.outcome !== 'unparsed') r[l.outcome]++;
  r.rate = r.success + r.failure ? r.success / (r.success + r.failure) : null;
}

export function buildReport(judge: string, lines: JudgeResultLine[]): JudgeReport {
  const rep: JudgeReport = { judge, overall: row(), by_site: {}, by_level: {} };
  const dims: Record<string, DimensionRow> = {};
  for (const l of lines) {
    add(rep.overall, l);
    add((rep.by_site[l.site || '(unknown)'] ??= row()), l);
    add((rep.by_level[l.level ?? '(none)'] ??= row()), l);
    for (const [d, v] of Object.entries(l.dimensions ?? {})) {
      if (v === null) continue;
      const r = (dims[d] ??= { present: 0, passed: 0, judge_error: 0, rate: null });
      r.present++;
      if (v === 'judge_error') r.judge_error++;
      else if (v === 1) r.passed++;
      const judged = r.present - r.judge_error;
      r.rate = judged ? r.passed / judged : null;
    }
  }
  if (Object.keys(dims).length) rep.by_dimension = dims;
  return rep;
}

const pct = (r: number | null) => (r === null ? '   -  ' : `${(r * 100).toFixed(1).padStart(5)}%`);

export function formatReport(rep: JudgeReport): string {
  const lines: string[] = [];
  const o = rep.overall;
  lines.push(
    `judge ${rep.judge}: success rate ${pct(o.rate).trim()} (${o.success}/${o.success + o.failure} judged), unparsed ${o.unparsed}, judge_error ${o.judge_error}, episodes ${o.episodes}`,
  );
  const table = (title: string, rows: Record<string, RateRow>) => {
    const keys = Object.keys(rows).sort();
    if (!keys.length) return;
    const w = Math.max(title.length, ...keys.map((k) => k.length));
    lines.push('', `${title.padEnd(w)}   rate  success  failure  unparsed  judge_error`);
    for (const k of keys) {
      const r = rows[k];
      lines.push(
        `${k.padEnd(w)}  ${pct(r.rate)}  ${String(r.success).padStart(7)}  ${String(r.failure).padStart(7)}  ${String(r.unparsed).padStart(8)}  ${String(r.judge_error).padStart(11)}`,
      );
    }
  };
  table('site', rep.by_site);
  table('level', rep.by_level);
  if (rep.by_dimension) {
    lines.push('', 'dimension   rate  passed  present  judge_error');
    for (const d of ['attribute', 'filter', 'sort', ...Object.keys(rep.by_dimension).filter((x) => !['attribute', 'filter', 'sort'].includes(x))]) {
      const r = rep.by_dimension[d];
      if (!r) continue;
      lines.push(`${d.padEnd(9)} ${pct(r.rate)}  ${String(r.passed).padStart(6)}  ${String(r.present).padStart(7)}  ${String(r.judge_error).padStart(11)}`);
    }
  }
  return lines.join('\n');
}
