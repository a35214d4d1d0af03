// Result shapes of the runner: one episode's outcome, one row per task in a run, and summary.json.
// zod is the source of truth; summary.json is validated against RunSummary when read back (resume, tests).
import { z } from 'zod';
import type { Action } from '../protocol/action.ts';
import type { Observation } from '../protocol/observation.ts';
import type { BrowserCreateInput } from '../protocol/sandbox.ts';
import { Termination, TerminationReason, Verdict, type Task } from '../protocol/task.ts';
import type { EpisodeRecorderLike, RecordingHook } from '../recording/step-hook.ts';
import type { Logger } from '../sandbox/log.ts';
import type { EnvClient } from './env-client.ts';
import type { Policy } from './policy.ts';

export const AttemptFailure = z.object({
  attempt: z.number().int(),
  reason: TerminationReason,
  detail: z.string().optional(),
});
export type AttemptFailure = z.infer<typeof AttemptFailure>;

/** Per-step timings of one episode (ms), for latency charts and the runner-overhead bench. */
export const StepTiming = z.object({
  /** Whole loop iteration: policy + parse + env step + recording. */
  wall: z.number(),
  policy: z.number(),
  /** Client-observed round trip of the step request. */
  env: z.number(),
  /** Server-reported `observation.timings.total`. */
  server: z.number().optional(),
  /** Writing the step record (frame, steps.jsonl, visual diff): runs in the background, off `wall`. */
  record: z.number().optional(),
});
export type StepTiming = z.infer<typeof StepTiming>;

export const EpisodeResult = z.object({
  task_id: z.string(),
  episode_id: z.string(),
  termination: Termination,
  /** Policy steps taken in the final attempt (parse failures included). */
  steps: z.number().int(),
  answer: z.string().optional(),
  /** 1 + restarts after environment/website failures. */
  attempts: z.number().int(),
  attempt_failures: z.array(AttemptFailure),
  parse_failures: z.number().int(),
  final_url: z.string().optional(),
  started_at: z.string(),
  duration_ms: z.number(),
  reset_ms: z.number(),
  step_timings: z.array(StepTiming),
  tokens: z.object({ prompt: z.number(), completion: z.number() }),
});
export type EpisodeResult = z.infer<typeof EpisodeResult>;

/** One task's line in summary.json and report.html. */
export const EpisodeRow = z.object({
  task_id: z.string(),
  site: z.string(),
  level: z.string().optional(),
  question: z.string().optional(),
  termination: Termination,
  steps: z.number().int(),
  answer: z.string().optional(),
  /** true/false from the primary judge; null when the judge errored or no judge ran. */
  success: z.boolean().nullable(),
  verdicts: z.array(Verdict),
  attempts: z.number().int(),
  duration_ms: z.number(),
  /** Mean client-observed env step latency (ms). */
  mean_step_ms: z.number().optional(),
  step_ms: z.array(z.number()).default([]),
  tokens: z.object({ prompt: z.number(), completion: z.number() }).default({ prompt: 0, completion: 0 }),
  /** Episode directory relative to the run directory. */
  dir: z.string(),
  /** Taken from an existing recording (resume) rather than run now. */
  resumed: z.boolean().default(false),
  /** Steps whose model output could not be parsed into actions. */
  parse_failures: z.number().int().default(0),
  /** Steps that changed nothing visible although their action should have (missed clicks), from the recording. */
  noops: z.number().int().optional(),
});
export type EpisodeRow = z.infer<typeof EpisodeRow>;

export const Rate = z.object({ total: z.number().int(), succeeded: z.number().int(), success_rate: z.number() });
export type Rate = z.infer<typeof Rate>;

export const RunSummary = z.object({
  run_id: z.string(),
  suite: z.string(),
  model: z.string().optional(),
  policy: z.string().optional(),
  judge: z.string().optional(),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.number(),
  /** Tasks in the run (including those not started because a cap was hit). */
  total: z.number().int(),
  /** Episodes with a result (run now or resumed). */
  finished: z.number().int(),
  not_started: z.number().int(),
  succeeded: z.number().int(),
  /** Judged failures (the model failed). */
  failed: z.number().int(),
  judge_errors: z.number().int(),
  /** The primary judge replied without a verdict and its original leaves such episodes out (WebVoyager's None). */
  unparsed: z.number().int().default(0),
  /** Episodes lost to env_error/website_error after retries: not the model's fault. */
  infra_failures: z.number().int(),
  /** Episodes the operator interrupted (Ctrl-C, a time or cost cap): neither the model's nor the environment's fault. */
  aborted: z.number().int().default(0),
  /** succeeded / (finished − judge_errors − unparsed − infra_failures − aborted): only judged episodes count. */
  success_rate: z.number(),
  /** succeeded / total: the strict figure. */
  success_rate_all: z.number(),
  by_site: z.record(z.string(), Rate),
  by_level: z.record(z.string(), Rate),
  termination_reasons: z.record(z.string(), z.number().int()),
  steps: z.object({ mean: z.number(), median: z.number(), max: z.number(), histogram: z.record(z.string(), z.number().int()) }),
  step_latency_ms: z.object({ mean: z.number(), p50: z.number(), p90: z.number(), p99: z.number() }),
  tokens: z.object({ prompt: z.number(), completion: z.number() }),
  cost_usd: z.number().optional(),
  env_retries: z.number().int(),
  /** Why the run stopped before all tasks were started (time/cost cap, abort). */
  stopped_early: z.string().optional(),
  episodes: z.array(EpisodeRow),
});
export type RunSummary = z.infer<typeof RunSummary>;

// --- The episode loop's interfaces (runner/episode.ts runs episodes, runner/attempt.ts one attempt of each) ----------

export interface RetryPolicy {
  /** Restarts of the whole episode (fresh sandbox) after env_error / website_error. */
  maxRestarts: number;
  /** Attempts at opening the start URL inside one sandbox before the attempt counts as failed. */
  startUrlAttempts: number;
  /** Base backoff between restarts (doubles each time). */
  backoffMs: number;
}

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

/** What one attempt of an episode came to (runner/attempt.ts; runner/episode.ts restarts attempts). */
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

/** What one attempt is given by the episode loop. */
export interface AttemptContext {
  opts: EpisodeOptions;
  /** 1 for the first attempt; restarts count up. */
  attempt: number;
  episodeId: string;
  /** Aborts with an EpisodeEnd (episode timeout) or the caller's abort. */
  signal: AbortSignal;
  /** Parse failures in a row that end the attempt. */
  maxParse: number;
  retry: RetryPolicy;
  log: Logger;
}
