// Evaluating a patch as SWE-bench's harness does: apply the model patch to the checkout at the base commit
// (git apply, then `patch --fuzz` as a fallback), run the row's install, reset the files of the test patch to the
// base commit and apply the test patch, run the row's eval commands and test command on the test patch's
// directives, parse the log with the repository's parser, grade. A run that timed out (its log ends as SWE-bench's
// does), or whose log describes no test run (grading.ts describesRun), has no status map: not resolved.
import type { ExecResult } from '../protocol/shell.ts';
import { describesRun, grade, type GradeReport } from './grading.ts';
import { timeoutNote } from './infra-failure.ts';
import { LOG_PARSERS } from './log-parsers.ts';
import { installRepo } from './repo.ts';
import { diffFiles, testDirectives, type RepoSpec } from './specs.ts';
import { REPO_DIR, type ShellTarget, type SweInstance } from './types.ts';

export interface Evaluation {
  instance_id: string;
  patch_is_None: boolean;
  patch_exists: boolean;
  patch_successfully_applied: boolean;
  resolution: GradeReport['resolution'];
  resolved: boolean;
  report: GradeReport | null;
  /** The test run's output (merged), for the report. */
  test_log: string;
  test_exit_code: number | null;
  error?: string;
}

/** Applies a unified diff from stdin: `git apply`, else `patch --batch --fuzz=5 -p1`. */
async function applyPatch(shell: ShellTarget, patch: string): Promise<{ ok: boolean; output: string }> {
  const attempts: string[][] = [
    ['git', 'apply', '--verbose', '--whitespace=nowarn', '-'],
    ['git', 'apply', '--verbose', '--reject', '--whitespace=nowarn', '-'],
    ['patch', '--batch', '--fuzz=5', '-p1', '--forward'],
  ];
  let output = '';
  for (const argv of attempts) {
    const r = await shell.exec({ command: argv, cwd: REPO_DIR, stdin: patch, merge_stderr: true, timeout_s: 120 });
    output += `$ ${argv.join(' ')}\n${r.stdout}\n`;
    if (r.exit_code === 0) return { ok: true, output };
    // A failed --reject attempt may leave hunks applied: back to a clean tree before the next try.
    await shell.exec({ command: ['git', 'checkout', '-q', '--', '.'], cwd: REPO_DIR, timeout_s: 60 });
  }
  return { ok: false, output };
}

/** Runs the instance's tests in the prepared checkout (with the model's changes in place) and grades them. */
async function evaluateCheckout(shell: ShellTarget, inst: SweInstance, spec: RepoSpec): Promise<Pick<Evaluation, 'resolution' | 'resolved' | 'report' | 'test_log' | 'test_exit_code' | 'error'>> {
  const testPatch = inst.test_patch ?? '';
  if (testPatch) {
    const files = diffFiles(testPatch);
    // Files of the test patch return to the base commit (the agent may have edited them); new ones are removed.
    // The commit and the files are arguments of the script, never spliced into it.
    const script = 'base="$1"; shift; for f in "$@"; do if git cat-file -e "$base:$f" 2>/dev/null; then git checkout -q "$base" -- "$f"; else rm -f -- "$f"; fi; done';
    await shell.exec({ command: ['bash', '-c', script, 'grove-reset', inst.base_commit, ...files], cwd: REPO_DIR, timeout_s: 120 });
    const applied = await applyPatch(shell, testPatch);
    if (!applied.ok) return { resolution: 'NO', resolved: false, report: null, test_log: applied.output, test_exit_code: null, error: 'test_patch_failed' };
  }
  const directives = testDirectives(testPatch, spec);
  // The directives are arguments of the test command ("$@"), never spliced into it.
  const command = ['bash', '-c', `${spec.test_cmd} "$@"`, 'grove-tests', ...directives];
  const r: ExecResult = await shell.exec({ command, cwd: REPO_DIR, merge_stderr: true, timeout_s: spec.test_timeout_s, max_output_bytes: 8 * 1024 * 1024 });
  if (r.timed_out) return { resolution: 'NO', resolved: false, report: null, test_log: r.stdout + timeoutNote(spec.test_timeout_s), test_exit_code: r.exit_code, error: 'tests_timed_out' };
  const status = LOG_PARSERS[spec.log_parser](r.stdout);
  if (!describesRun(status, r.stdout, r.exit_code)) return { resolution: 'NO', resolved: false, report: null, test_log: r.stdout, test_exit_code: r.exit_code, error: 'no_test_results' };
  const report = grade(inst.FAIL_TO_PASS, inst.PASS_TO_PASS, status);
  return { resolution: report.resolution, resolved: report.resolved, report, test_log: r.stdout, test_exit_code: r.exit_code };
}

/** Applies `modelPatch` (if any) to a freshly prepared checkout and evaluates it. */
export async function evaluatePatch(shell: ShellTarget, inst: SweInstance, spec: RepoSpec, modelPatch: string | null | undefined): Promise<Evaluation> {
  const base = { instance_id: inst.instance_id, patch_is_None: modelPatch == null, patch_exists: !!modelPatch?.trim() };
  if (!modelPatch?.trim()) {
    // Without a patch the tests still run: an empty patch is graded like any other (it resolves nothing).
    await installRepo(shell, inst, spec);
    const e = await evaluateCheckout(shell, inst, spec);
    return { ...base, patch_successfully_applied: false, ...e };
  }
  const applied = await applyPatch(shell, modelPatch.endsWith('\n') ? modelPatch : `${modelPatch}\n`);
  if (!applied.ok) {
    return { ...base, patch_successfully_applied: false, resolution: 'NO', resolved: false, report: null, test_log: applied.output, test_exit_code: null, error: 'patch_apply_failed' };
  }
  await installRepo(shell, inst, spec);
  return { ...base, patch_successfully_applied: true, ...(await evaluateCheckout(shell, inst, spec)) };
}
