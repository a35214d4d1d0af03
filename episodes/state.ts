// One episode's state, advanced by each step answer. `terminated` and `truncated` follow runner/episode.ts:
// an answer/terminate action or N parse failures in a row terminate; reaching max_steps without that truncates.
// Every step request counts as one step (a parse failure too), as every policy decision does in the loop.
import type { EpisodeConfig } from '../protocol/episode.ts';
import type { StepResult } from '../protocol/observation.ts';
import { agentTermination, type Termination } from '../protocol/task.ts';
import type { ResolvedTask } from './catalog.ts';
import { orchardTurnFormat } from './format-reward.ts';

/** Screenshots an LLM judge may look at (WebVoyager's k is 15; WebJudge scores all, we keep the last 30). */
const KEEP_SCREENSHOTS = 30;

export interface StepSource {
  model_output?: string;
}

export class EpisodeState {
  steps = 0;
  parseFailures = 0;
  consecutiveParseFailures = 0;
  answer: string | undefined;
  termination: Termination | null = null;
  truncated = false;
  readonly actions: string[] = [];
  readonly thoughts: string[] = [];
  readonly screenshots: { mime: string; base64: string }[] = [];
  /** Orchard-GUI rules: the format reward of each step given as model text, in order (format-reward.ts). */
  readonly formatRewards: number[] = [];
  /** Set when the environment failed under the episode (a 5xx step, a sandbox that failed to start). */
  envError: string | undefined;

  constructor(
    readonly config: EpisodeConfig,
    readonly resolved?: ResolvedTask,
  ) {}

  get terminated(): boolean {
    return this.termination !== null && this.termination.reason !== 'max_steps_exhausted';
  }

  /** Advances the episode by one step answer; returns the flags for that answer. */
  record(result: StepResult, source: StepSource): { terminated: boolean; truncated: boolean } {
    const ended = this.termination !== null;
    this.steps++;
    if (this.config.reward_rules === 'orchard-gui' && source.model_output !== undefined) this.formatRewards.push(orchardTurnFormat(source.model_output));
    if (result.parse && !result.parse.ok) {
      this.parseFailures++;
      this.consecutiveParseFailures++;
      this.actions.push(`(unparseable output: ${result.parse.error ?? 'parse error'})`);
    } else {
      this.consecutiveParseFailures = 0;
      const acts = result.actions.map((a) => JSON.stringify(a.action));
      this.actions.push(source.model_output !== undefined && acts.length === 0 ? source.model_output : acts.join('; '));
    }
    if (this.resolved && result.observation.screenshot?.base64) {
      this.screenshots.push({ mime: result.observation.screenshot.mime, base64: result.observation.screenshot.base64 });
      if (this.screenshots.length > KEEP_SCREENSHOTS) this.screenshots.shift();
    }
    if (!ended) {
      if (result.done) {
        this.answer = result.answer;
        // terminate(failure) is the agent giving up, not a completion.
        const t = agentTermination(result.actions.map((a) => a.action));
        this.termination = t.reason === 'task_completed' ? { reason: 'task_completed' } : t;
      } else if (this.consecutiveParseFailures >= this.config.max_consecutive_parse_failures) {
        this.termination = { reason: 'consecutive_parse_failures', detail: `${this.consecutiveParseFailures} unparseable outputs in a row` };
      } else if (this.config.max_steps !== undefined && this.steps >= this.config.max_steps) {
        this.termination = { reason: 'max_steps_exhausted', detail: `${this.steps} steps` };
        this.truncated = true;
      }
    }
    return { terminated: this.terminated, truncated: this.truncated };
  }

  /** The first screenshot (after reset), kept so judges see where the episode began. */
  recordInitial(shot: { mime: string; base64: string } | undefined): void {
    if (this.resolved && shot) this.screenshots.push(shot);
  }

  failEnv(detail: string): void {
    this.envError ??= detail;
    if (this.termination === null) this.termination = { reason: 'env_error', detail };
  }
}
