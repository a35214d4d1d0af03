// One attempt of an episode (runner/episode.ts restarts them), an Attempt object: a fresh sandbox, the start URL, then policy →
// parse → env step until the policy ends it or a limit is hit. Each step goes to the attempt's step hooks
// (sandbox/step-hook.ts) — the recording among them (recording/step-hook.ts), the same hook a `record: true`
// sandbox gets on the server — so the step record is built in one place.
import type { Observation, StepResult } from '../protocol/observation.ts';
import { agentTermination, type Termination } from '../protocol/task.ts';
import { frameName } from '../recording/recorder.ts';
import { frameOf, RecordingHook } from '../recording/step-hook.ts';
import { StepHooks } from '../sandbox/step-hook.ts';
import type { PolicyDecision } from './policy.ts';
import { abortableDelay, EpisodeEnd, raceAbort, reobserve } from './attempt-env.ts';
import { clientErrorInfo, describeClientError, type EnvStepBody } from './env-client.ts';
import type { AttemptContext, AttemptOutcome, EpisodeOutcome, StepTiming, TrajectoryStep } from './types.ts';

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

/** What a step the env executed (or refused) came to. */
interface Acted {
  result?: StepResult;
  parseError?: string;
  envMs: number;
}

/**
 * One attempt: `run()` resets (a fresh sandbox, the start URL, frame 0), then per step decides (the policy),
 * acts (the env step) and records (trajectory, timings, the step hooks) until the policy ends it or a limit is hit.
 * Its state is this object's; `end()` turns it into the outcome.
 */
export class Attempt {
  private readonly trajectory: TrajectoryStep[] = [];
  private readonly timings: StepTiming[] = [];
  private readonly tokens = { prompt: 0, completion: 0 };
  /** The step hooks of this attempt, keyed by its sandbox: the recording registers here. */
  private readonly hooks: StepHooks;
  private readonly writes: Promise<unknown>[] = [];
  private steps = 0;
  private parseFailures = 0;
  private consecutive = 0;
  private answer: string | undefined;
  private obs: Observation | undefined;
  private sandboxId: string | undefined;
  private recording: RecordingHook | undefined;
  private resetMs = 0;
  private initial: EpisodeOutcome['initial'];
  private lastParseError: string | undefined;
  private lastActions: StepResult['actions'] | undefined;

  constructor(private readonly c: AttemptContext) {
    this.hooks = new StepHooks(c.log);
  }

  /** Runs the attempt to its end (never throws); the sandbox is deleted whatever happened. */
  async run(): Promise<AttemptOutcome> {
    const { opts, signal, log } = this.c;
    try {
      if (signal.aborted) throw signal.reason;
      const open = opts.recorder;
      if (open) {
        this.recording = new RecordingHook(() => open(this.c.attempt));
        // Opened before the sandbox exists: an attempt that fails to create one is recorded too.
        await this.recording.open();
      }
      await this.reset();
      await opts.policy.start(opts.task);
      while (this.steps < opts.maxSteps) {
        const ended = await this.step();
        if (ended) return this.end(ended);
      }
      return this.end({ reason: 'max_steps_exhausted', detail: `no answer within ${opts.maxSteps} steps` });
    } catch (err) {
      if (err instanceof EpisodeEnd) return this.end({ reason: err.reason, detail: err.detail }, err.retryable);
      if (signal.aborted && signal.reason instanceof EpisodeEnd) return this.end({ reason: signal.reason.reason, detail: signal.reason.detail });
      // Anything else (recorder I/O, a bug) is a Grove-side failure; not retried, since it would likely repeat.
      log.error({ err, task: opts.task.id }, 'episode failed unexpectedly');
      return this.end({ reason: 'env_error', detail: `runner error: ${err instanceof Error ? err.message : String(err)}` });
    } finally {
      if (this.sandboxId) {
        try {
          await opts.env.deleteSandbox(this.sandboxId);
        } catch (err) {
          log.warn({ err: describeClientError(err), sandbox: this.sandboxId }, 'could not delete the sandbox');
        }
      }
    }
  }

  /** A fresh sandbox (waiting out a full server), the start URL (or a first observation), frame 0. */
  private async reset(): Promise<void> {
    const { opts, signal, retry, log, episodeId } = this.c;
    const { env, task } = opts;
    const som = opts.sandbox?.som;
    const tr = performance.now();
    let sandboxId: string;
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
      sandboxId = this.sandboxId = created.sandbox_id;
      if (this.recording) this.hooks.attach(sandboxId, this.recording);
      await raceAbort(env.waitSandbox(sandboxId, opts.readyTimeoutSec ?? 60), signal);
    } catch (err) {
      if (err instanceof EpisodeEnd) throw err;
      throw new EpisodeEnd('env_error', `sandbox creation failed: ${describeClientError(err)}`, true);
    }
    const startUrl = typeof opts.startUrl === 'function' ? opts.startUrl(this.c.attempt) : (opts.startUrl ?? task.start_url);
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
        this.obs = r.observation;
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
        this.obs = await raceAbort(env.observation(sandboxId, { som }), signal);
      } catch (err) {
        if (err instanceof EpisodeEnd) throw err;
        throw new EpisodeEnd('env_error', `initial observation failed: ${describeClientError(err)}`, true);
      }
    }
    this.resetMs = performance.now() - tr;
    const obs = this.obs;
    if (!obs) throw new EpisodeEnd('env_error', 'no initial observation', true);
    const f0 = frameOf(obs);
    await this.recording?.begin({ url: obs.url, title: obs.title, tabs: obs.tabs, screenshot: obs.screenshot });
    this.initial = {
      frame: this.recording && f0 ? frameName(0, f0.ext) : undefined,
      screenshot: opts.keepScreenshots && obs.screenshot?.base64 ? { mime: obs.screenshot.mime, base64: obs.screenshot.base64 } : undefined,
    };
  }

  /** One step: decide, act, record; the termination when the step ends the attempt. */
  private async step(): Promise<Termination | undefined> {
    const { opts } = this.c;
    const tw = performance.now();
    this.steps++;
    const { decision, policyMs } = await this.decide();
    const { body, parseError: refused, thought, format } = this.toBody(decision);
    const acted: Acted = body ? await this.act(body) : { envMs: 0 };
    const parseError = refused ?? acted.parseError;
    const result = acted.result;
    if (result) this.obs = result.observation;
    this.lastActions = result?.actions;
    opts.onStep?.();
    if (parseError) {
      this.parseFailures++;
      this.consecutive++;
    } else this.consecutive = 0;
    this.lastParseError = parseError;
    this.record(decision, { result, parseError, thought, format, policyMs, envMs: acted.envMs, tw });

    const crash = result?.observation.events.find((e) => e.type === 'crash' && !e.recovered);
    if (crash && crash.type === 'crash') throw new EpisodeEnd('env_error', `browser crashed: ${crash.message}`, true);
    if (result?.done) {
      this.answer = result.answer;
      // terminate(failure) is the agent giving up, never a completion.
      return agentTermination(result.actions.map((x) => x.action), this.steps);
    }
    if (this.consecutive >= this.c.maxParse) {
      return { reason: 'consecutive_parse_failures', detail: `${this.consecutive} in a row; last: ${parseError}` };
    }
    return undefined;
  }

  /** The policy's decision on the current observation, and how long it took. */
  private async decide(): Promise<{ decision: PolicyDecision; policyMs: number }> {
    const { opts, signal } = this.c;
    const { policy, task } = opts;
    const tp = performance.now();
    let decision: PolicyDecision;
    try {
      decision = await raceAbort(Promise.resolve(policy.next(this.obs!, { task, step: this.steps, lastParseError: this.lastParseError, lastActions: this.lastActions })), signal);
    } catch (err) {
      if (err instanceof EpisodeEnd) throw err;
      throw new EpisodeEnd('generation_error', `policy ${policy.name}: ${describeClientError(err)}`);
    }
    this.tokens.prompt += decision.prompt_tokens ?? 0;
    this.tokens.completion += decision.completion_tokens ?? 0;
    return { decision, policyMs: decision.latency_ms ?? performance.now() - tp };
  }

  /** What to send: canonical actions, locally parsed actions, or raw text for the server to parse. */
  private toBody(decision: PolicyDecision): { body?: EnvStepBody; parseError?: string; thought?: string; format?: string } {
    const { opts } = this.c;
    const som = opts.sandbox?.som;
    const format = decision.format ?? opts.format;
    let thought = decision.thought;
    if (decision.actions && decision.actions.length > 0) return { body: { actions: decision.actions, som }, thought, format };
    if (!format) return { parseError: 'the policy returned no actions and no output format to parse its text with', thought, format };
    if (opts.parse) {
      const p = opts.parse(format, decision.output);
      thought ??= p.thought;
      return p.ok ? { body: { actions: p.actions, som }, thought, format } : { parseError: p.error, thought, format };
    }
    return { body: { model_output: decision.output, format, som }, thought, format };
  }

  /** The env step. A 400 is the model's (a parse failure); a capture timeout is observed again, never resent. */
  private async act(body: EnvStepBody): Promise<Acted> {
    const { opts, signal } = this.c;
    const sandboxId = this.sandboxId!;
    const te = performance.now();
    let result: StepResult | undefined;
    let parseError: string | undefined;
    try {
      result = await raceAbort(opts.env.step(sandboxId, body), signal);
    } catch (err) {
      if (err instanceof EpisodeEnd) throw err;
      const info = clientErrorInfo(err);
      if (info.status === 400) parseError = `step rejected: ${describeClientError(err)}`;
      else if (info.code === 'capture_timeout') result = await reobserve(opts.env, sandboxId, err, { som: body.som }, signal);
      else throw new EpisodeEnd('env_error', `step ${this.steps} failed: ${describeClientError(err)}`, true);
    }
    const envMs = performance.now() - te;
    if (result?.parse && !result.parse.ok) parseError = result.parse.error ?? 'the server could not parse the model output';
    return { result, parseError, envMs };
  }

  /** The step into the trajectory, the timings and the step hooks (the recording writes in the background). */
  private record(
    decision: PolicyDecision,
    s: { result?: StepResult; parseError?: string; thought?: string; format?: string; policyMs: number; envMs: number; tw: number },
  ): void {
    const { opts } = this.c;
    const obs = this.obs!;
    const { result } = s;
    this.trajectory.push({
      step: this.steps,
      output: decision.output,
      thought: s.thought,
      actions: result?.actions.map((x) => x.action) ?? [],
      css: result?.actions.map((x) => x.css),
      parse_error: s.parseError,
      url: obs.url,
      title: obs.title,
      action_error: obs.last_action_error ? `${obs.last_action_error.code}: ${obs.last_action_error.message}` : undefined,
      screenshot: result && opts.keepScreenshots && obs.screenshot?.base64 ? { mime: obs.screenshot.mime, base64: obs.screenshot.base64 } : undefined,
      frame: this.recording && result && obs.screenshot?.base64 ? frameName(this.steps, frameOf(obs)!.ext) : undefined,
    });
    const timing: StepTiming = { wall: 0, policy: s.policyMs, env: s.envMs, server: result ? obs.timings.total : undefined };
    if (this.recording) {
      const tr0 = performance.now();
      // Not awaited: the recorder orders its writes itself, so frame/fsync/diff work overlaps with the next
      // policy call and env step instead of adding to every step. Failures surface in flush().
      const w = this.hooks.afterStep({
        sandboxId: this.sandboxId as string,
        source: { model_output: decision.output, format: decision.actions?.length ? decision.format : s.format, thought: s.thought, parse_error: s.parseError },
        actions: result?.actions ?? [],
        observation: obs,
        stale: !result,
        done: result?.done,
        answer: result?.answer,
        policy: { latency_ms: s.policyMs, prompt_tokens: decision.prompt_tokens, completion_tokens: decision.completion_tokens },
      });
      this.writes.push(
        w.then((failures) => {
          timing.record = performance.now() - tr0;
          return failures[0];
        }),
      );
    }
    timing.wall = performance.now() - s.tw;
    this.timings.push(timing);
  }

  private end(termination: Termination, retryable = false): AttemptOutcome {
    const writes = this.writes;
    return {
      result: {
        task_id: this.c.opts.task.id,
        termination,
        steps: this.steps,
        answer: this.answer,
        parse_failures: this.parseFailures,
        final_url: this.obs?.url,
        reset_ms: this.resetMs,
        step_timings: this.timings,
        tokens: this.tokens,
      },
      retryable,
      trajectory: this.trajectory,
      finalObservation: this.obs,
      initial: this.initial,
      recording: this.recording,
      flush: async () => {
        const errs = (await Promise.all(writes)).filter((e) => e !== undefined);
        return errs.length ? (errs[0] instanceof Error ? errs[0].message : String(errs[0])) : undefined;
      },
    };
  }
}
