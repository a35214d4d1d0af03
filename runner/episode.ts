// The episode loop: reset (sandbox + start URL) → policy → parse → env step → … until the policy ends the
// episode or a limit is hit. Environment and website failures restart the episode on a fresh sandbox (per the
// retry policy) and never count as the model failing. The sandbox is always deleted. One attempt is attempt.ts.
import type { Action } from '../protocol/action.ts';
import type { Observation } from '../protocol/observation.ts';
import type { BrowserCreateInput } from '../protocol/sandbox.ts';
import type { Task, Verdict } from '../protocol/task.ts';
import type { EpisodeRecorderLike } from '../recording/step-hook.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import type { Policy } from './policy.ts';
import type { EnvClient } from './env-client.ts';
import { abortableDelay, EpisodeEnd, runAttempt } from './attempt.ts';
import type { AttemptFailure, EpisodeResult } from './types.ts';

export interface RetryPolicy {
  /** Restarts of the whole episode (fresh sandbox) after env_error / website_error. */
  maxRestarts: number;
  /** Attempts at opening the start URL inside one sandbox before the attempt counts as failed. */
  startUrlAttempts: number;
  /** Base backoff between restarts (doubles each time). */
  backoffMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { maxRestarts: 2, startUrlAttempts: 2, backoffMs: 500 };

/** Local parser (vlm-client/formats parseModelOutput) when the server should not parse. */
export type LocalParser = (format: string, output: string) => { ok: true; actions: Action[]; thought?: string } | { ok: false; error: string; thought?: string };

export interface TrajectoryStep {
  step: number;
  output: string;
  thought?: string;
  actions: Action[];
  /** Page coordinates each action resolved to (same order as actions), for the judges' action text. */
  css?: ({ x: number; y: number } | undefined)[];
  parse_error?: string;
  url: string;
  title: string;
  action_error?: string;
  /** Kept only with `keepScreenshots` (judges that look at screenshots). */
  screenshot?: { mime: string; base64: string };
  /** Recorded frame of the observation after this step, relative to the episode directory. */
  frame?: string;
}

export interface EpisodeOutcome {
  result: EpisodeResult;
  trajectory: TrajectoryStep[];
  /** The last observation seen (screenshot included when `keepScreenshots`). */
  finalObservation?: Observation;
  /** Frame 0 (after reset): recorded path and, with `keepScreenshots`, the image. */
  initial?: { frame?: string; screenshot?: { mime: string; base64: string } };
}

export interface EpisodeOptions {
  env: EnvClient;
  task: Task;
  policy: Policy;
  episodeId?: string;
  maxSteps: number;
  /** Parse failures in a row that end the episode (default 3). */
  maxConsecutiveParseFailures?: number;
  /** Wall-clock budget for the whole episode, restarts included. */
  timeoutMs?: number;
  /** Sandbox creation options (viewport, som, network, resize, …); `start_url` is opened by the loop. */
  sandbox?: Omit<BrowserCreateInput, 'type'>;
  /** URL to open at reset (per attempt: offline sites use a fresh session each time); defaults to task.start_url. */
  startUrl?: string | ((attempt: number) => string | undefined);
  /** Format used when a decision carries text only and names no format. */
  format?: string;
  /** Parse locally instead of sending model_output + format to the step endpoint. */
  parse?: LocalParser;
  retry?: Partial<RetryPolicy>;
  /** Called once per attempt to open a fresh recording (the previous attempt's, if any, is finished first). */
  recorder?: (attempt: number) => Promise<EpisodeRecorderLike>;
  /** Runs before the recording is finished (judging), so verdicts land in episode.json atomically. */
  finalize?: (o: EpisodeOutcome) => Promise<{ verdicts?: Verdict[]; reward?: number } | void>;
  keepScreenshots?: boolean;
  /** Seconds to wait for a sandbox to become ready. */
  readyTimeoutSec?: number;
  /** How long to keep retrying sandbox creation while the server is at capacity (default 120 s). */
  capacityWaitMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
  /** Called after each env step (progress). */
  onStep?: () => void;
}
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
      const a = await runAttempt(opts, attempt, episodeId, ctl.signal, maxParse, retry, log);
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
