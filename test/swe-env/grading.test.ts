import { describe, expect, it } from 'vitest';
import { describesRun, grade } from '../../swe-env/grading.ts';
import { parsePytest, parseUnittest } from '../../swe-env/log-parsers.ts';
import { diffFiles, specFor, testDirectives } from '../../swe-env/specs.ts';
import { parsePredictions, summarize } from '../../swe-env/preds.ts';
import { parseBashReply, submission, SUBMIT_LINE } from '../../swe-env/bash-format.ts';
import { diffSnapshots, parseChangedFiles, processSignals } from '../../swe-env/signals.ts';

const UNITTEST_LOG = `test_collapses (tests.test_slug.SlugTests.test_collapses) ... FAIL
test_lowercases (tests.test_slug.SlugTests.test_lowercases) ... ok
test_skip (tests.test_slug.SlugTests.test_skip) ... skipped 'not on this platform'
test_boom (tests.test_slug.SlugTests.test_boom) ... ERROR
test_old_style (tests.test_slug.SlugTests) ... ok
test_xf (tests.test_slug.SlugTests.test_xf) ... expected failure

======================================================================
FAIL: test_collapses (tests.test_slug.SlugTests.test_collapses)
----------------------------------------------------------------------
FAIL: test_interleaved (tests.test_slug.SlugTests.test_interleaved)
`;

describe('log parsers', () => {
  it('reads unittest -v output (3.11 and older id forms, skips, errors, summaries)', () => {
    expect(parseUnittest(UNITTEST_LOG)).toEqual({
      'test_collapses (tests.test_slug.SlugTests.test_collapses)': 'FAILED',
      'test_lowercases (tests.test_slug.SlugTests.test_lowercases)': 'PASSED',
      'test_skip (tests.test_slug.SlugTests.test_skip)': 'SKIPPED',
      'test_boom (tests.test_slug.SlugTests.test_boom)': 'ERROR',
      'test_old_style (tests.test_slug.SlugTests)': 'PASSED',
      'test_xf (tests.test_slug.SlugTests.test_xf)': 'XFAIL',
      'test_interleaved (tests.test_slug.SlugTests.test_interleaved)': 'FAILED',
    });
  });

  it('reads pytest -rA summaries, dropping failure messages', () => {
    const log = `============ short test summary info ============
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::TestK::test_two[param-1]
FAILED tests/test_a.py::test_three - AssertionError: assert 1 == 2
ERROR tests/test_b.py::test_four - ImportError
SKIPPED [1] tests/test_b.py:10: unconditional skip
XFAIL tests/test_b.py::test_five
`;
    expect(parsePytest(log)).toMatchObject({
      'tests/test_a.py::test_one': 'PASSED',
      'tests/test_a.py::TestK::test_two[param-1]': 'PASSED',
      'tests/test_a.py::test_three': 'FAILED',
      'tests/test_b.py::test_four': 'ERROR',
      'tests/test_b.py::test_five': 'XFAIL',
    });
  });
});

describe('grading as SWE-bench grades', () => {
  const S = (m: Record<string, string>) => m as never;
  it('FULL, PARTIAL and NO', () => {
    expect(grade(['a', 'b'], ['p'], S({ a: 'PASSED', b: 'XFAIL', p: 'PASSED' })).resolution).toBe('FULL');
    expect(grade(['a', 'b'], ['p'], S({ a: 'PASSED', b: 'FAILED', p: 'PASSED' })).resolution).toBe('PARTIAL');
    // A broken PASS_TO_PASS test is always NO, even with every F2P passing.
    expect(grade(['a'], ['p', 'q'], S({ a: 'PASSED', p: 'PASSED', q: 'FAILED' })).resolution).toBe('NO');
    // A test missing from the log counts as failed.
    expect(grade(['a'], ['p'], S({ p: 'PASSED' })).resolution).toBe('NO');
    expect(grade(['a'], ['p'], S({ a: 'PASSED' })).tests).toEqual({ a: 'PASSED', p: 'MISSING' });
    // As SWE-bench 5: a skipped P2P test is kept (a success), a skipped F2P test resolves nothing (a failure).
    expect(grade(['a'], ['s'], S({ a: 'PASSED', s: 'SKIPPED' }))).toMatchObject({ resolution: 'FULL', PASS_TO_PASS: { success: ['s'], failure: [] } });
    expect(grade(['a', 'k'], [], S({ a: 'PASSED', k: 'SKIPPED' }))).toMatchObject({ resolution: 'PARTIAL', FAIL_TO_PASS: { success: ['a'], failure: ['k'] } });
    expect(grade(['k'], [], S({ k: 'SKIPPED' })).resolution).toBe('NO');
    // An empty list has rate 1.
    expect(grade([], [], S({})).resolution).toBe('FULL');
    expect(grade(['a', 'b'], [], S({ a: 'FAILED', b: 'ERROR' })).resolution).toBe('NO');
  });

  it('an id cut inside its parameters stands for the logged tests it begins, when they agree', () => {
    const S = (m: Record<string, string>) => m as never;
    const log = S({ 't.py::test_g[log(photon)]': 'PASSED', 't.py::test_g[log(photon, 2)]': 'XFAIL', 't.py::test_h[a]': 'PASSED', 't.py::test_h[b]': 'FAILED' });
    expect(grade(['t.py::test_g[log(photon'], [], log)).toMatchObject({ resolution: 'FULL', tests: { 't.py::test_g[log(photon': 'PASSED' } });
    // They disagree (one passed, one failed): missing, a failure.
    expect(grade(['t.py::test_h['], [], log)).toMatchObject({ resolution: 'NO', tests: { 't.py::test_h[': 'MISSING' } });
    expect(grade(['t.py::test_h[a'], [], log).resolution).toBe('FULL');
    // An id with closed brackets (or none) is matched exactly, never by prefix.
    expect(grade(['t.py::test_g'], [], log).resolution).toBe('NO');
    expect(grade(['t.py::test_g[log]'], [], log).resolution).toBe('NO');
  });

  it('a status map describes a test run unless it is empty without evidence, or the tests exited non-zero showing no failure', () => {
    const S = (m: Record<string, string>) => m as never;
    expect(describesRun(S({ a: 'PASSED' }), 'PASSED a', 0)).toBe(true);
    expect(describesRun(S({ a: 'PASSED' }), 'PASSED a', null)).toBe(true);
    expect(describesRun(S({}), 'ImportError while loading conftest', 4)).toBe(false);
    // Nothing parsed, but a runner's summary with a count above zero: a run (whose expected tests are then missing).
    expect(describesRun(S({}), '  3 passing (20ms)', 0)).toBe(true);
    expect(describesRun(S({}), '  0 passing (20ms)', 0)).toBe(false);
    // A patch printing "PASSED" lines while the test command failed: no result.
    expect(describesRun(S({ a: 'PASSED' }), 'PASSED a', 1)).toBe(false);
    expect(describesRun(S({ a: 'PASSED', b: 'FAILED' }), '', 1)).toBe(true);
  });
});

describe('repository table', () => {
  it('maps a test patch to directives per repository', () => {
    const patch = 'diff --git a/tests/test_slug.py b/tests/test_slug.py\n--- a/tests/test_slug.py\n+++ b/tests/test_slug.py\n';
    expect(diffFiles(patch)).toEqual(['tests/test_slug.py']);
    expect(testDirectives(patch, specFor('grove/textkit', '0.1')!)).toEqual(['tests/test_slug.py']);
    expect(testDirectives(patch, specFor('psf/requests', '2.0')!)).toEqual(['tests/test_slug.py']);
    expect(testDirectives('diff --git a/tests/forms/tests.py b/tests/forms/tests.py\n', specFor('django/django', '4.0')!)).toEqual(['forms.tests']);
    // As SWE-bench: data files are no directives; other files stay (in the patch's order).
    const mixed = 'diff --git a/testing/test_a.py b/testing/test_a.py\ndiff --git a/testing/data.json b/testing/data.json\ndiff --git a/testing/conftest.cfg b/testing/conftest.cfg\n';
    expect(testDirectives(mixed, specFor('pytest-dev/pytest', '5.4')!)).toEqual(['testing/test_a.py', 'testing/conftest.cfg']);
    expect(specFor('nobody/nothing', '1')).toBeUndefined();
  });
});

describe('predictions and summary', () => {
  it('reads preds.json as a list, a keyed object or JSONL', () => {
    const row = { instance_id: 'x-1', model_name_or_path: 'm', model_patch: 'diff' };
    expect(parsePredictions(JSON.stringify([row]))).toEqual([row]);
    expect(parsePredictions(JSON.stringify({ 'x-1': { model_name_or_path: 'm', model_patch: 'diff' } }))).toEqual([row]);
    expect(parsePredictions(`${JSON.stringify(row)}\n${JSON.stringify({ ...row, instance_id: 'x-2', model_patch: null })}\n`)).toHaveLength(2);
    expect(() => parsePredictions('[{"model_patch":"d"}]')).toThrow(/instance_id/);
  });

  it('counts resolutions like the harness summary', () => {
    const base = { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, report: null, test_log: '', test_exit_code: 0, resolved: false };
    const s = summarize(4, [
      { ...base, instance_id: 'a', resolution: 'FULL', resolved: true },
      { ...base, instance_id: 'b', resolution: 'PARTIAL' },
      { ...base, instance_id: 'c', resolution: 'NO', patch_exists: false },
    ]);
    expect(s).toMatchObject({ total_instances: 4, submitted_instances: 3, resolved_ids: ['a'], partial_ids: ['b'], empty_patch_ids: ['c'] });
  });
});

describe('bash-only policy format', () => {
  it('takes exactly one bash block, ignoring reasoning', () => {
    expect(parseBashReply('Look first.\n```bash\nls -la\n```')).toEqual({ ok: true, command: 'ls -la', thought: 'Look first.' });
    expect(parseBashReply('<think>maybe ```bash\nrm -rf /\n``` no</think>Run it.\n```bash\npwd\n```')).toMatchObject({ ok: true, command: 'pwd' });
    expect(parseBashReply('no block')).toMatchObject({ ok: false });
    expect(parseBashReply('```bash\na\n```\n```bash\nb\n```')).toMatchObject({ ok: false, error: expect.stringMatching(/2 bash blocks/) });
  });
  it('detects the submission', () => {
    expect(submission(`${SUBMIT_LINE}\ndiff --git a/x b/x\n`, 0)).toBe('diff --git a/x b/x\n');
    expect(submission(`${SUBMIT_LINE}\n`, 1)).toBeNull();
    expect(submission(`hello\n${SUBMIT_LINE}`, 0)).toBeNull();
  });
});

describe('process signals', () => {
  const step = (n: number, command: string, exit: number, changed: string[] = []) => ({ step: n, command, exit_code: exit, changed_files: changed });
  it('a good trajectory: writes a failing test, fixes, runs the tests green', () => {
    const s = processSignals(
      [
        step(1, 'ls', 0),
        step(2, "cat >> tests/test_slug.py <<'EOF'\n...\nEOF", 0, ['tests/test_slug.py']),
        step(3, 'python3 -m unittest tests.test_slug', 1),
        step(4, "sed -i 's/x/y/' textkit/slug.py", 0, ['textkit/slug.py']),
        step(5, 'python3 -m unittest -v', 0),
      ],
      [],
    );
    expect(s).toMatchObject({ reproduced_bug: true, ran_tests_after_fix: true, kept_tests_passing: true, fix_steps: [4], test_edit_steps: [2] });
  });
  it('a bad trajectory: edits without tests, and a test run only before the fix', () => {
    const s = processSignals([step(1, 'python3 -m pytest', 1), step(2, 'sed -i s/a/b/ src/x.py', 0, ['src/x.py'])], ['p1']);
    expect(s).toMatchObject({ reproduced_bug: false, ran_tests_after_fix: false, kept_tests_passing: false });
  });
  it('snapshots of changed files give per-step edits', () => {
    const a = parseChangedFiles('');
    const b = parseChangedFiles(`${'a'.repeat(40)} textkit/slug.py\nDELETED README.md\n`);
    expect(diffSnapshots(a, b)).toEqual(['README.md', 'textkit/slug.py']);
    expect(diffSnapshots(b, b)).toEqual([]);
  });
});

describe('log parsers equal to SWE-bench', () => {
  it('gives the status maps SWE-bench\'s own parsers give for the same logs', async () => {
    const { readFileSync } = await import('node:fs');
    const { LOG_PARSERS } = await import('../../swe-env/log-parsers.ts');
    const file = JSON.parse(readFileSync(new URL('./fixtures/parser-cases.json', import.meta.url), 'utf8')) as { cases: Record<string, { log: string; expected: Record<string, string> }> };
    expect(Object.keys(file.cases).sort()).toEqual(['django', 'matplotlib', 'pytest', 'pytest_options', 'pytest_v2', 'seaborn', 'sympy']);
    for (const [name, c] of Object.entries(file.cases)) {
      expect({ name, map: LOG_PARSERS[name as keyof typeof LOG_PARSERS](c.log) }).toEqual({ name, map: c.expected });
    }
  });
});
