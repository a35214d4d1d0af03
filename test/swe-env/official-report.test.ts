// SWE-bench 5's report files, key for key: report.json per instance (get_eval_report) and the run report
// (make_run_report), with the advisory failure classes their harness adds (infra_failure.py's signatures).
import { describe, expect, it } from 'vitest';
import type { Evaluation } from '../../swe-env/evaluate.ts';
import { grade } from '../../swe-env/grading.ts';
import { classifyFailure, timeoutNote } from '../../swe-env/infra-failure.ts';
import { recordedExitCode, recordTestExitCode } from '../../swe-env/official-image.ts';
import { officialReport, officialRunReport, summarize } from '../../swe-env/preds.ts';

const graded = (id: string, status: Record<string, string>): Evaluation => {
  const report = grade(['f'], ['p'], status as never);
  return { instance_id: id, patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolution: report.resolution, resolved: report.resolved, report, test_log: 'PASSED f', test_exit_code: 0 };
};
const ungraded = (id: string, error: string, log: string): Evaluation => ({
  instance_id: id, patch_is_None: false, patch_exists: true, patch_successfully_applied: error !== 'patch_apply_failed', resolution: 'NO', resolved: false, report: null, test_log: log, test_exit_code: 1, error,
});

describe("report.json as SWE-bench 5's get_eval_report writes it", () => {
  it('a graded instance: the five flags in their order, then tests_status with the four lists', () => {
    const r = officialReport(graded('x-1', { f: 'PASSED', p: 'PASSED' }))!['x-1'] as Record<string, unknown>;
    expect(Object.keys(r)).toEqual(['patch_is_None', 'patch_exists', 'patch_successfully_applied', 'resolved', 'infra_failure', 'tests_status']);
    expect(r).toEqual({
      patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: true, infra_failure: false,
      tests_status: { FAIL_TO_PASS: { success: ['f'], failure: [] }, PASS_TO_PASS: { success: ['p'], failure: [] }, FAIL_TO_FAIL: { success: [], failure: [] }, PASS_TO_FAIL: { success: [], failure: [] } },
    });
  });

  it('a log that describes no test run: not applied, no tests_status, the failure class when the log shows one', () => {
    const env = officialReport(ungraded('x-2', 'no_test_results', 'pip: Could not resolve host: files.example'))!['x-2'];
    expect(env).toEqual({ patch_is_None: false, patch_exists: true, patch_successfully_applied: false, resolved: false, infra_failure: true, infra_failure_reason: 'network_unreachable' });
    expect(Object.keys(env as object)).toEqual(['patch_is_None', 'patch_exists', 'patch_successfully_applied', 'resolved', 'infra_failure', 'infra_failure_reason']);
    // Ambiguous (the patch may be the cause): infra_failure stays false, the reason is given.
    expect(officialReport(ungraded('x-3', 'no_test_results', 'collected 0 items\n'))!['x-3']).toMatchObject({ infra_failure: false, infra_failure_reason: 'no_tests_collected' });
    expect(officialReport(ungraded('x-4', 'no_test_results', 'SyntaxError'))!['x-4']).toEqual({ patch_is_None: false, patch_exists: true, patch_successfully_applied: false, resolved: false, infra_failure: false });
  });

  it('no report.json where their run_instance stops before grading: a patch that does not apply, tests past their time', () => {
    expect(officialReport(ungraded('x-5', 'patch_apply_failed', 'error: patch failed'))).toBeNull();
    expect(officialReport(ungraded('x-6', 'tests_timed_out', `....${timeoutNote(1800)}`))).toBeNull();
  });
});

describe('the run report as SWE-bench 5 writes it', () => {
  it('has their keys in their order; unresolved and error instances are classified by their logs, counts unchanged', () => {
    const predictions = new Map<string, string | null>([['a-1', 'd'], ['a-2', 'd'], ['a-3', 'd'], ['a-4', ''], ['a-5', 'd'], ['a-6', 'd']]);
    const runs = new Map([
      ['a-1', { resolved: true, logs: ['collected 0 items'] }],
      ['a-2', { resolved: false, logs: ['PASSED x\nno tests ran in 0.01s', ''] }],
      ['a-3', { logs: ['', 'tests_timed_out', `${timeoutNote(60)}`] }],
      ['a-5', { logs: ['Killed', 'install_failed'] }],
      ['a-6', { resolved: false, logs: ['FAILED f', ''] }],
    ]);
    const run = officialRunReport(['a-1', 'a-2', 'a-3', 'a-4', 'a-5', 'a-6', 'a-7'], predictions, runs);
    expect(Object.keys(run)).toEqual([
      'total_instances', 'submitted_instances', 'completed_instances', 'resolved_instances', 'unresolved_instances', 'infra_failure_instances',
      'ambiguous_failure_instances', 'empty_patch_instances', 'error_instances', 'completed_ids', 'incomplete_ids', 'empty_patch_ids', 'submitted_ids',
      'resolved_ids', 'unresolved_ids', 'infra_failure_ids', 'ambiguous_failure_ids', 'failure_reasons', 'error_ids', 'schema_version',
    ]);
    expect(run).toEqual({
      total_instances: 7, submitted_instances: 6, completed_instances: 3, resolved_instances: 1, unresolved_instances: 2,
      infra_failure_instances: 1, ambiguous_failure_instances: 2, empty_patch_instances: 1, error_instances: 2,
      completed_ids: ['a-1', 'a-2', 'a-6'], incomplete_ids: ['a-7'], empty_patch_ids: ['a-4'], submitted_ids: ['a-1', 'a-2', 'a-3', 'a-4', 'a-5', 'a-6'],
      resolved_ids: ['a-1'], unresolved_ids: ['a-2', 'a-6'],
      // a resolved instance is never classified (a-1's log shows "collected 0 items" too)
      infra_failure_ids: ['a-5'], ambiguous_failure_ids: ['a-2', 'a-3'], failure_reasons: { 'a-2': 'no_tests_collected', 'a-3': 'tests_timed_out', 'a-5': 'out_of_memory' },
      error_ids: ['a-3', 'a-5'], schema_version: 2,
    });
  });

  it('classifies with their signatures in their order (the first that matches wins)', () => {
    expect(classifyFailure('ModuleNotFoundError: x\nTemporary failure in name resolution')).toEqual({ reason: 'network_unreachable', tier: 'environment' });
    expect(classifyFailure('E   ModuleNotFoundError: No module named tomli')).toEqual({ reason: 'missing_module', tier: 'ambiguous' });
    // `Killed` counts only as a whole line.
    expect(classifyFailure('the process was Killed by a test')).toBeNull();
    expect(classifyFailure('', undefined)).toBeNull();
  });

  it("Grove's own summary counts a log without a test run as NO, not as an error", () => {
    const s = summarize(2, [graded('b-1', { f: 'PASSED', p: 'PASSED' }), ungraded('b-2', 'no_test_results', '')]);
    expect(s).toMatchObject({ resolved_instances: 1, unresolved_instances: 1, error_instances: 0 });
  });
});

describe("the official image's eval script keeps the test command's exit status", () => {
  it('saves $? before the end marker and prints it after, outside the parsed part', () => {
    const script = "#!/bin/bash\nset -uxo pipefail\n: '>>>>> Start Test Output'\npytest -rA t.py\n: '>>>>> End Test Output'\ngit checkout abc t.py\n";
    expect(recordTestExitCode(script)).toBe("#!/bin/bash\nset -uxo pipefail\n: '>>>>> Start Test Output'\npytest -rA t.py\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\ngit checkout abc t.py\n");
    expect(recordTestExitCode('echo no markers')).toBe('echo no markers');
    expect(recordedExitCode('+ : >>>>> End Test Output\n>>>>> Test Exit Code: 1\n')).toBe(1);
    expect(recordedExitCode('nothing')).toBeNull();
  });
});
