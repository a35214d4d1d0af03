// The episode loop: reset (sandbox + start URL) → policy → parse → env step → … until the policy ends the
// episode or a limit is hit. Environment and website failures restart the episode on a fresh sandbox (per the
// retry policy) and never count as the model failing. The sandbox is always deleted.
import type { Action } from '../protocol/action.ts';
import type { Observation, StepResult } from '../protocol/observation.ts';
import type { BrowserCreateInput } from '../protocol/sandbox.ts';
import type { Task, Termination, TerminationReason, Verdict } from '../protocol/task.ts';
import type { StepRecord } from '../protocol/recording.ts';
import { frameName } from '../recording/recorder.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import type { Policy, PolicyDecision } from './policy.ts';
import { clientErrorInfo, describeClientError, type EnvClient, type EnvStepBody } from './env-client.ts';
import type { AttemptFailure, EpisodeResult, StepTiming } from './types.ts';

/** The subset of recording/recorder.ts EpisodeRecorder the loop drives. */
export interface EpisodeRecorderLike {
  recordInitial(frame?: { bytes: Buffer; ext: string }, obs?: { url?: string; title?: string; tabs?: Observation['tabs'] }): Promise<void>;
  recordStep(rec: Omit<StepRecord, 'frame' | 'diff'>, frame?: { bytes: Buffer; ext: string }): Promise<unknown>;
  finish(end: { termination: Termination; answer?: string; reward?: number; verdicts?: Verdict[] }): Promise<void>;
}

export interface RetryPolicy {
  /** Restarts of the whole episode (fresh sandbox) after env_error / website_error. */
  maxRestarts: number;
  /** Attempts at opening the start URL inside one sandbox before the attempt counts as failed. */
  startUrlAttempts: number;
  /** Base backoff between restarts (doubles each time). */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRestarts: 2, startUrlAttempts: 2, backoffMs: 500 };

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

/** Raised inside an attempt to end it with a given termination. */
class EpisodeEnd extends Error {
  constructor(
    readonly reason: TerminationReason,
    readonly detail: string,
    readonly retryable = false,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** Action error codes on the start URL that mean the website itself failed (not Grove). */
const WEBSITE_CODES = new Set([
  'dns_error',
  'connection_refused',
  'connection_reset',
  'tls_error',
  'http_error',
  'navigation_failed',
  'timeout',
  'page_unresponsive',
]);

const extOf = (mime: string) => (mime.includes('png') ? 'png' : mime.includes('webp') ? 'webp' : 'jpg');

function frameOf(obs: Observation): { bytes: Buffer; ext: string } | undefined {
  const s = obs.screenshot;
  if (!s?.base64) return undefined;
  return { bytes: Buffer.from(s.base64, 'base64'), ext: extOf(s.mime) };
}

/** Rejects with the abort reason as soon as `signal` aborts; the raced promise keeps running. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
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

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return raceAbort(
    new Promise<void>((ok) => {
      const t = setTimeout(ok, ms);
      t.unref();
    }),
    signal,
  );
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
        await a.recorder?.finish({ termination: r, answer: a.result.answer }).catch(() => undefined);
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
      await a.recorder?.finish({ termination: result.termination, answer: result.answer, verdicts, reward });
      return outcome;
    }
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuterAbort);
  }
}

interface AttemptOutcome {
  result: Omit<EpisodeResult, 'episode_id' | 'attempts' | 'attempt_failures' | 'started_at' | 'duration_ms'>;
  retryable: boolean;
  trajectory: TrajectoryStep[];
  finalObservation?: Observation;
  initial?: EpisodeOutcome['initial'];
  recorder?: EpisodeRecorderLike;
  /** Waits for the step records still being written; the first write error, if any. */
  flush(): Promise<string | undefined>;
}

async function runAttempt(
  opts: EpisodeOptions,
  attempt: number,
  episodeId: string,
  signal: AbortSignal,
  maxParse: number,
  retry: RetryPolicy,
  log: Logger,
): Promise<AttemptOutcome> {
  const { env, task, policy } = opts;
  const trajectory: TrajectoryStep[] = [];
  const timings: StepTiming[] = [];
  const tokens = { prompt: 0, completion: 0 };
  let steps = 0;
  let parseFailures = 0;
  let consecutive = 0;
  let answer: string | undefined;
  let obs: Observation | undefined;
  let sandboxId: string | undefined;
  let recorder: EpisodeRecorderLike | undefined;
  let resetMs = 0;
  let initial: EpisodeOutcome['initial'];
  const writes: Promise<unknown>[] = [];
  const som = opts.sandbox?.som;

  const end = (termination: Termination, retryable = false): AttemptOutcome => ({
    result: {
      task_id: task.id,
      termination,
      steps,
      answer,
      parse_failures: parseFailures,
      final_url: obs?.url,
      reset_ms: resetMs,
      step_timings: timings,
      tokens,
    },
    retryable,
    trajectory,
    finalObservation: obs,
    initial,
    recorder,
    flush: async () => {
      const errs = (await Promise.all(writes)).filter((e) => e !== undefined);
      return errs.length ? (errs[0] instanceof Error ? errs[0].message : String(errs[0])) : undefined;
    },
  });

  try {
    if (signal.aborted) throw signal.reason;
    recorder = opts.recorder ? await opts.recorder(attempt) : undefined;

    // --- reset -------------------------------------------------------------------------------------------
    const tr = performance.now();
    try {
      const body = { type: 'browser' as const, ...opts.sandbox, labels: { ...opts.sandbox?.labels, task: task.id.slice(0, 200), episode: episodeId.slice(0, 200) } };
      // A full server (503 capacity_exhausted) is back-pressure, not a failure: wait for a slot
      // (Retry-After when given) up to `capacityWaitMs` before it counts as an environment error.
      const waitUntil = performance.now() + (opts.capacityWaitMs ?? 120_000);
      let created: { sandbox_id: string };
      for (;;) {
        try {
          created = await raceAbort(env.createSandbox(body), signal);
          break;
        } catch (err) {
          const info = clientErrorInfo(err);
          if (info.code !== 'capacity_exhausted' || performance.now() > waitUntil) throw err;
          const ra = (err as { retryAfter?: unknown }).retryAfter;
          await abortableDelay(typeof ra === 'number' && ra > 0 ? Math.min(ra * 1000, 2000) : 1000, signal);
        }
      }
      sandboxId = created.sandbox_id;
      await raceAbort(env.waitSandbox(sandboxId, opts.readyTimeoutSec ?? 60), signal);
    } catch (err) {
      if (err instanceof EpisodeEnd) throw err;
      throw new EpisodeEnd('env_error', `sandbox creation failed: ${describeClientError(err)}`, true);
    }
    const startUrl = typeof opts.startUrl === 'function' ? opts.startUrl(attempt) : (opts.startUrl ?? task.start_url);
    if (startUrl) {
      let lastErr = '';
      for (let i = 0; i < Math.max(1, retry.startUrlAttempts); i++) {
        let r: StepResult;
        try {
          r = await raceAbort(env.step(sandboxId, { actions: [{ action: 'goto', url: startUrl }], som }), signal);
        } catch (err) {
          if (err instanceof EpisodeEnd) throw err;
          throw new EpisodeEnd('env_error', `opening the start URL failed in Grove: ${describeClientError(err)}`, true);
        }
        obs = r.observation;
        const e = r.observation.last_action_error;
        if (!e) {
          lastErr = '';
          break;
        }
        lastErr = `${e.code}: ${e.message}`;
        if (!WEBSITE_CODES.has(e.code)) {
          // network_blocked and the like are configuration problems of the environment, not the site.
          throw new EpisodeEnd('env_error', `start URL ${startUrl}: ${lastErr}`, e.code !== 'network_blocked' && e.code !== 'navigation_blocked');
        }
        log.debug({ task: task.id, attempt: i + 1, error: lastErr }, 'start URL failed');
      }
      if (lastErr) throw new EpisodeEnd('website_error', `start URL ${startUrl}: ${lastErr}`, true);
    } else {
      try {
        obs = await raceAbort(env.observation(sandboxId), signal);
      } catch (err) {
        if (err instanceof EpisodeEnd) throw err;
        throw new EpisodeEnd('env_error', `initial observation failed: ${describeClientError(err)}`, true);
      }
    }
    resetMs = performance.now() - tr;
    if (!obs) throw new EpisodeEnd('env_error', 'no initial observation', true);
    const f0 = frameOf(obs);
    await recorder?.recordInitial(f0, { url: obs.url, title: obs.title, tabs: obs.tabs });
    initial = {
      frame: recorder && f0 ? frameName(0, f0.ext) : undefined,
      screenshot: opts.keepScreenshots && obs.screenshot?.base64 ? { mime: obs.screenshot.mime, base64: obs.screenshot.base64 } : undefined,
    };
    await policy.start(task);

    // --- loop ----------------------------------------------------------------------------------------------
    let lastParseError: string | undefined;
    let lastActions: StepResult['actions'] | undefined;
    while (steps < opts.maxSteps) {
      const tw = performance.now();
      steps++;
      let decision: PolicyDecision;
      const tp = performance.now();
      try {
        decision = await raceAbort(Promise.resolve(policy.next(obs, { task, step: steps, lastParseError, lastActions })), signal);
      } catch (err) {
        if (err instanceof EpisodeEnd) throw err;
        throw new EpisodeEnd('generation_error', `policy ${policy.name}: ${describeClientError(err)}`);
      }
      const policyMs = decision.latency_ms ?? performance.now() - tp;
      tokens.prompt += decision.prompt_tokens ?? 0;
      tokens.completion += decision.completion_tokens ?? 0;

      // Decide what to send: canonical actions, locally parsed actions, or raw text for the server to parse.
      const format = decision.format ?? opts.format;
      let body: EnvStepBody | undefined;
      let parseError: string | undefined;
      let thought = decision.thought;
      if (decision.actions && decision.actions.length > 0) {
        body = { actions: decision.actions, som };
      } else if (!format) {
        parseError = 'the policy returned no actions and no output format to parse its text with';
      } else if (opts.parse) {
        const p = opts.parse(format, decision.output);
        thought ??= p.thought;
        if (p.ok) body = { actions: p.actions, som };
        else parseError = p.error;
      } else {
        body = { model_output: decision.output, format, som };
      }

      let result: StepResult | undefined;
      let envMs = 0;
      if (body) {
        const te = performance.now();
        try {
          result = await raceAbort(env.step(sandboxId, body), signal);
        } catch (err) {
          if (err instanceof EpisodeEnd) throw err;
          const info = clientErrorInfo(err);
          // A 400 on our step means the actions (or text) were not acceptable: the model's fault, a parse failure.
          if (info.status === 400) parseError = `step rejected: ${describeClientError(err)}`;
          else throw new EpisodeEnd('env_error', `step ${steps} failed: ${describeClientError(err)}`, true);
        }
        envMs = performance.now() - te;
        if (result?.parse && !result.parse.ok) parseError = result.parse.error ?? 'the server could not parse the model output';
      }
      if (result) obs = result.observation;
      lastActions = result?.actions;
      opts.onStep?.();

      const actions = result?.actions.map((x) => x.action) ?? [];
      if (parseError) {
        parseFailures++;
        consecutive++;
      } else consecutive = 0;
      lastParseError = parseError;

      trajectory.push({
        step: steps,
        output: decision.output,
        thought,
        actions,
        css: result?.actions.map((x) => x.css),
        parse_error: parseError,
        url: obs.url,
        title: obs.title,
        action_error: obs.last_action_error ? `${obs.last_action_error.code}: ${obs.last_action_error.message}` : undefined,
        screenshot: result && opts.keepScreenshots && obs.screenshot?.base64 ? { mime: obs.screenshot.mime, base64: obs.screenshot.base64 } : undefined,
        frame: recorder && result && obs.screenshot?.base64 ? frameName(steps, extOf(obs.screenshot.mime)) : undefined,
      });
      const timing: StepTiming = { wall: 0, policy: policyMs, env: envMs, server: result ? obs.timings.total : undefined };
      if (recorder) {
        const tr0 = performance.now();
        // Not awaited: the recorder orders its writes itself, so frame/fsync/diff work overlaps with the next
        // policy call and env step instead of adding to every step. Failures surface in flush().
        const w = recorder.recordStep(
          {
            step: steps,
            ts: new Date().toISOString(),
            model_output: decision.output,
            format: decision.actions?.length ? decision.format : format,
            thought,
            parse_error: parseError,
            actions: result?.actions ?? [],
            url: obs.url,
            title: obs.title,
            tabs: obs.tabs,
            events: result ? obs.events : [],
            last_action_error: result ? obs.last_action_error : null,
            timings: result ? obs.timings : { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
            screenshot: result && obs.screenshot ? { mime: obs.screenshot.mime, width: obs.screenshot.width, height: obs.screenshot.height, scale: obs.screenshot.scale_x, scale_y: obs.screenshot.scale_y } : undefined,
            policy: { latency_ms: policyMs, prompt_tokens: decision.prompt_tokens, completion_tokens: decision.completion_tokens },
          },
          result ? frameOf(obs) : undefined,
        );
        writes.push(
          w.then(
            () => {
              timing.record = performance.now() - tr0;
            },
            (e: unknown) => e,
          ),
        );
      }
      timing.wall = performance.now() - tw;
      timings.push(timing);

      const crash = result?.observation.events.find((e) => e.type === 'crash' && !e.recovered);
      if (crash && crash.type === 'crash') throw new EpisodeEnd('env_error', `browser crashed: ${crash.message}`, true);
      if (result?.done) {
        answer = result.answer;
        const term = result.actions.map((x) => x.action).find((x) => x.action === 'terminate');
        const detail =
          term && term.action === 'terminate'
            ? `terminate${term.status ? ` (${term.status})` : ''}${term.reason ? `: ${term.reason}` : ''}`
            : `answer at step ${steps}`;
        return end({ reason: 'task_completed', detail });
      }
      if (consecutive >= maxParse) {
        return end({ reason: 'consecutive_parse_failures', detail: `${consecutive} in a row; last: ${parseError}` });
      }
    }
    return end({ reason: 'max_steps_exhausted', detail: `no answer within ${opts.maxSteps} steps` });
  } catch (err) {
    if (err instanceof EpisodeEnd) return end({ reason: err.reason, detail: err.detail }, err.retryable);
    if (signal.aborted && signal.reason instanceof EpisodeEnd) return end({ reason: signal.reason.reason, detail: signal.reason.detail });
    // Anything else (recorder I/O, a bug) is a Grove-side failure; not retried, since it would likely repeat.
    log.error({ err, task: task.id }, 'episode failed unexpectedly');
    return end({ reason: 'env_error', detail: `runner error: ${err instanceof Error ? err.message : String(err)}` });
  } finally {
    if (sandboxId) {
      try {
        await env.deleteSandbox(sandboxId);
      } catch (err) {
        log.warn({ err: describeClientError(err), sandbox: sandboxId }, 'could not delete the sandbox');
      }
    }
  }
}
