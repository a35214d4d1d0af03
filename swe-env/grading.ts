// Grading as SWE-bench grades (its `grading.py`): each FAIL_TO_PASS and PASS_TO_PASS test is a success when the
// log shows it PASSED or XFAIL, a failure when it shows FAILED or ERROR or is missing; SKIPPED is neither. A list's
// rate is successes / (successes + failures), 1 for an empty list. FULL: every F2P and every P2P succeed; PARTIAL:
// some but not all F2P succeed and every P2P does; NO otherwise (a broken P2P test is always NO).
import type { StatusMap } from './log-parsers.ts';

type Resolution = 'FULL' | 'PARTIAL' | 'NO';

interface TestOutcome {
  success: string[];
  failure: string[];
}

export interface GradeReport {
  resolution: Resolution;
  resolved: boolean;
  FAIL_TO_PASS: TestOutcome;
  PASS_TO_PASS: TestOutcome;
  /** Per test of both lists: the status the log showed, or MISSING. */
  tests: Record<string, string>;
}

function outcome(tests: string[], status: StatusMap): TestOutcome {
  const out: TestOutcome = { success: [], failure: [] };
  for (const t of tests) {
    const s = status[t];
    if (s === 'PASSED' || s === 'XFAIL') out.success.push(t);
    else if (s === undefined || s === 'FAILED' || s === 'ERROR') out.failure.push(t);
  }
  return out;
}

function rate(o: TestOutcome): number {
  const n = o.success.length + o.failure.length;
  return n === 0 ? 1 : o.success.length / n;
}

export function grade(f2p: string[], p2p: string[], status: StatusMap): GradeReport {
  const F = outcome(f2p, status);
  const P = outcome(p2p, status);
  const fr = rate(F);
  const pr = rate(P);
  const resolution: Resolution = fr === 1 && pr === 1 ? 'FULL' : fr > 0 && fr < 1 && pr === 1 ? 'PARTIAL' : 'NO';
  const tests: Record<string, string> = {};
  for (const t of [...f2p, ...p2p]) tests[t] = status[t] ?? 'MISSING';
  return { resolution, resolved: resolution === 'FULL', FAIL_TO_PASS: F, PASS_TO_PASS: P, tests };
}
