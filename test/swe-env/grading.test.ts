// Log parsing and SWE-bench resolution rules.
import { describe, expect, it } from 'vitest';
import { grade, parsePytest, parseUnittest } from '../../swe-env/index.ts';

const UNITTEST_LOG = `test_a (tests.test_x.T.test_a) ... ok
test_b (tests.test_x.T.test_b) ... FAIL
test_c (tests.test_x.T.test_c) ... ERROR
test_d (tests.test_x.T.test_d) ... skipped 'not today'
test_e (tests.test_x.T.test_e) ... printed something
ok
test_f (tests.test_x.T.test_f) ... expected failure

======================================================================
ERROR: test_g (tests.test_y.U.test_g)
----------------------------------------------------------------------
Traceback (most recent call last):
`;

describe('log parsers', () => {
  it('reads unittest -v, results on the same or a later line, and error headers', () => {
    expect(Object.fromEntries(parseUnittest(UNITTEST_LOG))).toEqual({
      'test_a (tests.test_x.T.test_a)': 'PASSED',
      'test_b (tests.test_x.T.test_b)': 'FAILED',
      'test_c (tests.test_x.T.test_c)': 'ERROR',
      'test_d (tests.test_x.T.test_d)': 'SKIPPED',
      'test_e (tests.test_x.T.test_e)': 'PASSED',
      'test_f (tests.test_x.T.test_f)': 'XFAIL',
      'test_g (tests.test_y.U.test_g)': 'ERROR',
    });
  });

  it('reads pytest -rA short summaries', () => {
    const log = 'PASSED tests/a.py::test_one\nFAILED tests/a.py::test_two - AssertionError\nXPASS tests/a.py::test_three\n';
    expect(Object.fromEntries(parsePytest(log))).toEqual({ 'tests/a.py::test_one': 'PASSED', 'tests/a.py::test_two': 'FAILED', 'tests/a.py::test_three': 'FAILED' });
  });
});

describe('grade', () => {
  const inst = { FAIL_TO_PASS: ['f1', 'f2'], PASS_TO_PASS: ['p1'] };
  const res = (o: Record<string, 'PASSED' | 'FAILED'>) => new Map(Object.entries(o));
  it.each([
    [{ f1: 'PASSED', f2: 'PASSED', p1: 'PASSED' }, 'FULL'],
    [{ f1: 'PASSED', f2: 'FAILED', p1: 'PASSED' }, 'PARTIAL'],
    [{ f1: 'PASSED', p1: 'PASSED' }, 'PARTIAL'], // a test missing from the log failed
    [{ f1: 'PASSED', f2: 'PASSED', p1: 'FAILED' }, 'NO'], // a broken P2P test is always NO
    [{ f1: 'PASSED', f2: 'FAILED', p1: 'FAILED' }, 'NO'],
    [{ f1: 'FAILED', f2: 'FAILED', p1: 'PASSED' }, 'NO'],
  ] as const)('%j → %s', (results, expected) => {
    expect(grade(inst, res(results)).resolution).toBe(expected);
  });

  it('an empty FAIL_TO_PASS list counts as passing', () => {
    expect(grade({ FAIL_TO_PASS: [], PASS_TO_PASS: ['p1'] }, res({ p1: 'PASSED' })).resolution).toBe('FULL');
  });
});
