// The SWE environment end to end: the fixture repository's instances in real shell sandboxes (bubblewrap) of an
// embedded Grove server, graded as SWE-bench grades; agent episodes through the local OpenAI-compatible test
// server, recorded, with process signals.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGrove, type EmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { GroveClient } from '../../client/index.ts';
import { chatBashPolicy } from '../../runner/swe/policy.ts';
import { runSwe } from '../../runner/swe/run.ts';
import { clientShellProvider, type ShellProvider } from '../../runner/swe/shell-session.ts';
import { buildFixtureRepo, FIXTURE_BASE_COMMIT, FIXTURE_REPO, fixtureInstances, type FixtureInstance } from '../../swe-env/fixture.ts';
import { SUBMIT_LINE } from '../../swe-env/bash-format.ts';
import { buildViewer } from '../../viewer/server.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

let grove: EmbeddedGrove;
let client: GroveClient;
let provider: ShellProvider;
let tmp: string;
let sources: Record<string, string>;
let instances: FixtureInstance[];
let model: OpenAITestServer;

const bash = (thought: string, cmd: string) => `${thought}\n\`\`\`bash\n${cmd}\n\`\`\``;
const SUBMIT = `echo ${SUBMIT_LINE} && git add -A && git diff --cached`;
/** Scripted trajectories, chosen by a word of the problem statement in the task prompt. */
const TRAJECTORIES: Record<string, string[]> = {
  // Good: a failing test first, then the fix, then the tests green, then submit.
  seconds: [
    bash('Reproduce the problem.', `python3 -c 'from textkit import parse_duration; print(parse_duration("1m30s"))'`),
    bash('Add a test for it.', `cat >> tests/test_duration.py <<'EOF'\n\n    def test_seconds(self):\n        self.assertEqual(parse_duration("2m5s"), 125)\nEOF`),
    bash('Run the test: it must fail.', 'python3 -m unittest tests.test_duration'),
    bash('Fix the unit table.', `sed -i 's/"m": 60}/"m": 60, "s": 1}/' textkit/duration.py`),
    bash('Run all the tests.', 'python3 -m unittest -v'),
    bash('Submit.', SUBMIT),
  ],
  // Bad: a fix without any test run, and one unusable reply on the way.
  separators: [
    'I think I know the fix.',
    bash('Fix it.', `sed -i 's/\\[^a-z0-9\\]", sep, text)/[^a-z0-9]+", sep, text)/' textkit/slug.py`),
    bash('Submit.', SUBMIT),
  ],
  // Unusable: no bash block three times in a row.
  early: ['hmm', 'let me think', 'still thinking'],
};

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-test-'));
  const repo = path.join(tmp, 'textkit');
  expect(await buildFixtureRepo(repo)).toBe(FIXTURE_BASE_COMMIT);
  sources = { [FIXTURE_REPO]: repo };
  instances = await fixtureInstances();
  grove = await startEmbeddedGrove({ maxSandboxes: 32, browser: false });
  client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 300_000 });
  provider = clientShellProvider(client);
  model = await startOpenAIServer((req) => {
    const prompt = String(req.body.messages[1].content);
    const key = Object.keys(TRAJECTORIES).find((k) => prompt.includes(k)) ?? 'early';
    const turn = req.body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
    return TRAJECTORIES[key][turn] ?? 'no more';
  });
});

afterAll(async () => {
  client?.close();
  await grove?.close();
  await model?.close();
  rmSync(tmp, { recursive: true, force: true });
});

function patchesRun(patches: [string, string | null][], out: string) {
  return runSwe({ instances, sources, provider, mode: { kind: 'patches', patches: new Map(patches) }, concurrency: 3, outDir: path.join(tmp, out) });
}

describe('SWE-bench grading of the fixture instances', () => {
  it('gold patches: FULL, FULL, and NO for the one that breaks a PASS_TO_PASS test', async () => {
    const { results, summary } = await patchesRun(instances.map((i) => [i.instance_id, i.patch!]), 'gold');
    expect(Object.fromEntries(results.map((r) => [r.instance_id, r.evaluation?.resolution]))).toEqual({ 'grove__textkit-1': 'FULL', 'grove__textkit-2': 'FULL', 'grove__textkit-3': 'NO' });
    const three = results.find((r) => r.instance_id === 'grove__textkit-3')!.evaluation!;
    expect(three.report!.FAIL_TO_PASS.failure).toEqual([]);
    expect(three.report!.PASS_TO_PASS.failure).toEqual(['test_empty_text (tests.test_wrap.WrapTests.test_empty_text)']);
    expect(summary).toMatchObject({ resolved_instances: 2, unresolved_instances: 1, error_instances: 0 });
    // SWE-bench's report.json, exactly its keys; Grove's FULL/PARTIAL/NO beside it.
    const report = JSON.parse(readFileSync(path.join(tmp, 'gold', 'report.json'), 'utf8'));
    expect(Object.keys(report['grove__textkit-1'])).toEqual(['patch_is_None', 'patch_exists', 'patch_successfully_applied', 'resolved', 'infra_failure', 'tests_status']);
    expect(report['grove__textkit-1']).toMatchObject({ patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: true });
    expect(Object.keys(report['grove__textkit-3'].tests_status)).toEqual(['FAIL_TO_PASS', 'PASS_TO_PASS', 'FAIL_TO_FAIL', 'PASS_TO_FAIL']);
    expect(JSON.parse(readFileSync(path.join(tmp, 'gold', 'grove-report.json'), 'utf8'))['grove__textkit-1']).toMatchObject({ resolution: 'FULL' });
    const run = JSON.parse(readFileSync(path.join(tmp, 'gold', 'grove.grove.json'), 'utf8'));
    expect(run).toMatchObject({ total_instances: 3, completed_instances: 3, resolved_instances: 2, resolved_ids: ['grove__textkit-1', 'grove__textkit-2'], unresolved_ids: ['grove__textkit-3'], error_ids: [], schema_version: 2 });
    expect(readFileSync(path.join(tmp, 'gold', 'logs', 'run_evaluation', 'grove', 'grove', 'grove__textkit-2', 'test_output.txt'), 'utf8')).toContain('test_seconds_unit');
  });

  it('no patch: not evaluated (empty-patch instances, as SWE-bench); a patch fixing one of two F2P tests: PARTIAL; a patch that does not apply: NO', async () => {
    const none = await patchesRun(instances.map((i) => [i.instance_id, null]), 'none');
    // As SWE-bench: an empty patch is not evaluated; it counts as an empty-patch instance.
    expect(none.results.map((r) => r.evaluation ?? r.error)).toEqual(['empty_patch', 'empty_patch', 'empty_patch']);
    expect(none.summary.empty_patch_instances).toBe(3);
    expect(JSON.parse(readFileSync(path.join(tmp, 'none', 'grove.grove.json'), 'utf8'))).toMatchObject({ empty_patch_instances: 3, completed_instances: 0, error_instances: 0 });
    const one = instances[0];
    const partial = await runSwe({ instances: [one], sources, provider, mode: { kind: 'patches', patches: new Map([[one.instance_id, one.partial_patch!]]) }, concurrency: 1, outDir: path.join(tmp, 'partial') });
    expect(partial.results[0].evaluation).toMatchObject({ resolution: 'PARTIAL', resolved: false });
    expect(partial.results[0].evaluation!.report!.FAIL_TO_PASS.success).toEqual([one.FAIL_TO_PASS[0]]);
    const broken = await runSwe({ instances: [one], sources, provider, mode: { kind: 'patches', patches: new Map([[one.instance_id, 'diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n']]) }, concurrency: 1, outDir: path.join(tmp, 'broken') });
    expect(broken.results[0].evaluation).toMatchObject({ resolution: 'NO', patch_successfully_applied: false, error: 'patch_apply_failed' });
    // As SWE-bench 5's run_instance: a patch that does not apply gets no report.json; the run report counts an error.
    expect(JSON.parse(readFileSync(path.join(tmp, 'broken', 'report.json'), 'utf8'))).toEqual({});
    expect(existsSync(path.join(tmp, 'broken', 'logs', 'run_evaluation', 'grove', 'grove', one.instance_id, 'report.json'))).toBe(false);
    expect(JSON.parse(readFileSync(path.join(tmp, 'broken', 'grove.grove.json'), 'utf8'))).toMatchObject({ completed_instances: 0, error_instances: 1, error_ids: [one.instance_id], infra_failure_ids: [], failure_reasons: {} });
  });
});

describe('agent episodes (bash-only loop through the model server)', () => {
  it('records each command and computes process signals for good, bad and unusable trajectories', async () => {
    const { results } = await runSwe({
      instances,
      sources,
      provider,
      mode: { kind: 'agent', model: 'test-model', policy: () => chatBashPolicy({ baseURL: model.url, model: 'test-model' }), maxSteps: 10, commandTimeoutS: 30 },
      concurrency: 3,
      outDir: path.join(tmp, 'agent'),
    });
    const by = Object.fromEntries(results.map((r) => [r.instance_id, r]));
    // Good (duration, instance 2): resolved, with every signal.
    expect(by['grove__textkit-2'].termination?.reason).toBe('task_completed');
    expect(by['grove__textkit-2'].evaluation?.resolution).toBe('FULL');
    expect(by['grove__textkit-2'].signals).toMatchObject({ reproduced_bug: true, ran_tests_after_fix: true, kept_tests_passing: true, fix_steps: [4], test_edit_steps: [2] });
    // Bad (slug, instance 1): fixes one of two F2P tests without running tests.
    expect(by['grove__textkit-1'].termination?.reason).toBe('task_completed');
    expect(by['grove__textkit-1'].evaluation?.resolution).toBe('PARTIAL');
    expect(by['grove__textkit-1'].signals).toMatchObject({ reproduced_bug: false, ran_tests_after_fix: false, kept_tests_passing: true });
    // Unusable (wrap, instance 3): three replies without a command.
    expect(by['grove__textkit-3'].termination?.reason).toBe('consecutive_parse_failures');
    expect(by['grove__textkit-3'].patch).toBe('');
    // The recording: one step line per reply, commands with exit codes and changed files.
    const steps = readFileSync(path.join(tmp, 'agent', 'episodes', 'grove__textkit-2', 'steps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(steps.map((s) => s.exec?.exit_code)).toEqual([1, 0, 1, 0, 0, 0]);
    expect(steps[3].exec.changed_files).toEqual(['textkit/duration.py']);
    const episode = JSON.parse(readFileSync(path.join(tmp, 'agent', 'episodes', 'grove__textkit-2', 'episode.json'), 'utf8'));
    expect(episode).toMatchObject({ status: 'complete', reward: 1, verdicts: [{ judge: 'swe-bench', outcome: 'success' }] });
    // grove view opens the SWE episode: its steps carry the commands and their results.
    const viewer = await buildViewer({ root: path.join(tmp, 'agent') });
    try {
      const list = (await viewer.inject({ method: 'GET', url: '/api/episodes?limit=10' })).json();
      const id = list.items.find((e: { id: string }) => e.id.includes('grove__textkit-2')).id;
      const view = (await viewer.inject({ method: 'GET', url: `/api/episode?id=${encodeURIComponent(id)}` })).json();
      expect(view.steps.map((s: { exec?: { command: string } }) => s.exec?.command.split(' ')[0])).toEqual(['python3', 'cat', 'python3', 'sed', 'python3', 'echo']);
      expect(view.meta.verdicts[0].details.signals.reproduced_bug).toBe(true);
    } finally {
      await viewer.close();
    }
    const preds = JSON.parse(readFileSync(path.join(tmp, 'agent', 'preds.json'), 'utf8'));
    expect(preds.find((p: { instance_id: string }) => p.instance_id === 'grove__textkit-2').model_patch).toContain('"s": 1');
  });
});

describe("mini-swe-agent's environment contract", () => {
  it('POST /sandboxes/{id}/execute answers merged output and return codes, -1 on timeout', async () => {
    const info = await client.createAndWait({ type: 'shell', block_network: true } as never);
    const call = async (body: unknown) => JSON.parse(await (await client.request('POST', `/sandboxes/${info.sandbox_id}/execute`, body)).text());
    try {
      expect(await call({ command: 'echo out; echo err >&2; exit 3' })).toEqual({ output: 'out\nerr\n', returncode: 3, exception_info: '' });
      await call({ command: 'mkdir -p sub && echo x > sub/f' });
      expect(await call({ command: 'cat f', cwd: 'sub' })).toMatchObject({ output: 'x\n', returncode: 0 });
      const slow = await call({ command: 'echo started; sleep 20', timeout: 1 });
      expect(slow).toMatchObject({ returncode: -1, output: 'started\n' });
      expect(slow.exception_info).toMatch(/timed out after 1 seconds/);
      await expect(client.request('POST', `/sandboxes/${info.sandbox_id}/execute`, { cmd: 'x' })).rejects.toMatchObject({ status: 400 });
    } finally {
      await client.deleteSandbox(info.sandbox_id);
    }
  });
});
