// The policy contract of the episode loop (runner/) that vlm-client's VLM policy and the offline scripted
// policies implement; here, below both, so vlm-client never imports runner. A VLM policy returns raw model text (parsed by a format);
// a scripted policy may return canonical actions directly but still provides `output` text for recording.
import type { Action } from './action.ts';
import type { Observation, ResolvedAction } from './observation.ts';
import type { Task } from './task.ts';

export interface PolicyDecision {
  /** What the model said (raw text or JSON of tool calls). Recorded verbatim. */
  output: string;
  /** Policy output format name (vlm-client/formats) used to parse `output` when `actions` is absent. */
  format?: string;
  /** Already-canonical actions (scripted policies). */
  actions?: Action[];
  thought?: string;
  latency_ms?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
}

export interface PolicyStepContext {
  task: Task;
  step: number;
  /** Last error from parsing the previous output, if any (lets a policy retry). */
  lastParseError?: string;
  /** The actions the previous step executed, with their results (formats that report each call's outcome). */
  lastActions?: ResolvedAction[];
}

export interface Policy {
  readonly name: string;
  /** Called once at reset with the task. */
  start(task: Task): Promise<void> | void;
  /** Decide the next action(s) from the latest observation. Throws on generation failure (→ generation_error). */
  next(obs: Observation, ctx: PolicyStepContext): Promise<PolicyDecision>;
}
