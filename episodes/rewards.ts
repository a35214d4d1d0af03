// Reward rules applied at evaluate time. `grove`: the judge's score, null with judge_error when the judge
// fails. `orchard-gui`: Orchard-GUI's RL recipe (MSR-Orchard/slime examples/orchard_gui/reward_browser.py, read
// for its rules): an episode ended by consecutive parse failures scores −1 without a judge; one that did not
// complete (max steps) scores 0 without a judge; an environment or judge failure drops the sample (reward null,
// dropped: the trainer must not learn from it). A judged episode scores 1 only when the judge says success and its
// last turn's format reward (format-reward.ts) is 1, else 0 — as reward_browser.py combines them for turn-level
// samples; an episode whose steps were given as actions, not model text, has no format score and is not gated.
import type { EvaluateResult, RewardRules } from '../protocol/episode.ts';
import type { Termination, Verdict } from '../protocol/task.ts';

export interface RewardContext {
  rules: RewardRules;
  /** Orchard-GUI's `format_failure_penalty` (−1 by default). */
  parseFailurePenalty?: number;
  termination: Termination | null;
  envError?: string;
  /** True when the episode ended with an answer (or the caller gave one). */
  completed: boolean;
}

/**
 * The format score that gates an Orchard-GUI reward, as reward_browser.py's `compute_format_reward` takes it: with
 * turn-level samples the last turn's; with whole-trajectory samples 1 only when every model-text turn scored 1.
 * Undefined when no step gave model text.
 */
export function formatGate(formatRewards: number[], mode: 'last_turn' | 'every_turn' = 'last_turn'): number | undefined {
  if (!formatRewards.length) return undefined;
  if (mode === 'every_turn') return formatRewards.every((f) => f === 1) ? 1 : 0;
  return formatRewards.at(-1);
}

/** What the rules decide before any judge runs: a final result, or `judge` (run the judge, then `fromVerdict`). */
export function decideWithoutJudge(c: RewardContext): Pick<EvaluateResult, 'reward' | 'dropped' | 'judge_error'> | 'judge' {
  if (c.rules === 'grove') return 'judge';
  if (c.envError !== undefined) return { reward: null, dropped: true, judge_error: null };
  if (c.termination?.reason === 'consecutive_parse_failures') return { reward: c.parseFailurePenalty ?? -1, dropped: false, judge_error: null };
  if (!c.completed) return { reward: 0, dropped: false, judge_error: null };
  return 'judge';
}

export function fromVerdict(rules: RewardRules, v: Verdict, format?: number): Pick<EvaluateResult, 'reward' | 'dropped' | 'judge_error'> {
  if (v.outcome === 'judge_error') return { reward: null, dropped: rules === 'orchard-gui', judge_error: v.reasoning ?? 'the judge failed' };
  if (rules === 'orchard-gui') return { reward: v.outcome === 'success' && format !== 0 ? 1 : 0, dropped: false, judge_error: null };
  return { reward: v.score ?? (v.outcome === 'success' ? 1 : 0), dropped: false, judge_error: null };
}
