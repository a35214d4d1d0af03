// The capture contract of the step and observation endpoints: an answer carries its screenshot, or it is an error
// the client raises — never an observation without one and the reason only inside it. A capture that failed
// within its deadline (browser-env retries it while the deadline leaves time) becomes 503 capture_timeout with
// Retry-After. A step's actions did run: `error.details` says what they did, and the client observes again
// (GET /sandboxes/{id}/observation) instead of sending the step again.
import { GroveError } from '../protocol/errors.ts';
import type { Observation, StepResult } from '../protocol/observation.ts';

/** Seconds a client waits before observing again. */
export const CAPTURE_RETRY_AFTER_S = 2;

/** The capture_timeout error for an answer that wanted a screenshot and has none, else null. */
export function missingCapture(wanted: boolean, observation: Observation, step?: Pick<StepResult, 'actions' | 'done' | 'answer'>): GroveError | null {
  if (!wanted || observation.screenshot) return null;
  // last_action_error names the capture only when the capture is what failed; a step whose action failed first keeps
  // the action's error there (a failed goto), which is not why the screenshot is missing.
  const err = observation.last_action_error;
  const why = err?.code === 'capture_timeout' ? err.message : 'no screenshot was captured';
  const details = step
    ? { executed: true, actions: step.actions, done: step.done, ...(step.answer === undefined ? {} : { answer: step.answer }), step: observation.step, url: observation.url }
    : { executed: false, step: observation.step, url: observation.url };
  const next = step ? 'its actions ran (error.details.actions): observe again with GET /sandboxes/{id}/observation, do not resend the step' : 'observe again';
  return new GroveError('capture_timeout', `The screenshot could not be captured within the deadline (${why}); ${next} after ${CAPTURE_RETRY_AFTER_S} s.`, {
    retryAfter: CAPTURE_RETRY_AFTER_S,
    clientDetails: details,
  });
}
