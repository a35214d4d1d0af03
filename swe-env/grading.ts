// Grading as SWE-bench grades: a FAIL_TO_PASS or PASS_TO_PASS test succeeds when the log shows it PASSED (or
// XFAIL); missing from the log counts as a failure. FULL = all F2P and all P2P succeed; PARTIAL = some but not
// all F2P succeed and all P2P succeed; NO otherwise (a broken P2P test is always NO).
import type { Resolution, SweInstance, TestStatus } from '../protocol/swe.ts';

export interface Graded {
  resolution: Resolution;
  FAIL_TO_PASS: { success: string[]; failure: string[] };
  PASS_TO_PASS: { success: string[]; failure: string[] };
}

const ok = (s: TestStatus | undefined) => s === 'PASSED' || s === 'XFAIL';

export function grade(instance: Pick<SweInstance, 'FAIL_TO_PASS' | 'PASS_TO_PASS'>, results: Map<string, TestStatus>): Graded {
  const split = (names: string[]) => ({
    success: names.filter((n) => ok(results.get(n))),
    failure: names.filter((n) => !ok(results.get(n))),
  });
  const f2p = split(instance.FAIL_TO_PASS);
  const p2p = split(instance.PASS_TO_PASS);
  // An empty list counts as fully passing (SWE-bench's ratio of an empty list is 1).
  const f2pAll = f2p.failure.length === 0;
  const p2pAll = p2p.failure.length === 0;
  let resolution: Resolution = 'NO';
  if (f2pAll && p2pAll) resolution = 'FULL';
  else if (p2pAll && f2p.success.length > 0) resolution = 'PARTIAL';
  return { resolution, FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p };
}
