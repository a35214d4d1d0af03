// Grading as SWE-bench 5.x grades (its `grading.py`). A FAIL_TO_PASS test succeeds when the log shows it PASSED or
// XFAIL and fails when it shows FAILED, ERROR or SKIPPED or is missing (a skipped F2P test resolves nothing). A
// PASS_TO_PASS test succeeds when it shows PASSED, XFAIL or SKIPPED (a skip is no regression) and fails when it shows
// FAILED or ERROR or is missing. A list's rate is successes / (successes + failures), 1 for an empty list. FULL:
// every F2P and every P2P succeed; PARTIAL: some but not all F2P succeed and every P2P does; NO otherwise.
// An expected id cut inside its parameters (more '[' than ']'; SWE-bench Verified has such ids) stands for the logged
// tests it begins when they agree on passing or not.
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

const passing = (s: string | undefined) => s === 'PASSED' || s === 'XFAIL';

/** The logged status of an expected test: its own, or that of the logged tests a cut id begins (when they agree). */
function statusOf(test: string, status: StatusMap): string | undefined {
  if (test in status) return status[test];
  if (test.split('[').length <= test.split(']').length) return undefined;
  const matches = Object.keys(status).filter((k) => k.startsWith(test));
  if (matches.length === 0 || new Set(matches.map((k) => passing(status[k]))).size !== 1) return undefined;
  return status[matches[0]];
}

function outcome(tests: string[], status: StatusMap, skipOk: boolean): TestOutcome {
  const out: TestOutcome = { success: [], failure: [] };
  for (const t of tests) {
    const s = statusOf(t, status);
    if (passing(s) || (skipOk && s === 'SKIPPED')) out.success.push(t);
    else if (s === undefined || s === 'FAILED' || s === 'ERROR' || s === 'SKIPPED') out.failure.push(t);
  }
  return out;
}

function rate(o: TestOutcome): number {
  const n = o.success.length + o.failure.length;
  return n === 0 ? 1 : o.success.length / n;
}

export function grade(f2p: string[], p2p: string[], status: StatusMap): GradeReport {
  const F = outcome(f2p, status, false);
  const P = outcome(p2p, status, true);
  const fr = rate(F);
  const pr = rate(P);
  const resolution: Resolution = fr === 1 && pr === 1 ? 'FULL' : fr > 0 && fr < 1 && pr === 1 ? 'PARTIAL' : 'NO';
  const tests: Record<string, string> = {};
  for (const t of [...f2p, ...p2p]) tests[t] = statusOf(t, status) ?? 'MISSING';
  return { resolution, resolved: resolution === 'FULL', FAIL_TO_PASS: F, PASS_TO_PASS: P, tests };
}

// Evidence that a runner ran (every count above zero), for a log in which the parser found no test: SWE-bench's list
// (karma, mocha, jest, TAP, jasmine, openlayers' rendering harness).
const SUITE_RAN = /Executed [1-9]\d* of \d+|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)|[1-9]\d* passing|Tests:\s+[1-9]\d*|Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total|^# tests [1-9]\d*|[1-9]\d* specs?, \d+ failures?|': ok$/m;

/**
 * Whether a test log's status map describes a test run, as SWE-bench's get_logs_eval decides: not when the parser found
 * nothing and nothing shows a suite ran, nor when the test command exited non-zero while the log shows no failure (a
 * patch can print its own "PASSED" lines). A map that does not is no result: the instance is not graded.
 */
export function describesRun(status: StatusMap, log: string, testExitCode: number | null): boolean {
  const statuses = Object.values(status);
  if (statuses.length === 0 && !SUITE_RAN.test(log)) return false;
  return testExitCode === null || testExitCode === 0 || statuses.length === 0 || statuses.some((s) => s === 'FAILED' || s === 'ERROR');
}
