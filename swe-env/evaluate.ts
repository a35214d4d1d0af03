// SWE-bench-style evaluation in shell sandboxes: for each prediction, a fresh sandbox with the repository at the
// instance's base commit, the model patch applied (git apply), the test files reset and the test patch applied,
// the repository's test command run, its log parsed and graded (grading.ts). One report per instance, and a
// summary like SWE-bench's run report.
import type { InstanceReport, SwePrediction, SweInstance } from '../protocol/swe.ts';
import type { ShellSandbox } from '../shell-env/index.ts';
import { grade } from './grading.ts';
import { LOG_PARSERS } from './log-parsers.ts';
import { RepoBundles, TESTBED, checkoutRepo, patchFiles } from './repo.ts';
import { repoSpec, type RepoSpec } from './specs.ts';

/** Where sandboxes come from (the local shell environment, or a remote server through a client adapter). */
export interface SandboxProvider {
  acquire(): Promise<ShellSandbox>;
  release(sb: ShellSandbox): Promise<void>;
}

export interface EvaluateOptions {
  /** repo ("owner/name") → local path or mirror of the repository. */
  repos: Record<string, string>;
  specs?: Record<string, RepoSpec>;
  bundles?: RepoBundles;
}

export interface RunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  partial_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  resolved_ids: string[];
  partial_ids: string[];
  unresolved_ids: string[];
  empty_patch_ids: string[];
  error_ids: string[];
  reports: InstanceReport[];
}

/** Prepares the sandbox: the repository at the base commit, then the model patch (false if it did not apply). */
export async function prepare(sb: ShellSandbox, instance: SweInstance, opts: EvaluateOptions): Promise<void> {
  const repoPath = opts.repos[instance.repo];
  if (!repoPath) throw new Error(`no local path or mirror for repository "${instance.repo}"`);
  const bundle = await (opts.bundles ?? new RepoBundles()).get(repoPath);
  await checkoutRepo(sb, bundle, instance.base_commit, repoSpec(instance.repo, opts.specs));
}

/** Runs the instance's tests in a prepared sandbox (model patch already applied) and grades them. */
export async function runTests(sb: ShellSandbox, instance: SweInstance, opts: EvaluateOptions) {
  const spec = repoSpec(instance.repo, opts.specs);
  if (instance.test_patch) {
    // The model's own edits to the graded test files are discarded, as SWE-bench does.
    const files = patchFiles(instance.test_patch);
    if (files.length) await sb.exec({ command: ['git', 'checkout', instance.base_commit, '--', ...files], cwd: TESTBED, merge_stderr: true, login_shell: false, background: false });
    const applied = await sb.applyPatch(instance.test_patch, { cwd: TESTBED });
    if (!applied.success) throw new Error(`the test patch did not apply: ${applied.stderr.trim()}`);
  }
  const r = await sb.exec({ command: spec.testCmd, cwd: TESTBED, timeout_s: spec.testTimeoutS, merge_stderr: true, login_shell: false, background: false, max_output_bytes: 8 * 1024 * 1024 });
  const results = LOG_PARSERS[spec.parser](r.stdout);
  return { log: r.stdout, timedOut: r.timed_out, results, graded: grade(instance, results) };
}

export async function evaluateInstance(provider: SandboxProvider, instance: SweInstance, pred: SwePrediction, opts: EvaluateOptions): Promise<InstanceReport> {
  const started = performance.now();
  const patch = pred.model_patch ?? '';
  const base: InstanceReport = {
    instance_id: instance.instance_id,
    model_name_or_path: pred.model_name_or_path,
    patch_is_empty: patch.trim() === '',
    patch_applied: false,
    resolution: 'NO',
    resolved: false,
    tests_status: { FAIL_TO_PASS: { success: [], failure: [...instance.FAIL_TO_PASS] }, PASS_TO_PASS: { success: [], failure: [...instance.PASS_TO_PASS] } },
    test_results: {},
    error: null,
    duration_ms: 0,
  };
  const sb = await provider.acquire();
  try {
    await prepare(sb, instance, opts);
    if (!base.patch_is_empty) {
      const applied = await sb.applyPatch(patch.endsWith('\n') ? patch : `${patch}\n`, { cwd: TESTBED });
      if (!applied.success) return { ...base, error: `patch did not apply: ${applied.stderr.trim().slice(0, 2000)}`, duration_ms: performance.now() - started };
    }
    const t = await runTests(sb, instance, opts);
    return {
      ...base,
      patch_applied: !base.patch_is_empty,
      resolution: t.graded.resolution,
      resolved: t.graded.resolution === 'FULL',
      tests_status: { FAIL_TO_PASS: t.graded.FAIL_TO_PASS, PASS_TO_PASS: t.graded.PASS_TO_PASS },
      test_results: Object.fromEntries(t.results),
      error: t.timedOut ? 'the test command timed out' : null,
      duration_ms: performance.now() - started,
    };
  } catch (err) {
    return { ...base, error: err instanceof Error ? err.message : String(err), duration_ms: performance.now() - started };
  } finally {
    await provider.release(sb);
  }
}

/** Every prediction whose instance is known, `concurrency` at a time, in a SWE-bench-like run report. */
export async function evaluatePredictions(
  provider: SandboxProvider,
  instances: SweInstance[],
  preds: SwePrediction[],
  opts: EvaluateOptions & { concurrency?: number },
): Promise<RunReport> {
  const byId = new Map(instances.map((i) => [i.instance_id, i]));
  const todo = preds.filter((p) => byId.has(p.instance_id));
  const reports: InstanceReport[] = new Array(todo.length);
  const shared = { ...opts, bundles: opts.bundles ?? new RepoBundles() };
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const i = next++;
      reports[i] = await evaluateInstance(provider, byId.get(todo[i].instance_id) as SweInstance, todo[i], shared);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, todo.length)) }, worker));
  const ids = (f: (r: InstanceReport) => boolean) => reports.filter(f).map((r) => r.instance_id);
  const resolved = ids((r) => r.resolution === 'FULL');
  const partial = ids((r) => r.resolution === 'PARTIAL');
  const empty = ids((r) => r.patch_is_empty);
  const errors = ids((r) => r.error !== null);
  const unresolved = ids((r) => r.resolution !== 'FULL' && !r.patch_is_empty && r.error === null);
  return {
    total_instances: instances.length,
    submitted_instances: todo.length,
    completed_instances: reports.filter((r) => r.error === null).length,
    resolved_instances: resolved.length,
    partial_instances: partial.length,
    unresolved_instances: unresolved.length,
    empty_patch_instances: empty.length,
    error_instances: errors.length,
    resolved_ids: resolved,
    partial_ids: partial,
    unresolved_ids: unresolved,
    empty_patch_ids: empty,
    error_ids: errors,
    reports,
  };
}

/** preds.json as SWE-bench writes it: a list of predictions, or an object keyed by instance_id. */
export function readPredictions(json: unknown): SwePrediction[] {
  const rows = Array.isArray(json) ? json : json && typeof json === 'object' ? Object.values(json as Record<string, unknown>) : [];
  return rows.map((r) => {
    const o = r as Partial<SwePrediction>;
    if (typeof o?.instance_id !== 'string') throw new Error('preds.json: every prediction needs an instance_id');
    return { instance_id: o.instance_id, model_name_or_path: o.model_name_or_path ?? 'unknown', model_patch: o.model_patch ?? '' };
  });
}
