// SWE-bench's files: predictions in (`preds.json`: a list, or an object keyed by instance id, or JSONL; each
// `{instance_id, model_name_or_path, model_patch}`), and the evaluation report out (per instance, in the harness's
// report fields, plus Grove's FULL/PARTIAL/NO and per-test results; and a run summary).
import type { Evaluation } from './evaluate.ts';
import { classifyFailure } from './infra-failure.ts';

export type { SwePrediction as Prediction } from '../protocol/swe.ts';
import type { SwePrediction as Prediction } from '../protocol/swe.ts';

export function parsePredictions(text: string): Prediction[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  let rows: unknown[];
  if (trimmed.startsWith('[')) rows = JSON.parse(trimmed) as unknown[];
  else if (trimmed.startsWith('{') && !trimmed.includes('\n{')) {
    const obj = JSON.parse(trimmed) as Record<string, unknown>;
    rows = 'instance_id' in obj ? [obj] : Object.entries(obj).map(([id, v]) => ({ instance_id: id, ...(v as object) }));
  } else rows = trimmed.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown);
  return rows.map((r, i) => {
    const o = r as Record<string, unknown>;
    if (typeof o?.instance_id !== 'string') throw new Error(`prediction ${i + 1}: instance_id missing`);
    const patch = o.model_patch;
    if (patch !== null && patch !== undefined && typeof patch !== 'string') throw new Error(`prediction ${o.instance_id}: model_patch must be a string or null`);
    return { instance_id: o.instance_id, model_name_or_path: typeof o.model_name_or_path === 'string' ? o.model_name_or_path : undefined, model_patch: (patch as string | null | undefined) ?? null };
  });
}

export interface RunSummary {
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
}

const EMPTY = { success: [] as string[], failure: [] as string[] };

/**
 * Evaluations SWE-bench's run_instance ends before grading (an EvaluationError): a patch that does not apply, tests
 * past their time, an image without their layout. They get no report.json and count as errors in the run report.
 */
const NO_REPORT = new Set(['patch_apply_failed', 'tests_timed_out', 'not_swebench_layout']);

/**
 * An instance's report.json exactly as SWE-bench 5's get_eval_report writes it: the four flags and `infra_failure`;
 * `tests_status` (FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL) when the log describes a test run; when it
 * does not, patch_successfully_applied false and the log's failure class (infra-failure.ts), if any. null: no
 * report.json (NO_REPORT).
 */
export function officialReport(e: Evaluation): Record<string, unknown> | null {
  if (e.error && NO_REPORT.has(e.error)) return null;
  const ran = e.report !== null && e.patch_exists;
  const entry: Record<string, unknown> = { patch_is_None: e.patch_is_None, patch_exists: e.patch_exists, patch_successfully_applied: ran, resolved: ran && e.resolved, infra_failure: false };
  if (ran && e.report) entry.tests_status = { FAIL_TO_PASS: e.report.FAIL_TO_PASS, PASS_TO_PASS: e.report.PASS_TO_PASS, FAIL_TO_FAIL: EMPTY, PASS_TO_FAIL: EMPTY };
  else if (e.patch_exists) {
    const c = classifyFailure(e.test_log);
    if (c) Object.assign(entry, { infra_failure: c.tier === 'environment', infra_failure_reason: c.reason });
  }
  return { [e.instance_id]: entry };
}

/** What the run report reads of each instance run: its report's `resolved` (none: no report.json) and its logs. */
export interface RunOutcome {
  resolved?: boolean;
  /** The logs SWE-bench's classifier reads (test_output.txt, run_instance.log): Grove's test output and error. */
  logs: string[];
}

/**
 * The run report (`<model>.<run_id>.json`) with SWE-bench 5's keys: completed = has a report.json, errors = none;
 * unresolved and error instances are classified by their logs (advisory: infra_failure_ids for environment faults,
 * ambiguous_failure_ids for the rest, failure_reasons for both; the counts above do not change).
 */
export function officialRunReport(datasetIds: string[], predictions: Map<string, string | null>, runs: Map<string, RunOutcome>): Record<string, unknown> {
  const ids = { completed: [] as string[], incomplete: [] as string[], empty: [] as string[], resolved: [] as string[], unresolved: [] as string[], error: [] as string[], infra: [] as string[], ambiguous: [] as string[] };
  for (const id of datasetIds) {
    const resolved = runs.get(id)?.resolved;
    if (!predictions.has(id)) ids.incomplete.push(id);
    else if (!predictions.get(id)) ids.empty.push(id);
    else if (resolved === undefined) ids.error.push(id);
    else (ids.completed.push(id), (resolved ? ids.resolved : ids.unresolved).push(id));
  }
  const reasons: Record<string, string> = {};
  for (const id of [...ids.unresolved, ...ids.error]) {
    const c = classifyFailure(...(runs.get(id)?.logs ?? []));
    if (!c) continue;
    reasons[id] = c.reason;
    (c.tier === 'environment' ? ids.infra : ids.ambiguous).push(id);
  }
  const sorted = (a: string[]) => [...a].sort();
  return {
    total_instances: datasetIds.length,
    submitted_instances: [...predictions.keys()].length,
    completed_instances: ids.completed.length,
    resolved_instances: ids.resolved.length,
    unresolved_instances: ids.unresolved.length,
    infra_failure_instances: ids.infra.length,
    ambiguous_failure_instances: ids.ambiguous.length,
    empty_patch_instances: ids.empty.length,
    error_instances: ids.error.length,
    completed_ids: sorted(ids.completed),
    incomplete_ids: sorted(ids.incomplete),
    empty_patch_ids: sorted(ids.empty),
    submitted_ids: sorted([...predictions.keys()]),
    resolved_ids: sorted(ids.resolved),
    unresolved_ids: sorted(ids.unresolved),
    infra_failure_ids: sorted(ids.infra),
    ambiguous_failure_ids: sorted(ids.ambiguous),
    failure_reasons: Object.fromEntries(Object.entries(reasons).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    error_ids: sorted(ids.error),
    schema_version: 2,
  };
}

/** Grove's per-instance details (resolution FULL/PARTIAL/NO, per-test statuses, the error), beside the official report. */
export function instanceReport(e: Evaluation): Record<string, unknown> {
  return {
    [e.instance_id]: {
      patch_is_None: e.patch_is_None,
      patch_exists: e.patch_exists,
      patch_successfully_applied: e.patch_successfully_applied,
      resolved: e.resolved,
      resolution: e.resolution,
      tests_status: e.report ? { FAIL_TO_PASS: e.report.FAIL_TO_PASS, PASS_TO_PASS: e.report.PASS_TO_PASS } : null,
      tests: e.report?.tests ?? {},
      ...(e.error ? { error: e.error } : {}),
    },
  };
}

/** Evaluations without a status map that still grade NO (not errors): the patch did not apply, the log shows no run. */
const GRADED_NO = new Set(['patch_apply_failed', 'no_test_results', 'no_test_output']);

export function summarize(total: number, evals: (Evaluation | { instance_id: string; error: string })[]): RunSummary {
  const s: RunSummary = {
    total_instances: total, submitted_instances: evals.length, completed_instances: 0, resolved_instances: 0, partial_instances: 0,
    unresolved_instances: 0, empty_patch_instances: 0, error_instances: 0, resolved_ids: [], partial_ids: [], unresolved_ids: [], empty_patch_ids: [], error_ids: [],
  };
  for (const e of evals) {
    if (!('resolution' in e) && e.error === 'empty_patch') {
      s.empty_patch_instances++;
      s.empty_patch_ids.push(e.instance_id);
      continue;
    }
    if (!('resolution' in e) || (e.error && !GRADED_NO.has(e.error) && !e.report)) {
      s.error_instances++;
      s.error_ids.push(e.instance_id);
      continue;
    }
    if (!e.patch_exists) {
      s.empty_patch_instances++;
      s.empty_patch_ids.push(e.instance_id);
      continue;
    }
    s.completed_instances++;
    if (e.resolution === 'FULL') (s.resolved_instances++, s.resolved_ids.push(e.instance_id));
    else if (e.resolution === 'PARTIAL') (s.partial_instances++, s.partial_ids.push(e.instance_id));
    else (s.unresolved_instances++, s.unresolved_ids.push(e.instance_id));
  }
  return s;
}
