// The judge contract. LLM judges (this folder) and rule judges (judges/rules/, state-based ground truth for
// the offline sites) implement the same interface; the runner calls `judge()` after an episode, `grove judge`
// calls it over recorded episodes.
//
// Contract:
// - `judge()` never throws for a judging problem: a timeout, an API error or an unreadable input is a Verdict with
//   outcome `judge_error` (details.error_kind says which). `judge_error` is never a task failure.
// - A reply without a verdict is treated as each judge's original harness treats it: `unparsed` (left out of the
//   rate: WebVoyager) or `failure` with details.unparsed (WebJudge, autonomous, DeepShop).
// - A task failure is outcome `failure` (score 0); success is `success` (score 1).
// - `screenshots` are chronological (oldest first): the initial frame, then the frame after each step.
// - `actions` is the action history as text, one entry per step, chronological.
import { z } from 'zod';
import type { Task, Verdict } from '../protocol/task.ts';

export type { Verdict };

export interface ScreenshotRef {
  /** File to read (absolute, or relative to the process cwd). */
  path?: string;
  /** Bytes, when already in memory (the runner). Wins over `path`. */
  bytes?: Buffer;
  mime: string;
}

export interface JudgeInput {
  task: Task;
  /** The agent's final answer (answer action text); undefined when the agent gave none. */
  answer?: string;
  screenshots: ScreenshotRef[];
  actions: string[];
  /** The agent's thoughts per step, when recorded (same order as actions). */
  thoughts?: string[];
  /** The episode directory, when the episode is recorded. */
  episodeDir?: string;
  /**
   * Where LLM judges write their record (`<recordDir>/<judge>.json`: full inputs and raw outputs).
   * Default: `<episodeDir>/judge` when episodeDir is set; nothing is written when both are absent.
   */
  recordDir?: string;
  /** Final environment state for rule judges (e.g. the offline shop's state dump). */
  state?: unknown;
}

export interface Judge {
  /** Stable name, written into Verdict.judge (e.g. "webvoyager", "webjudge", "deepshop", "rule:shop"). */
  name: string;
  judge(input: JudgeInput): Promise<Verdict>;
}

/** The judge's own model endpoint (separate from the policy's). */
export const JudgeModelConfig = z.object({
  baseURL: z.string().url(),
  apiKey: z.string().optional(),
  model: z.string().min(1),
  /** Concurrent requests to this endpoint (WebJudge scores screenshots in parallel up to this). */
  concurrency: z.number().int().min(1).default(4),
  /** Judge-level retries of a call whose reply is unusable (API error after the client's own retries, timeout, no verdict). */
  retries: z.number().int().min(0).default(2),
  /** Per-request timeout. */
  timeoutMs: z.number().int().min(1).default(120_000),
  /** HTTP retries inside the client (429/5xx/timeouts), per judge-level attempt. */
  httpRetries: z.number().int().min(0).default(1),
  /**
   * Request parameters. Unset (undefined): the value the judge's original harness sends (WebVoyager: temperature 0,
   * max_tokens 1000; Online-Mind2Web: temperature 0, max_tokens 512). null: not sent at all — reasoning models
   * (o4-mini, the WebJudge default) reject `temperature` and `max_tokens`.
   */
  temperature: z.number().min(0).max(2).nullable().optional(),
  maxTokens: z.number().int().min(1).nullable().optional(),
  /** The body field that carries maxTokens: `max_completion_tokens` for reasoning models. */
  maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
});
export type JudgeModelConfig = z.infer<typeof JudgeModelConfig>;
export type JudgeModelConfigInput = z.input<typeof JudgeModelConfig>;

export type JudgeErrorKind = 'timeout' | 'api_error' | 'bad_input';

/** A judging problem (never a task failure). Judges turn it into a `judge_error` verdict. */
export class JudgeError extends Error {
  readonly kind: JudgeErrorKind;
  /** The last raw reply, when the problem was its content. */
  readonly raw?: string;
  constructor(kind: JudgeErrorKind, message: string, opts: { raw?: string; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'JudgeError';
    this.kind = kind;
    this.raw = opts.raw;
  }
}

/** Build the `judge_error` verdict for an error (JudgeError or anything unexpected). */
export function judgeErrorVerdict(judge: string, err: unknown, details: Record<string, unknown> = {}): Verdict {
  const kind: JudgeErrorKind = err instanceof JudgeError ? err.kind : 'api_error';
  return {
    judge,
    outcome: 'judge_error',
    reasoning: err instanceof Error ? err.message : String(err),
    details: { ...details, error_kind: kind, ...(err instanceof JudgeError && err.raw !== undefined ? { raw: err.raw } : {}) },
  };
}
