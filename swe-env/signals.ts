// Process signals for dense rewards, computed from an episode's recorded commands: did the agent write a test
// that reproduces the bug (a test it added or changed failed before its fix and passed after), did it run the
// tests after its fix, and did existing tests keep passing. Each step carries the files the step changed (from
// the checkout's state after the step), so "edit" means what the command did, whatever tool it used.

export interface CommandStep {
  step: number;
  command: string;
  exit_code: number;
  /** Files of the checkout this step created, changed or deleted (repository-relative). */
  changed_files: string[];
}

export interface ProcessSignals {
  /** A test file was added or changed, a test run failed after that and before the fix, and one passed after it. */
  reproduced_bug: boolean;
  /** A test command ran after the last change to a non-test file. */
  ran_tests_after_fix: boolean;
  /** Every PASS_TO_PASS test passed at grading (null when the episode was not graded). */
  kept_tests_passing: boolean | null;
  /** Steps that changed non-test files, steps that changed test files, and test runs (with their exit codes). */
  fix_steps: number[];
  test_edit_steps: number[];
  test_runs: { step: number; exit_code: number }[];
}

const TEST_COMMAND = /\b(pytest|py\.test|unittest|runtests\.py|tox|nox|nosetests|go test|cargo test|npm (run )?test|yarn test|mvn test|gradle test)\b|\bpython[0-9.]*\s+(\S*\/)?(test_\S*|\S*_test)\.py\b/;
const TEST_FILE = /(^|\/)(tests?|testing)\/|(^|\/)test_[^/]*\.py$|_test\.py$|\.test\.[jt]sx?$|_test\.go$/;

function isTestCommand(command: string): boolean {
  return TEST_COMMAND.test(command);
}

function isTestFile(file: string): boolean {
  return TEST_FILE.test(file);
}

export function processSignals(steps: CommandStep[], p2pFailures: string[] | null = null): ProcessSignals {
  const fixSteps = steps.filter((s) => s.changed_files.some((f) => !isTestFile(f))).map((s) => s.step);
  const testEditSteps = steps.filter((s) => s.changed_files.some(isTestFile)).map((s) => s.step);
  const testRuns = steps.filter((s) => isTestCommand(s.command)).map((s) => ({ step: s.step, exit_code: s.exit_code }));
  const lastFix = fixSteps.length ? fixSteps[fixSteps.length - 1] : null;
  const firstFix = fixSteps.length ? fixSteps[0] : null;
  const firstTestEdit = testEditSteps.length ? testEditSteps[0] : null;
  const failedBeforeFix =
    firstTestEdit !== null && testRuns.some((r) => r.step >= firstTestEdit && (firstFix === null || r.step < firstFix) && r.exit_code !== 0);
  const passedAfterFix = lastFix !== null && testRuns.some((r) => r.step > lastFix && r.exit_code === 0);
  return {
    reproduced_bug: failedBeforeFix && passedAfterFix,
    ran_tests_after_fix: lastFix !== null && testRuns.some((r) => r.step > lastFix),
    kept_tests_passing: p2pFailures === null ? null : p2pFailures.length === 0,
    fix_steps: fixSteps,
    test_edit_steps: testEditSteps,
    test_runs: testRuns,
  };
}

/** Build artefacts that change when code merely runs (bytecode caches): never an edit. */
const ARTEFACT = /(^|\/)__pycache__\/|\.py[co]$|(^|\/)\.pytest_cache\//;

/** The checkout's changed files as `path → content hash`, from the output of `CHANGED_FILES_COMMAND`. */
export function parseChangedFiles(output: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of output.split('\n')) {
    const m = line.match(/^([0-9a-f]{40}|DELETED)\s+(.+)$/);
    if (m && !ARTEFACT.test(m[2])) out.set(m[2], m[1]);
  }
  return out;
}

/**
 * Lists every file that differs from HEAD (staged or not) or is untracked, with a content hash, and deleted ones
 * (run in the checkout). Staging (`git add`) changes nothing here: only content does.
 */
export const CHANGED_FILES_COMMAND =
  "{ git diff HEAD --name-only --no-renames -z; git ls-files -o --exclude-standard -z; } | sort -zu | while IFS= read -r -d '' f; do if [ -e \"$f\" ]; then echo \"$(git hash-object -- \"$f\") $f\"; else echo \"DELETED $f\"; fi; done";

/** Files whose state differs between two snapshots. */
export function diffSnapshots(before: Map<string, string>, after: Map<string, string>): string[] {
  const files = new Set([...before.keys(), ...after.keys()]);
  return [...files].filter((f) => before.get(f) !== after.get(f)).sort();
}
