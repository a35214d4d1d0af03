// Wire schemas of task-backed sandboxes (gymnasium-style episodes): which task a sandbox runs, how its episode
// ends (terminated / truncated, as runner/episode.ts defines them) and the evaluate answer.
import { z } from 'zod';
import { Task, Termination, Verdict } from './task.ts';

/** A task by reference: an offline site task (`{suite: "offline", id: "Recipes--0"}`) or one of a task file the
 * server loaded (`--task-file suite=path`). */
const TaskRef = z.object({ suite: z.string().min(1).max(100), id: z.string().min(1).max(500) }).strict();
type TaskRef = z.infer<typeof TaskRef>;

/** A task given in full (the normalised Task); `extra.ground_truth` makes the offline rule judge apply. */
export const InlineTask = Task.extend({ site: z.string().default(''), start_url: z.string().max(8192).optional() });

export const TaskSpec = z.union([TaskRef, InlineTask]);
export type TaskSpec = z.infer<typeof TaskSpec>;

/** Reward rules: `grove` = the judge's score (null on a judge error); `orchard-gui` = Orchard-GUI's RL recipe:
 * −1 after consecutive parse failures, 0 at max steps, the sample dropped on environment or judge errors, and a
 * judged success counted only when the last turn's format reward is 1. */
export const RewardRules = z.enum(['grove', 'orchard-gui']);
export type RewardRules = z.infer<typeof RewardRules>;

export const EpisodeConfig = z
  .object({
    max_steps: z.number().int().min(1).max(10_000).optional().describe('steps after which `truncated` is true'),
    max_consecutive_parse_failures: z.number().int().min(1).max(1000).default(3).describe('parse failures in a row that terminate the episode'),
    reward_rules: RewardRules.default('grove'),
    format_reward: z
      .enum(['last_turn', 'every_turn'])
      .default('last_turn')
      .describe(
        'orchard-gui rules: which turns\' format rewards gate a judged success — the last turn\'s (Orchard-GUI\'s turn-level samples) or every model-text turn\'s (its whole-trajectory samples)',
      ),
    format_failure_penalty: z.number().min(-100).max(0).default(-1).describe('orchard-gui rules: the reward of an episode ended by consecutive parse failures'),
  })
  .strict();
export type EpisodeConfig = z.infer<typeof EpisodeConfig>;

export const EvaluateRequest = z
  .object({ answer: z.string().max(100_000).optional().describe("the agent's final answer, when the episode did not end with an answer action") })
  .strict();
export type EvaluateRequest = z.infer<typeof EvaluateRequest>;

export const EvaluateResult = z.object({
  task_id: z.string(),
  /** null when no reward can be given: the judge failed (`judge_error`) or the sample is dropped. */
  reward: z.number().nullable(),
  judge_error: z.string().nullable(),
  /** Orchard-GUI rules: the sample must not be trained on (environment or judge error). */
  dropped: z.boolean(),
  /** The judge's record; null when the rules decided without a judge. */
  verdict: Verdict.nullable(),
  termination: Termination.nullable(),
  steps: z.number().int(),
  answer: z.string().nullable(),
  reward_rules: RewardRules,
  /**
   * Orchard-GUI rules: the per-turn format reward of each step given as model text (1 when it closes `</think>` and
   * holds a parsed `<tool_call>`, else 0); the reward is 1 only when the last of them is 1 and the judge says success.
   * null under `grove` rules.
   */
  format_rewards: z.array(z.number()).nullable(),
});
export type EvaluateResult = z.infer<typeof EvaluateResult>;

/** GET /tasks query: the suite whose tasks to list. */
export const TaskListQuery = z.object({
  suite: z.string().min(1).max(100).describe('`offline`, or a suite whose task file the server loaded (`--task-files suite=path`)'),
});
export type TaskListQuery = z.infer<typeof TaskListQuery>;

/** One task of a suite as a client picks it: what the agent is told, never the reference answers or the judge's
 * ground truth. Start one with `task: {suite, id}`. */
export const TaskSummary = z.object({
  id: z.string(),
  suite: z.string(),
  site: z.string(),
  question: z.string(),
  level: z.string().optional(),
  /** Absent for offline tasks: their start page is made per sandbox (a fresh site session). */
  start_url: z.string().optional(),
});
export type TaskSummary = z.infer<typeof TaskSummary>;

export const TaskList = z.object({
  suite: z.string(),
  tasks: z.array(TaskSummary),
  /** The suites a `{suite, id}` task reference may name on this server. */
  suites: z.array(z.string()),
});
export type TaskList = z.infer<typeof TaskList>;
