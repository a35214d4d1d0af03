// The recorded-episode layout: <dir>/episode.json, <dir>/steps.jsonl, <dir>/frames/NNNN.<ext>.
// Frame 0000 is the observation after reset; frame N is the observation after step N.
import { z } from 'zod';
import { ActionError, EnvEvent, ResolvedAction, Tab, Timings } from './observation.ts';
import { Task, Termination, Verdict } from './task.ts';

/** A shell step (SWE episodes): the command, its result as the agent saw it, and what it changed. */
const ExecStepRecord = z.object({
  command: z.string(),
  cwd: z.string().optional(),
  exit_code: z.number().int(),
  timed_out: z.boolean(),
  /** stdout and stderr merged, truncated as the agent saw it. */
  output: z.string(),
  duration_ms: z.number(),
  /** Files of the checkout the step created, changed or deleted. */
  changed_files: z.array(z.string()).optional(),
});
type ExecStepRecord = z.infer<typeof ExecStepRecord>;

export const StepRecord = z.object({
  step: z.number().int(),
  ts: z.string(),
  /** Raw model output (text, or JSON of tool calls) and the format it was parsed with. */
  model_output: z.string().optional(),
  format: z.string().optional(),
  thought: z.string().optional(),
  parse_error: z.string().optional(),
  /** Canonical actions with raw and resolved CSS coordinates and per-action errors. */
  actions: z.array(ResolvedAction),
  url: z.string(),
  title: z.string(),
  tabs: z.array(Tab),
  events: z.array(EnvEvent),
  last_action_error: ActionError.nullable(),
  timings: Timings,
  /** Path of the frame relative to the episode directory, e.g. "frames/0003.jpg". */
  frame: z.string().optional(),
  screenshot: z
    .object({ mime: z.string(), width: z.number(), height: z.number(), scale: z.number(), scale_y: z.number().optional() })
    .optional(),
  /** Shell episodes: the command of this step and its result (no screenshot). */
  exec: ExecStepRecord.optional(),
  /** Visual diff against the previous frame. */
  diff: z.object({ changed_share: z.number(), noop: z.boolean() }).optional(),
  /** Tool-calling episodes (Claw): the step's tool calls with what the apps answered and the state they changed. */
  tool_calls: z
    .array(
      z.object({
        id: z.string().optional(),
        name: z.string(),
        arguments: z.unknown(),
        status: z.number().int(),
        result: z.unknown().optional(),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
        changes: z.array(z.record(z.string(), z.unknown())).default([]),
      }),
    )
    .optional(),
  policy: z
    .object({
      latency_ms: z.number().optional(),
      prompt_tokens: z.number().optional(),
      completion_tokens: z.number().optional(),
    })
    .optional(),
});
export type StepRecord = z.infer<typeof StepRecord>;

export const EpisodeMeta = z.object({
  episode_id: z.string(),
  run_id: z.string().optional(),
  task: Task.optional(),
  config: z.record(z.string(), z.unknown()).default({}),
  versions: z.record(z.string(), z.string()).default({}),
  started_at: z.string(),
  finished_at: z.string().optional(),
  /** `running` while being written; `incomplete` when the writer died (detected by readers). */
  status: z.enum(['running', 'complete', 'incomplete']),
  steps: z.number().int().default(0),
  termination: Termination.optional(),
  answer: z.string().optional(),
  reward: z.number().optional(),
  verdicts: z.array(Verdict).default([]),
  /** Frame 0 (after reset). */
  initial_frame: z.string().optional(),
});
export type EpisodeMeta = z.infer<typeof EpisodeMeta>;
