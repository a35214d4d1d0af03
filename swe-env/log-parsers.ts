// Test-log parsers, one per test framework, as SWE-bench's harness keeps them (its log_parsers module maps each
// repository to one): the raw output of the test command → test name → status. Our own code.
import type { TestStatus } from '../protocol/swe.ts';

export type LogParser = (log: string) => Map<string, TestStatus>;

/** `python -m unittest -v`: "test_x (pkg.mod.Class.test_x) ... ok" (the result may follow on a later line). */
export const parseUnittest: LogParser = (log) => {
  const out = new Map<string, TestStatus>();
  const lines = log.split('\n');
  let pending: string | null = null;
  // The verdict ends the test's line ("... ok"), or ends a later line when the test printed output first.
  const RESULT: Array<[RegExp, TestStatus]> = [
    [/(?:\.\.\. |^)ok$/, 'PASSED'],
    [/(?:\.\.\. |^)FAIL$/, 'FAILED'],
    [/(?:\.\.\. |^)ERROR$/, 'ERROR'],
    [/(?:\.\.\. |^)skipped\b.*$/, 'SKIPPED'],
    [/(?:\.\.\. |^)expected failure$/, 'XFAIL'],
    [/(?:\.\.\. |^)unexpected success$/, 'FAILED'],
  ];
  for (const raw of lines) {
    const line = raw.trimEnd();
    const head = /^(\w+ \([\w.]+\))(?: \.\.\. |$)/.exec(line);
    if (head) pending = head[1];
    const name = head ? head[1] : pending;
    if (!name) continue;
    for (const [re, status] of RESULT) {
      if (re.test(line)) {
        out.set(name, status);
        pending = null;
        break;
      }
    }
  }
  // "ERROR: test_x (pkg.mod.Class.test_x)" headers of failures raised outside the verbose line (setUpClass, imports).
  for (const m of log.matchAll(/^(ERROR|FAIL): (\w+ \([\w.]+\))/gm)) if (!out.has(m[2])) out.set(m[2], m[1] === 'ERROR' ? 'ERROR' : 'FAILED');
  return out;
};

/** `pytest -rA`: the short summary lines "PASSED tests/x.py::test_y", "FAILED tests/x.py::test_z - msg". */
export const parsePytest: LogParser = (log) => {
  const out = new Map<string, TestStatus>();
  for (const m of log.matchAll(/^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)/gm)) {
    const status = m[1] === 'XPASS' ? 'FAILED' : (m[1] as TestStatus);
    out.set(m[2], status);
  }
  return out;
};

export const LOG_PARSERS = { unittest: parseUnittest, pytest: parsePytest } as const;
export type LogParserName = keyof typeof LOG_PARSERS;
