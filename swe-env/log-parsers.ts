// Test-log parsers: a test runner's output → status per test id, as SWE-bench's harness reads logs (its
// `log_parsers.py`: one parser per repository family; the statuses PASSED, FAILED, SKIPPED, ERROR, XFAIL).
// Written here from that behaviour; a test absent from the log counts as failed at grading.

type TestStatus = 'PASSED' | 'FAILED' | 'SKIPPED' | 'ERROR' | 'XFAIL';
export type StatusMap = Record<string, TestStatus>;
export type LogParserName = 'pytest' | 'unittest';

const PYTEST_STATUSES: TestStatus[] = ['PASSED', 'FAILED', 'SKIPPED', 'ERROR', 'XFAIL'];

/**
 * `pytest -rA` summary lines: `PASSED tests/test_x.py::test_a`, `FAILED tests/test_x.py::test_b - AssertionError`.
 * The message after " - " is dropped; the id is the node id.
 */
export function parsePytest(log: string): StatusMap {
  const out: StatusMap = {};
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    const status = PYTEST_STATUSES.find((s) => line.startsWith(`${s} `));
    if (!status) continue;
    let rest = line.slice(status.length + 1).trim();
    if (status === 'FAILED' || status === 'ERROR') rest = rest.split(' - ')[0].trim();
    const id = rest.split(/\s+/)[0];
    if (id) out[id] = status;
  }
  return out;
}

// `test_name (module.Class.test_name) ... ok` (Python 3.11+) or `test_name (module.Class) ... ok` (older).
const UNITTEST_LINE = /^(\w+) \(([\w.]+)\)(?:\s.*?)? \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$/;
// The summary blocks after the run: `FAIL: test_name (module.Class.test_name)`.
const UNITTEST_SUMMARY = /^(FAIL|ERROR): (\w+) \(([\w.]+)\)/;

/** `python -m unittest -v` (and Django's runner): ids are `name (qualified)` as printed. */
export function parseUnittest(log: string): StatusMap {
  const out: StatusMap = {};
  for (const raw of log.split('\n')) {
    const line = raw.trimEnd();
    const m = line.match(UNITTEST_LINE);
    if (m) {
      const id = `${m[1]} (${m[2]})`;
      const word = m[3];
      out[id] =
        word === 'ok' ? 'PASSED'
        : word === 'FAIL' || word === 'unexpected success' ? 'FAILED'
        : word === 'ERROR' ? 'ERROR'
        : word === 'expected failure' ? 'XFAIL'
        : 'SKIPPED';
      continue;
    }
    const s = line.match(UNITTEST_SUMMARY);
    // A test whose result line was interleaved with its own output still shows up in the summary.
    if (s) out[`${s[2]} (${s[3]})`] ??= s[1] === 'FAIL' ? 'FAILED' : 'ERROR';
  }
  return out;
}

export const LOG_PARSERS: Record<LogParserName, (log: string) => StatusMap> = {
  pytest: parsePytest,
  unittest: parseUnittest,
};
