// SWE environment wire shapes: instances (SWE-bench fields, test lists decoded), predictions (SWE-bench's
// preds.json rows) and the per-instance grading report.
import { z } from 'zod';

export const SweInstance = z.object({
  instance_id: z.string().min(1),
  /** "owner/name": selects the repository's test command and log parser, and its local path or mirror. */
  repo: z.string().min(1),
  base_commit: z.string().min(1),
  problem_statement: z.string(),
  /** The reference solution (not shown to agents). */
  patch: z.string().optional(),
  /** Adds or changes the tests that grade the instance; applied after the model patch. */
  test_patch: z.string().optional(),
  FAIL_TO_PASS: z.array(z.string()),
  PASS_TO_PASS: z.array(z.string()),
  version: z.string().optional(),
});
export type SweInstance = z.infer<typeof SweInstance>;

/** One row of SWE-bench's preds.json (a list of these, or an object keyed by instance_id). */
export const SwePrediction = z.object({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().default('unknown'),
  model_patch: z.string().nullable().default(''),
});
export type SwePrediction = z.infer<typeof SwePrediction>;

/** SWE-bench's resolution: FULL = every F2P passes and every P2P still passes; PARTIAL = some but not all F2P
 * pass and every P2P passes; NO otherwise. */
export const Resolution = z.enum(['FULL', 'PARTIAL', 'NO']);
export type Resolution = z.infer<typeof Resolution>;

export const TestStatus = z.enum(['PASSED', 'FAILED', 'ERROR', 'SKIPPED', 'XFAIL']);
export type TestStatus = z.infer<typeof TestStatus>;

const SuccessFailure = z.object({ success: z.array(z.string()), failure: z.array(z.string()) });

export const InstanceReport = z.object({
  instance_id: z.string(),
  model_name_or_path: z.string(),
  patch_is_empty: z.boolean(),
  patch_applied: z.boolean(),
  resolution: Resolution,
  resolved: z.boolean(),
  tests_status: z.object({ FAIL_TO_PASS: SuccessFailure, PASS_TO_PASS: SuccessFailure }),
  /** Every test the log showed, with its status. */
  test_results: z.record(z.string(), TestStatus),
  /** Why grading could not run normally (patch did not apply, test command timed out, ...). */
  error: z.string().nullable(),
  duration_ms: z.number(),
});
export type InstanceReport = z.infer<typeof InstanceReport>;
// mini-swe-agent's environment contract (its `Environment.execute`): a command, a cwd and a timeout in; the merged
// output, the return code and an exception note out. Served on shell sandboxes so its agents run unchanged.
import { z } from 'zod';

export const MiniSweExecuteRequest = z
  .object({
    command: z.string().min(1).max(1_000_000),
    /** Empty: the sandbox's workspace (mini-swe-agent's default cwd). */
    cwd: z.string().max(4096).default(''),
    /** Seconds; mini-swe-agent's default is 30. */
    timeout: z.number().positive().max(86_400).optional(),
  })
  .strict();

export const MiniSweExecuteResult = z.object({
  /** stdout and stderr merged, as mini-swe-agent's local environment reads them. */
  output: z.string(),
  /** The command's exit code; -1 when it timed out (as mini-swe-agent reports a TimeoutExpired). */
  returncode: z.number().int(),
  /** Empty, or what went wrong ("... timed out after N seconds"). */
  exception_info: z.string(),
});
