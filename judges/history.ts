// What a judge sees of an episode's steps — one definition for judging during a run (runner/benchmark.ts) and
// afterwards from a recording (judges/episodes.ts), so the same episode gives the same requests either way:
// - one text form per step: a foreign harness's own action text when recorded, else Grove's readable description
//   of the canonical actions (recording/action-text.ts describeAction, page coordinates when resolved);
// - the final answer step is left out of the action history: Online-Mind2Web's run.py drops it and its README asks
//   for "only factual actions, not agent outputs" (the answer is the judge's separate input);
// - no frame after that final answer step: answering does not change the page, and a duplicate of the last real
//   screen would push an earlier one out of a last-k window (WebVoyager's screenshots end with the one the ANSWER
//   was decided on).
import type { Action } from '../protocol/action.ts';
import { describeAction } from '../recording/action-text.ts';

export interface HistoryStep<F> {
  actions: { action: Action; css?: { x: number; y: number } | null }[];
  /** The action as a foreign harness wrote it (wins over the canonical actions). */
  action_text?: string;
  parse_error?: string;
  /** The frame after this step. */
  frame?: F;
}

/** A step whose actions only end the episode (answer / terminate): no page action. */
function isAnswerOnly(actions: { action: Action }[]): boolean {
  return actions.length > 0 && actions.every((a) => a.action.action === 'answer' || a.action.action === 'terminate');
}

export function stepText(s: HistoryStep<unknown>): string {
  if (s.action_text) return s.action_text;
  if (s.actions.length) return s.actions.map((a) => describeAction(a.action, a.css ?? undefined)).join('; ');
  return s.parse_error ? `(unparsed: ${s.parse_error})` : '(no action)';
}

/** Frames (initial, then after each step) and action texts as judges get them. */
export function judgedHistory<F>(initial: F | undefined, steps: HistoryStep<F>[], same: (a: F, b: F) => boolean = (a, b) => a === b): { frames: F[]; actions: string[] } {
  const last = steps.at(-1);
  const judged = last && isAnswerOnly(last.actions) ? steps.slice(0, -1) : steps;
  const frames: F[] = [];
  const push = (f?: F) => {
    if (f !== undefined && !(frames.length && same(frames[frames.length - 1], f))) frames.push(f);
  };
  push(initial);
  for (const s of judged) push(s.frame);
  return { frames, actions: judged.map(stepText) };
}
