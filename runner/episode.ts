// The episode loop: reset (sandbox + start URL) → policy → parse → env step → … until the policy ends the
// episode or a limit is hit. Environment and website failures restart the episode on a fresh sandbox (per the
// retry policy) and never count as the model failing. The sandbox is always deleted. One attempt is attempt.ts.
import type { Task, Verdict } from '../protocol/task.ts';
import { silentLogger } from '../sandbox/log.ts';
import { Attempt } from './attempt.ts';
import { abortableDelay, EpisodeEnd } from './attempt-env.ts';
import type { AttemptFailure, EpisodeOptions, EpisodeOutcome, EpisodeResult, RetryPolicy } from './types.ts';

// The loop's interfaces live in types.ts (attempt.ts needs them too, and no longer imports this file).
export type { EpisodeOptions, EpisodeOutcome, LocalParser, RetryPolicy, TrajectoryStep } from './types.ts';

const DEFAULT_RETRY: RetryPolicy = { maxRestarts: 2, startUrlAttempts: 2, backoffMs: 500 };

let seq = 0;
const newEpisodeId = (task: Task) => `${task.id}-${Date.now().toString(36)}-${(seq++).toString(36)}`;

export async function runEpisode(opts: EpisodeOptions): Promise<EpisodeOutcome> {
  const log = opts.logger ?? silentLogger;
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...opts.retry };
  const maxParse = opts.maxConsecutiveParseFailures ?? 3;
  const episodeId = opts.episodeId ?? newEpisodeId(opts.task);
  const startedAt = new Date();
  const t0 = performance.now();

  // One controller for both limits: the episode timeout and the caller's abort signal.
  const ctl = new AbortController();
  const timer =
    opts.timeoutMs !== undefined
      ? setTimeout(() => ctl.abort(new EpisodeEnd('timeout', `episode exceeded ${opts.timeoutMs} ms`)), opts.timeoutMs)
      : undefined;
  const onOuterAbort = () => ctl.abort(new EpisodeEnd('aborted', String(opts.signal?.reason ?? 'aborted by the caller')));
  if (opts.signal?.aborted) onOuterAbort();
  else opts.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const failures: AttemptFailure[] = [];
  let attempt = 0;
  try {
    for (;;) {
      attempt++;
      const a = await new Attempt({ opts, attempt, episodeId, signal: ctl.signal, maxParse, retry, log }).run();
      const writeErr = await a.flush();
      if (writeErr) {
        log.error({ task: opts.task.id, err: writeErr }, 'recording the episode failed');
        a.result.termination = { reason: 'env_error', detail: `recording failed: ${writeErr}` };
        a.retryable = false;
      }
      const r = a.result.termination;
      const retryable = a.retryable && attempt <= retry.maxRestarts && !ctl.signal.aborted;
      if (retryable) {
        failures.push({ attempt, reason: r.reason, detail: r.detail });
        log.warn({ task: opts.task.id, attempt, reason: r.reason, detail: r.detail }, 'episode attempt failed; restarting');
        await a.recording?.onEnd({ termination: r, answer: a.result.answer }).catch(() => undefined);
        try {
          await abortableDelay(retry.backoffMs * 2 ** (attempt - 1), ctl.signal);
        } catch {
          // The timeout/abort hit during backoff: the next attempt sees the aborted signal and ends at once.
        }
        continue;
      }
      const result: EpisodeResult = {
        ...a.result,
        episode_id: episodeId,
        attempts: attempt,
        attempt_failures: failures,
        started_at: startedAt.toISOString(),
        duration_ms: performance.now() - t0,
      };
      const outcome: EpisodeOutcome = { result, trajectory: a.trajectory, finalObservation: a.finalObservation, initial: a.initial };
      let verdicts: Verdict[] | undefined;
      let reward: number | undefined;
      if (opts.finalize) {
        try {
          const f = await opts.finalize(outcome);
          if (f) ({ verdicts, reward } = f);
        } catch (err) {
          // Judging trouble must not lose the episode: it is recorded without verdicts.
          log.error({ err, task: opts.task.id }, 'finalizing the episode failed');
        }
      }
      await a.recording?.onEnd({ termination: result.termination, answer: result.answer, verdicts, reward });
      return outcome;
    }
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuterAbort);
  }
}
