// The attempt's side of the env calls (attempt.ts): how an attempt ends early (EpisodeEnd), env calls raced against
// the episode's abort signal, and the observation asked for again after a step's screenshot timed out.
import type { StepResult } from '../protocol/observation.ts';
import type { TerminationReason } from '../protocol/task.ts';
import { clientErrorInfo, describeClientError } from './env-client.ts';
import type { EpisodeOptions } from './types.ts';

/** Raised inside an attempt to end it with a given termination. */
export class EpisodeEnd extends Error {
  constructor(
    readonly reason: TerminationReason,
    readonly detail: string,
    readonly retryable = false,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** Rejects with the abort reason as soon as `signal` aborts; the raced promise keeps running. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return raceAbort(
    new Promise<void>((ok) => {
      const t = setTimeout(ok, ms);
      t.unref();
    }),
    signal,
  );
}

/** Observations tried after a step's capture_timeout before the attempt counts as an environment failure. */
const REOBSERVE_TRIES = 4;

/**
 * A step whose screenshot could not be captured (503 capture_timeout): its actions ran, as the error's details
 * say; the observation after them is asked for again (Retry-After apart, a bounded number of times).
 */
export async function reobserve(env: EpisodeOptions['env'], id: string, first: unknown, opts: { som?: boolean }, signal: AbortSignal): Promise<StepResult> {
  const d = (first as { details?: { actions?: StepResult['actions']; done?: boolean; answer?: string } }).details ?? {};
  let last = first;
  for (let i = 0; i < REOBSERVE_TRIES; i++) {
    const ra = (last as { retryAfter?: unknown }).retryAfter;
    await abortableDelay(typeof ra === 'number' && ra > 0 ? Math.min(ra * 1000, 5000) : 1000, signal);
    try {
      const observation = await raceAbort(env.observation(id, opts), signal);
      return { observation, actions: d.actions ?? [], done: d.done ?? false, ...(d.answer === undefined ? {} : { answer: d.answer }) };
    } catch (err) {
      if (clientErrorInfo(err).code !== 'capture_timeout') throw new EpisodeEnd('env_error', `observing after a capture timeout failed: ${describeClientError(err)}`, true);
      last = err;
    }
  }
  throw new EpisodeEnd('env_error', `no screenshot after ${REOBSERVE_TRIES + 1} tries: ${describeClientError(last)}`, true);
}
