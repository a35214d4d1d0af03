// One normalised Task type for every suite, and the episode termination reasons.
import { z } from 'zod';
import type { Action } from './action.ts';

export const Suite = z.enum(['webvoyager', 'online-mind2web', 'deepshop', 'swe-bench', 'claw', 'offline', 'orchard-gui']);
export type Suite = z.infer<typeof Suite>;

export const Task = z.object({
  /** Unique within the suite, e.g. "Allrecipes--0", an Online-Mind2Web task_id, "shop--3". */
  id: z.string().min(1),
  suite: Suite,
  /** Site / website name (web_name, website host, repo for SWE-bench). */
  site: z.string(),
  /** The instruction given to the agent. */
  question: z.string(),
  /** Start URL (browser suites). */
  start_url: z.string().optional(),
  /** Difficulty: easy|medium|hard (Online-Mind2Web level, DeepShop difficulty), GAIA Level as a string. */
  level: z.string().optional(),
  /** Reference answer(s) where the suite has them (WebVoyager reference_answer.json). */
  reference: z.object({ type: z.string(), answer: z.string() }).array().optional(),
  /** Suite-specific fields kept verbatim (DeepShop attribute/filter/sort, SWE-bench fields, ...). */
  extra: z.record(z.string(), z.unknown()).default({}),
  /** Problems found while loading that did not make the row unusable (e.g. scrambled text). */
  flags: z.array(z.string()).default([]),
});
export type Task = z.infer<typeof Task>;

export const TERMINATION_REASONS = [
  'task_completed',
  // The agent ended the episode declaring failure (`terminate` with status "failure"): not a completion.
  'agent_gave_up',
  'max_steps_exhausted',
  'consecutive_parse_failures',
  'env_error',
  'website_error',
  'generation_error',
  'timeout',
  'aborted',
] as const;
export const TerminationReason = z.enum(TERMINATION_REASONS);
export type TerminationReason = z.infer<typeof TerminationReason>;

export const Termination = z.object({ reason: TerminationReason, detail: z.string().optional() });
export type Termination = z.infer<typeof Termination>;

/**
 * How an episode the agent ended with a terminal action (answer / terminate) ends: `terminate` with status
 * "failure" is the agent giving up (agent_gave_up), anything else completes the task (task_completed).
 */
export function agentTermination(actions: readonly Action[], step?: number): Termination {
  const term = actions.find((a) => a.action === 'terminate');
  if (!term || term.action !== 'terminate') return { reason: 'task_completed', detail: step === undefined ? 'a terminal action was executed' : `answer at step ${step}` };
  const detail = `terminate${term.status ? ` (${term.status})` : ''}${term.reason ? `: ${term.reason}` : ''}`;
  return { reason: term.status === 'failure' ? 'agent_gave_up' : 'task_completed', detail };
}

/**
 * A judge verdict. `judge_error` (the judge could not be asked: transport/API failure, unreadable input) is never a
 * task failure: it is reported apart. `unparsed`: the judge replied without a verdict and the judge's original
 * harness leaves such an episode out of its rate (WebVoyager's auto_eval returns None); judges whose original counts
 * such a reply as a failure (WebJudge, DeepShop) return `failure` with `details.unparsed: true`.
 */
export const Verdict = z.object({
  judge: z.string(),
  outcome: z.enum(['success', 'failure', 'unparsed', 'judge_error']),
  score: z.number().min(0).max(1).optional(),
  reasoning: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Verdict = z.infer<typeof Verdict>;
