// Agreement of an LLM judge with ground truth (rule judges on the offline sites): agreement, precision and
// recall of "success", and Cohen's kappa. Episodes where either side is judge_error are left out and counted.
import type { Verdict } from '../protocol/task.ts';

export interface AgreementReport {
  n: number;
  tp: number;
  fp: number;
  tn: number;
  fn: number;
  /** Left out because the LLM judge or the ground truth had no verdict. */
  skipped: number;
  agreement: number | null;
  precision: number | null;
  recall: number | null;
  kappa: number | null;
}

export function computeAgreement(pairs: { predicted: Verdict['outcome']; truth: Verdict['outcome'] }[]): AgreementReport {
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  let skipped = 0;
  for (const p of pairs) {
    if (p.predicted === 'judge_error' || p.truth === 'judge_error' || p.predicted === 'unparsed' || p.truth === 'unparsed') {
      skipped++;
      continue;
    }
    const pr = p.predicted === 'success';
    const tr = p.truth === 'success';
    if (pr && tr) tp++;
    else if (pr) fp++;
    else if (tr) fn++;
    else tn++;
  }
  const n = tp + fp + tn + fn;
  const div = (a: number, b: number) => (b ? a / b : null);
  const po = div(tp + tn, n);
  let kappa: number | null = null;
  if (n) {
    // Chance agreement from each rater's marginal rate of "success".
    const pe = ((tp + fp) / n) * ((tp + fn) / n) + ((tn + fn) / n) * ((tn + fp) / n);
    kappa = pe === 1 ? null : (po! - pe) / (1 - pe); // undefined when both raters use one class only
  }
  return { n, tp, fp, tn, fn, skipped, agreement: po, precision: div(tp, tp + fp), recall: div(tp, tp + fn), kappa };
}

export function formatAgreement(judge: string, truth: string, a: AgreementReport): string {
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(3));
  return [
    `agreement of ${judge} with ${truth} over ${a.n} episodes (${a.skipped} left out for judge_error or no ground truth verdict)`,
    `  agreement ${f(a.agreement)}  precision ${f(a.precision)}  recall ${f(a.recall)}  cohen_kappa ${f(a.kappa)}`,
    `  tp ${a.tp}  fp ${a.fp}  tn ${a.tn}  fn ${a.fn}`,
  ].join('\n');
}
