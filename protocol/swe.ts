// SWE environment wire shapes: instances (SWE-bench fields, test lists decoded), predictions (SWE-bench's
// preds.json rows), and mini-swe-agent's environment contract served on shell sandboxes.
import { z } from 'zod';
import { processString } from './shell.ts';

export const SweInstance = z.object({
  instance_id: z.string().min(1),
  /** "owner/name": selects the repository's test command and log parser, and its local path or mirror. */
  repo: z.string().min(1),
  base_commit: z.string().min(1),
  problem_statement: z.string(),
  /** The reference solution (not shown to agents). */
  patch: z.string().optional(),
  /** Adds or changes the tests that grade the instance; applied after the model patch, as SWE-bench does. */
  test_patch: z.string().optional(),
  FAIL_TO_PASS: z.array(z.string()),
  PASS_TO_PASS: z.array(z.string()),
  version: z.union([z.string(), z.number()]).optional(),
  environment_setup_commit: z.string().optional(),
  /** SWE-bench 5's datasets name each instance's image and carry its eval script; earlier ones leave both to the
   * harness (swe-env/official-image.ts derives them as it did). */
  image: z.string().optional(),
  eval_script: z.string().optional(),
});
export type SweInstance = z.infer<typeof SweInstance>;

/** One row of SWE-bench's preds.json (a list of these, or an object keyed by instance_id, or JSONL). */
export const SwePrediction = z.object({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().optional(),
  model_patch: z.string().nullable().default(null),
});
export type SwePrediction = z.infer<typeof SwePrediction>;

/** mini-swe-agent's `Environment.execute`: a command, a cwd and a timeout in. */
export const MiniSweExecuteRequest = z
  .object({
    command: processString(1_000_000).min(1),
    /** Empty: the sandbox's workspace (mini-swe-agent's default cwd). */
    cwd: processString(4096).default(''),
    /** Seconds; mini-swe-agent's default is 30. */
    timeout: z.number().positive().max(86_400).optional(),
  })
  .strict();

/** … the merged output, the return code and an exception note out. */
export const MiniSweExecuteResult = z.object({
  /** stdout and stderr merged, as mini-swe-agent's local environment reads them. */
  output: z.string(),
  /** The command's exit code; -1 when it timed out (as mini-swe-agent reports a TimeoutExpired). */
  returncode: z.number().int(),
  /** Empty, or what went wrong ("... timed out after N seconds"). */
  exception_info: z.string(),
});
