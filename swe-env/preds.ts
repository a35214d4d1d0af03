// SWE-bench's files: predictions in (`preds.json`: a list, or an object keyed by instance id, or JSONL; each
// `{instance_id, model_name_or_path, model_patch}`), and the evaluation report out (per instance, in the harness's
// report fields, plus Grove's FULL/PARTIAL/NO and per-test results; and a run summary).
import type { Evaluation } from './evaluate.ts';

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
 * An instance's report.json entry exactly as SWE-bench's get_eval_report writes it: the four flags, and
 * tests_status (FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL) once the tests ran to the end. A patch
 * that did not apply and a test run that timed out have no status map there: patch_successfully_applied false.
 */
export function officialReport(e: Evaluation): Record<string, unknown> {
  const ran = e.report !== null && e.patch_exists;
  return {
    [e.instance_id]: {
      patch_is_None: e.patch_is_None,
      patch_exists: e.patch_exists,
      patch_successfully_applied: ran,
      resolved: ran && e.resolved,
      ...(ran && e.report ? { tests_status: { FAIL_TO_PASS: e.report.FAIL_TO_PASS, PASS_TO_PASS: e.report.PASS_TO_PASS, FAIL_TO_FAIL: EMPTY, PASS_TO_FAIL: EMPTY } } : {}),
    },
  };
}

/** The run report (`<model>.<run_id>.json`) with SWE-bench's keys: completed = graded, errors = no report. */
export function officialRunReport(datasetIds: string[], predictions: Map<string, string | null>, reports: Map<string, boolean>): Record<string, unknown> {
  const ids = { completed: [] as string[], incomplete: [] as string[], empty: [] as string[], resolved: [] as string[], unresolved: [] as string[], error: [] as string[] };
  for (const id of datasetIds) {
    if (!predictions.has(id)) ids.incomplete.push(id);
    else if (!predictions.get(id)) ids.empty.push(id);
    else if (!reports.has(id)) ids.error.push(id);
    else (ids.completed.push(id), (reports.get(id) ? ids.resolved : ids.unresolved).push(id));
  }
  const sorted = (a: string[]) => [...a].sort();
  return {
    total_instances: datasetIds.length,
    submitted_instances: [...predictions.keys()].length,
    completed_instances: ids.completed.length,
    resolved_instances: ids.resolved.length,
    unresolved_instances: ids.unresolved.length,
    empty_patch_instances: ids.empty.length,
    error_instances: ids.error.length,
    completed_ids: sorted(ids.completed),
    incomplete_ids: sorted(ids.incomplete),
    empty_patch_ids: sorted(ids.empty),
    submitted_ids: sorted([...predictions.keys()]),
    resolved_ids: sorted(ids.resolved),
    unresolved_ids: sorted(ids.unresolved),
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
    if (!('resolution' in e) || (e.error && e.error !== 'patch_apply_failed' && !e.report)) {
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
