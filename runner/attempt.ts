// One attempt of an episode (runner/episode.ts restarts them): a fresh sandbox, the start URL, then policy →
// parse → env step until the policy ends it or a limit is hit. Each step goes to the attempt's step hooks
// (sandbox/step-hook.ts) — the recording among them (recording/step-hook.ts), the same hook a `record: true`
// sandbox gets on the server — so the step record is built in one place.
import type { Observation, StepResult } from '../protocol/observation.ts';
import { agentTermination, type Termination, type TerminationReason } from '../protocol/task.ts';
import { frameName } from '../recording/recorder.ts';
import { frameOf, RecordingHook } from '../recording/step-hook.ts';
import type { Logger } from '../sandbox/log.ts';
import { StepHooks } from '../sandbox/step-hook.ts';
import type { PolicyDecision } from './policy.ts';
import { clientErrorInfo, describeClientError, type EnvStepBody } from './env-client.ts';
import type { EpisodeOptions, EpisodeOutcome, RetryPolicy, TrajectoryStep } from './episode.ts';
import type { EpisodeResult, StepTiming } from './types.ts';

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
async function reobserve(env: EpisodeOptions['env'], id: string, first: unknown, opts: { som?: boolean }, signal: AbortSignal): Promise<StepResult> {
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

export interface AttemptOutcome {
  result: Omit<EpisodeResult, 'episode_id' | 'attempts' | 'attempt_failures' | 'started_at' | 'duration_ms'>;
  retryable: boolean;
  trajectory: TrajectoryStep[];
  finalObservation?: Observation;
  initial?: EpisodeOutcome['initial'];
  /** The attempt's recording (its end is written by runEpisode, after judging). */
  recording?: RecordingHook;
  /** Waits for the step records still being written; the first write error, if any. */
  flush(): Promise<string | undefined>;
}

export async function runAttempt(
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
  let recording: RecordingHook | undefined;
  // The attempt's step hooks, keyed by its sandbox: the recording registers here.
  const hooks = new StepHooks(log);
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
    recording,
    flush: async () => {
      const errs = (await Promise.all(writes)).filter((e) => e !== undefined);
      return errs.length ? (errs[0] instanceof Error ? errs[0].message : String(errs[0])) : undefined;
    },
  });

  try {
    if (signal.aborted) throw signal.reason;
    const open = opts.recorder;
    if (open) {
      recording = new RecordingHook(() => open(attempt));
      // Opened before the sandbox exists: an attempt that fails to create one is recorded too.
      await recording.open();
    }

    // --- reset -------------------------------------------------------------------------------------------
    const tr = performance.now();
    try {
      const body = { type: 'browser' as const, ...opts.sandbox, labels: { ...opts.sandbox?.labels, task: task.id.slice(0, 200), episode: episodeId.slice(0, 200) } };
      // A full or overloaded server (503 capacity_exhausted / overloaded) is back-pressure, not a failure: wait for a slot
      // (Retry-After when given) up to `capacityWaitMs` before it counts as an environment error.
      const waitUntil = performance.now() + (opts.capacityWaitMs ?? 120_000);
      let created: { sandbox_id: string };
      for (;;) {
        try {
          created = await raceAbort(env.createSandbox(body), signal);
          break;
        } catch (err) {
          const info = clientErrorInfo(err);
          if ((info.code !== 'capacity_exhausted' && info.code !== 'overloaded') || performance.now() > waitUntil) throw err;
          const ra = (err as { retryAfter?: unknown }).retryAfter;
          await abortableDelay(typeof ra === 'number' && ra > 0 ? Math.min(ra * 1000, 2000) : 1000, signal);
        }
      }
      sandboxId = created.sandbox_id;
      if (recording) hooks.attach(sandboxId, recording);
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
        obs = await raceAbort(env.observation(sandboxId, { som }), signal);
      } catch (err) {
        if (err instanceof EpisodeEnd) throw err;
        throw new EpisodeEnd('env_error', `initial observation failed: ${describeClientError(err)}`, true);
      }
    }
    resetMs = performance.now() - tr;
    if (!obs) throw new EpisodeEnd('env_error', 'no initial observation', true);
    const f0 = frameOf(obs);
    await recording?.begin({ url: obs.url, title: obs.title, tabs: obs.tabs, screenshot: obs.screenshot });
    initial = {
      frame: recording && f0 ? frameName(0, f0.ext) : undefined,
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
          // The actions ran but no screenshot came (an overloaded machine): observe again, never resend the step.
          else if (info.code === 'capture_timeout') result = await reobserve(env, sandboxId, err, { som }, signal);
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
        frame: recording && result && obs.screenshot?.base64 ? frameName(steps, frameOf(obs)!.ext) : undefined,
      });
      const timing: StepTiming = { wall: 0, policy: policyMs, env: envMs, server: result ? obs.timings.total : undefined };
      if (recording) {
        const tr0 = performance.now();
        // Not awaited: the recorder orders its writes itself, so frame/fsync/diff work overlaps with the next
        // policy call and env step instead of adding to every step. Failures surface in flush().
        const w = hooks.afterStep({
          sandboxId: sandboxId as string,
          source: { model_output: decision.output, format: decision.actions?.length ? decision.format : format, thought, parse_error: parseError },
          actions: result?.actions ?? [],
          observation: obs,
          stale: !result,
          done: result?.done,
          answer: result?.answer,
          policy: { latency_ms: policyMs, prompt_tokens: decision.prompt_tokens, completion_tokens: decision.completion_tokens },
        });
        writes.push(
          w.then((failures) => {
            timing.record = performance.now() - tr0;
            return failures[0];
          }),
        );
      }
      timing.wall = performance.now() - tw;
      timings.push(timing);

      const crash = result?.observation.events.find((e) => e.type === 'crash' && !e.recovered);
      if (crash && crash.type === 'crash') throw new EpisodeEnd('env_error', `browser crashed: ${crash.message}`, true);
      if (result?.done) {
        answer = result.answer;
        // terminate(failure) is the agent giving up, never a completion.
        return end(agentTermination(result.actions.map((x) => x.action), steps));
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
