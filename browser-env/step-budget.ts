// How long one step may take at most: the deadline handed down the step (sandbox/deadline.ts) is built from
// this. Every stage of the step takes its slice of it; recovery from a crashed or hung page has slices of its
// own, so a step that needed one still ends within its deadline.
import type { Action } from '../protocol/action.ts';
import type { BrowserCreateOptions } from '../protocol/sandbox.ts';

/** Longest `wait` action (the schema allows no more). */
const WAIT_CAP_MS = 60_000;
/** Upper bound of the observation stages (watchdog tasks, SoM, capture, accessibility, titles). */
export const OBSERVE_MS = 20_000;
/** Slack on a `wait` action for the awaits around its timer. */
const WAIT_SLACK_MS = 1000;

type Timing = Pick<BrowserCreateOptions, 'action_timeout_ms' | 'settle_max_ms' | 'settle'>;

/** One recovery (close the hung page, open a fresh one, reload the last good URL). */
export function recoveryMs(o: Pick<BrowserCreateOptions, 'action_timeout_ms'>): number {
  return 8000 + o.action_timeout_ms;
}

/** Per key of a typed text: typing is key by key (keydown, char, keyup), ~300 ms a key on a machine at load 30. */
const PER_KEY_MS = 250;
/** Texts longer than this go in as one insertText (browser-env/typing.ts PER_KEY_LIMIT): no per-key time. */
const PER_KEY_TEXT = 300;
const TYPING_CAP_MS = 30_000;

/** Time for one action itself (settle not included); a type gets time for its keys on top of the timeout. */
export function actionMs(o: Pick<BrowserCreateOptions, 'action_timeout_ms'>, a: Action): number {
  if (a.action === 'wait') return Math.min(a.ms ?? 1000, WAIT_CAP_MS) + WAIT_SLACK_MS;
  if ((a.action === 'type' || a.action === 'type_label') && a.text.length <= PER_KEY_TEXT) {
    return o.action_timeout_ms + Math.min(a.text.length * PER_KEY_MS, TYPING_CAP_MS);
  }
  return o.action_timeout_ms;
}

/** The step's deadline in ms: every action with its settle, the observation, and two recoveries. */
export function stepBudgetMs(o: Timing, actions: readonly Action[], settle = o.settle): number {
  let ms = OBSERVE_MS + 2 * recoveryMs(o);
  for (const a of actions) ms += actionMs(o, a) + (settle ? o.settle_max_ms : 0);
  return ms;
}

/** An observation without an action: the observation and two recoveries. */
export function observeBudgetMs(o: Pick<BrowserCreateOptions, 'action_timeout_ms'>): number {
  return OBSERVE_MS + 2 * recoveryMs(o);
}
