// SWE-bench grading of the fixture instances in real shell sandboxes (bubblewrap, git, python's unittest).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SweInstance } from '../../protocol/swe.ts';
import { createShellEnvironment, type ShellEnvironment } from '../../shell-env/index.ts';
import { buildFixture, evaluateInstance, evaluatePredictions, localProvider, type Fixture, type SandboxProvider } from '../../swe-env/index.ts';

let env: ShellEnvironment;
let fixture: Fixture;
let provider: SandboxProvider;
const byId = (id: string) => fixture.instances.find((i) => i.instance_id === id) as SweInstance;
const opts = () => ({ repos: { [fixture.repo]: fixture.repoPath } });
const pred = (id: string, patch: string) => ({ instance_id: id, model_name_or_path: 'test', model_patch: patch });

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-'));
  fixture = await buildFixture(dir);
  env = await createShellEnvironment({
    dataDir: path.join(dir, 'sandboxes'),
    images: {},
    uidBase: 61_000,
    limits: { cpu: 1, memoryMb: 512, maxProcesses: 128, maxOutputBytes: 1 << 20, maxFileBytes: 64 << 20, execTimeoutMs: 120_000 },
  });
  provider = localProvider(env);
}, 60_000);

afterAll(async () => {
  await env?.shutdown();
});

describe('SWE-bench grading of the fixture instances', () => {
  it('grades every gold patch FULL except textkit-3, whose gold patch breaks a PASS_TO_PASS test (NO)', async () => {
    const run = await evaluatePredictions(provider, fixture.instances, fixture.instances.map((i) => pred(i.instance_id, i.patch ?? '')), { ...opts(), concurrency: 3 });
    const r = Object.fromEntries(run.reports.map((x) => [x.instance_id, x]));
    expect(r['textkit-1']).toMatchObject({ resolution: 'FULL', resolved: true, patch_applied: true, error: null });
    expect(r['textkit-2']).toMatchObject({ resolution: 'FULL', resolved: true });
    expect(r['textkit-3']).toMatchObject({ resolution: 'NO', resolved: false, error: null });
    expect(r['textkit-3'].tests_status.FAIL_TO_PASS).toEqual({ success: ['test_no_trailing_space (tests.test_wrap.TestWrap.test_no_trailing_space)'], failure: [] });
    expect(r['textkit-3'].tests_status.PASS_TO_PASS.failure).toEqual(['test_keeps_blank_lines (tests.test_wrap.TestWrap.test_keeps_blank_lines)']);
    expect(run).toMatchObject({ submitted_instances: 3, resolved_instances: 2, resolved_ids: ['textkit-1', 'textkit-2'], unresolved_ids: ['textkit-3'] });
    // Per-test results cover the whole suite that ran (6 base tests + the instance's new ones).
    expect(Object.keys(r['textkit-1'].test_results)).toHaveLength(8);
  }, 180_000);

  it('grades NO without a patch (the F2P tests fail on the base commit)', async () => {
    const r = await evaluateInstance(provider, byId('textkit-1'), pred('textkit-1', ''), opts());
    expect(r).toMatchObject({ resolution: 'NO', patch_is_empty: true, patch_applied: false, error: null });
    expect(r.tests_status.FAIL_TO_PASS.failure).toHaveLength(2);
    expect(r.tests_status.PASS_TO_PASS.failure).toEqual([]);
  }, 120_000);

  it('grades PARTIAL for a patch that fixes one of two FAIL_TO_PASS tests', async () => {
    const r = await evaluateInstance(provider, byId('textkit-2'), pred('textkit-2', fixture.patches['textkit-2:partial']), opts());
    expect(r.resolution).toBe('PARTIAL');
    expect(r.tests_status.FAIL_TO_PASS).toEqual({
      success: ['test_median_even (tests.test_stats.TestStats.test_median_even)'],
      failure: ['test_mean_empty (tests.test_stats.TestStats.test_mean_empty)'],
    });
  }, 120_000);

  it('a patch that does not apply is NO with the reason; a model edit to a graded test file is discarded', async () => {
    const bad = await evaluateInstance(provider, byId('textkit-1'), pred('textkit-1', '--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n'), opts());
    expect(bad).toMatchObject({ resolution: 'NO', patch_applied: false });
    expect(bad.error).toMatch(/patch did not apply/);
    // A "fix" that rewrites the F2P tests to pass trivially: the test patch restores them, so it stays NO.
    const cheat = [
      'diff --git a/tests/test_slug.py b/tests/test_slug.py',
      '--- a/tests/test_slug.py',
      '+++ b/tests/test_slug.py',
      '@@ -9,3 +9,6 @@ class TestSlug(unittest.TestCase):',
      ' ',
      '     def test_basic(self):',
      '         self.assertEqual(slugify("hello world"), "hello-world")',
      '+',
      '+    def test_collapses_runs(self):',
      '+        pass',
      '',
    ].join('\n');
    const r = await evaluateInstance(provider, byId('textkit-1'), pred('textkit-1', cheat), opts());
    expect(r).toMatchObject({ patch_applied: true, resolution: 'NO' });
  }, 120_000);
});
