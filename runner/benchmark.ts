// The benchmark runner: a worker pool of episodes over a task list, each recorded under
// <out>/episodes/<task>/, judged, and aggregated into <out>/summary.json and <out>/report.html.
// Resume skips tasks whose recording is complete; time and cost caps stop the run early.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { BrowserCreateInput } from '../protocol/sandbox.ts';
import { EpisodeMeta } from '../protocol/recording.ts';
import type { Task, Verdict } from '../protocol/task.ts';
import { EpisodeRecorder, STEPS_FILE } from '../recording/recorder.ts';
import { parseStepsJsonl } from '../recording/reader.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import type { Judge, JudgeInput, ScreenshotRef } from '../judges/types.ts';
import { judgedHistory } from '../judges/history.ts';
import type { Policy } from './policy.ts';
import type { EnvClient } from './env-client.ts';
import { runEpisode, type EpisodeOutcome, type LocalParser, type RetryPolicy } from './episode.ts';
import { runPool } from './pool.ts';
import { ProgressReporter, type ProgressStream } from './progress.ts';
import { renderReport } from './report.ts';
import { INFRA_REASONS, summarize } from './summary.ts';
import { EpisodeResult, EpisodeRow, type RunSummary } from './types.ts';
import { imageMimeOf } from '../protocol/image.ts';

export interface TokenPrice {
  /** USD per million prompt tokens. */
  inputPerMTok: number;
  /** USD per million completion tokens. */
  outputPerMTok: number;
}

export interface BenchmarkOptions {
  suite: string;
  tasks: Task[];
  env: EnvClient;
  /** A fresh policy per episode (policies keep per-episode history). */
  policy: (task: Task) => Policy;
  /** The first judge is primary: its verdict decides success. Without judges, success = task_completed. */
  judges?: Judge[];
  /** Final environment state for rule judges (offline sites: the session's state dump). */
  judgeState?: (task: Task, sessionId: string) => Promise<unknown>;
  /** Judge episodes that did not end with an answer too (default: they are failures without a verdict). */
  judgeAll?: boolean;
  outDir: string;
  concurrency: number;
  maxSteps: number;
  maxConsecutiveParseFailures?: number;
  episodeTimeoutMs?: number;
  /** Sandbox options for a task (viewport, som, network allow-list, …). */
  sandbox?: (task: Task) => Omit<BrowserCreateInput, 'type'>;
  /** Start URL for a task in a session (offline sites put the session in the URL); default task.start_url. */
  startUrl?: (task: Task, sessionId: string) => string | undefined;
  format?: string;
  parse?: LocalParser;
  retry?: Partial<RetryPolicy>;
  resume?: boolean;
  maxMinutes?: number;
  maxCostUsd?: number;
  price?: TokenPrice;
  keepScreenshots?: boolean;
  progress?: ProgressStream;
  signal?: AbortSignal;
  logger?: Logger;
  runId?: string;
  meta?: { model?: string; policy?: string; judge?: string };
  /** Stored in each episode.json. */
  config?: Record<string, unknown>;
  versions?: Record<string, string>;
}

export interface BenchmarkResult {
  summary: RunSummary;
  summaryPath: string;
  reportPath: string;
}

/** Directory-safe form of a task id (also used in links of the report). */
export function episodeDirName(taskId: string): string {
  const s = taskId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return s.slice(0, 120) || '_';
}

/** A session id accepted by the offline sites ([A-Za-z0-9_-]{1,64}), unique per attempt. */
export function sessionIdFor(taskId: string): string {
  return `${taskId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}_${randomBytes(6).toString('hex')}`;
}

export function costUsd(tokens: { prompt: number; completion: number }, price?: TokenPrice): number | undefined {
  if (!price) return undefined;
  return (tokens.prompt * price.inputPerMTok + tokens.completion * price.outputPerMTok) / 1e6;
}

const RESULTS_DIR = 'results';

/** Steps the recorder marked as no visible change (missed clicks); undefined without a readable recording. */
async function countNoops(episodeDir: string): Promise<number | undefined> {
  const text = await readFile(join(episodeDir, STEPS_FILE), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseStepsJsonl(text, false).steps.filter((s) => s.diff?.noop).length;
}

function rowFrom(task: Task, r: EpisodeResult, verdicts: Verdict[], success: boolean | null, dir: string, resumed: boolean): EpisodeRow {
  const envMs = r.step_timings.filter((t) => t.env > 0).map((t) => t.env);
  return {
    task_id: task.id,
    site: task.site,
    level: task.level,
    question: task.question,
    termination: r.termination,
    steps: r.steps,
    answer: r.answer,
    success,
    verdicts,
    attempts: r.attempts,
    duration_ms: r.duration_ms,
    mean_step_ms: envMs.length ? envMs.reduce((a, b) => a + b, 0) / envMs.length : undefined,
    step_ms: envMs,
    tokens: r.tokens,
    dir,
    resumed,
    parse_failures: r.parse_failures,
  };
}

/**
 * Success of one episode. Infra failures → null (never the model's fault). With judges, the primary (first)
 * verdict decides and judge_error → null (reported apart); an episode that was not judged (no answer) is a
 * failure. Without judges, ending with an answer/terminate counts as success.
 */
export function successFrom(verdicts: Verdict[], r: Pick<EpisodeResult, 'termination'>, haveJudges: boolean): boolean | null {
  if (INFRA_REASONS.has(r.termination.reason)) return null;
  if (!haveJudges) return r.termination.reason === 'task_completed';
  const primary = verdicts[0];
  if (!primary) return false;
  if (primary.outcome === 'judge_error' || primary.outcome === 'unparsed') return null;
  return primary.outcome === 'success';
}

/** What judges see of an episode: answer, action history, screenshots (in memory or recorded), state. */
export async function judgeInput(
  task: Task,
  o: EpisodeOutcome,
  episodeDir: string,
  sessionId: string,
  state?: (task: Task, sessionId: string) => Promise<unknown>,
): Promise<JudgeInput> {
  const shot = (s: { mime: string; base64: string } | undefined, frame: string | undefined): ScreenshotRef | undefined =>
    s ? { bytes: Buffer.from(s.base64, 'base64'), mime: s.mime } : frame ? { path: join(episodeDir, frame), mime: imageMimeOf(frame, 'image/jpeg') } : undefined;
  // The same frames and action texts `grove judge` derives from the recording (judges/history.ts).
  const { frames: screenshots, actions } = judgedHistory(
    shot(o.initial?.screenshot, o.initial?.frame),
    o.trajectory.map((t) => ({
      actions: t.actions.map((action, i) => ({ action, css: t.css?.[i] })),
      parse_error: t.parse_error,
      frame: shot(t.screenshot, t.frame),
    })),
    () => false,
  );
  return {
    task,
    answer: o.result.answer,
    screenshots,
    actions,
    thoughts: o.trajectory.map((t) => t.thought ?? ''),
    episodeDir,
    state: state ? await state(task, sessionId) : undefined,
  };
}

/** A finished earlier episode that resume may reuse, or undefined to (re)run it. */
async function readFinished(outDir: string, task: Task, haveJudges: boolean): Promise<EpisodeRow | undefined> {
  const rel = join('episodes', episodeDirName(task.id));
  let meta: EpisodeMeta;
  try {
    meta = EpisodeMeta.parse(JSON.parse(await readFile(join(outDir, rel, 'episode.json'), 'utf8')));
  } catch {
    return undefined;
  }
  // Aborted episodes (time cap, Ctrl-C) are not finished work: run them again.
  if (meta.status !== 'complete' || !meta.termination || meta.termination.reason === 'aborted') return undefined;
  let r: EpisodeResult | undefined;
  try {
    r = EpisodeResult.parse(JSON.parse(await readFile(join(outDir, RESULTS_DIR, `${episodeDirName(task.id)}.json`), 'utf8')));
  } catch {
    r = undefined;
  }
  const verdicts = meta.verdicts;
  const result: EpisodeResult = r ?? {
    task_id: task.id,
    episode_id: meta.episode_id,
    termination: meta.termination,
    steps: meta.steps,
    answer: meta.answer,
    attempts: 1,
    attempt_failures: [],
    parse_failures: 0,
    started_at: meta.started_at,
    duration_ms: meta.finished_at ? Date.parse(meta.finished_at) - Date.parse(meta.started_at) : 0,
    reset_ms: 0,
    step_timings: [],
    tokens: { prompt: 0, completion: 0 },
  };
  return rowFrom(task, result, verdicts, successFrom(verdicts, result, haveJudges), rel, true);
}

export async function runBenchmark(opts: BenchmarkOptions): Promise<BenchmarkResult> {
  const log = opts.logger ?? silentLogger;
  const runId = opts.runId ?? `run-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const startedAt = new Date();
  const t0 = Date.now();
  await mkdir(join(opts.outDir, 'episodes'), { recursive: true });
  await mkdir(join(opts.outDir, RESULTS_DIR), { recursive: true });

  // Duplicate ids would share a directory: keep the first.
  const seen = new Set<string>();
  const tasks = opts.tasks.filter((t) => {
    const k = episodeDirName(t.id);
    if (seen.has(k)) {
      log.warn({ task: t.id }, 'duplicate task id skipped');
      return false;
    }
    seen.add(k);
    return true;
  });

  const rows = new Map<string, EpisodeRow>();
  const todo: Task[] = [];
  const progress = new ProgressReporter(opts.progress, tasks.length);
  for (const t of tasks) {
    const done = opts.resume ? await readFinished(opts.outDir, t, (opts.judges?.length ?? 0) > 0) : undefined;
    if (done) {
      rows.set(t.id, done);
      progress.skipped();
    } else todo.push(t);
  }

  const ctl = new AbortController();
  // Every running episode listens on this signal.
  setMaxListeners(opts.concurrency + 10, ctl.signal);
  const onAbort = () => ctl.abort(opts.signal?.reason ?? 'aborted');
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  let stoppedEarly: string | undefined;
  const capTimer =
    opts.maxMinutes !== undefined
      ? setTimeout(() => {
          stoppedEarly = `time cap of ${opts.maxMinutes} min reached`;
          ctl.abort(stoppedEarly);
        }, opts.maxMinutes * 60_000)
      : undefined;
  capTimer?.unref();

  const tokens = { prompt: 0, completion: 0 };
  for (const r of rows.values()) {
    tokens.prompt += r.tokens.prompt;
    tokens.completion += r.tokens.completion;
  }
  const overBudget = () => {
    const c = costUsd(tokens, opts.price);
    return opts.maxCostUsd !== undefined && c !== undefined && c >= opts.maxCostUsd;
  };

  const runOne = async (task: Task): Promise<void> => {
    const dirName = episodeDirName(task.id);
    const rel = join('episodes', dirName);
    const dir = join(opts.outDir, rel);
    const sessions: string[] = [];
    progress.episodeStarted();
    let outcome: EpisodeOutcome;
    try {
      outcome = await runEpisode({
        env: opts.env,
        task,
        policy: opts.policy(task),
        maxSteps: opts.maxSteps,
        maxConsecutiveParseFailures: opts.maxConsecutiveParseFailures,
        timeoutMs: opts.episodeTimeoutMs,
        sandbox: opts.sandbox?.(task),
        startUrl: (attempt) => {
          const s = sessionIdFor(task.id);
          sessions[attempt] = s;
          return opts.startUrl ? opts.startUrl(task, s) : task.start_url;
        },
        format: opts.format,
        parse: opts.parse,
        retry: opts.retry,
        keepScreenshots: opts.keepScreenshots,
        signal: ctl.signal,
        logger: log,
        onStep: () => progress.step(),
        recorder: async () => {
          // A restarted attempt replaces the failed attempt's recording.
          await rm(dir, { recursive: true, force: true });
          return EpisodeRecorder.create(dir, {
            episode_id: `${runId}/${dirName}`,
            run_id: runId,
            task,
            config: { suite: opts.suite, max_steps: opts.maxSteps, ...opts.config },
            versions: opts.versions,
          }, { logger: log });
        },
        finalize: async (o) => {
          const judged = !INFRA_REASONS.has(o.result.termination.reason) && (o.result.termination.reason === 'task_completed' || !!opts.judgeAll);
          const verdicts: Verdict[] = [];
          if (judged && opts.judges?.length) {
            let input: JudgeInput | undefined;
            let inputError = '';
            try {
              input = await judgeInput(task, o, dir, sessions[o.result.attempts] ?? '', opts.judgeState);
            } catch (err) {
              inputError = `could not gather the judge input: ${err instanceof Error ? err.message : String(err)}`;
            }
            for (const j of opts.judges) {
              try {
                if (!input) throw new Error(inputError);
                verdicts.push(await j.judge(input));
              } catch (err) {
                verdicts.push({ judge: j.name, outcome: 'judge_error', reasoning: err instanceof Error ? err.message : String(err) });
              }
            }
          }
          const success = successFrom(verdicts, o.result, (opts.judges?.length ?? 0) > 0);
          const reward = verdicts[0]?.score ?? (success === null ? undefined : success ? 1 : 0);
          rows.set(task.id, rowFrom(task, o.result, verdicts, success, rel, false));
          return { verdicts, reward };
        },
      });
    } catch (err) {
      // runEpisode handles env/policy failures itself; this is the recording failing (disk full, …). The run goes on.
      log.error({ err, task: task.id }, 'episode could not be completed');
      const detail = `runner error: ${err instanceof Error ? err.message : String(err)}`;
      const result: EpisodeResult = {
        task_id: task.id, episode_id: `${runId}/${dirName}`, termination: { reason: 'env_error', detail }, steps: 0, attempts: 1,
        attempt_failures: [], parse_failures: 0, started_at: new Date().toISOString(), duration_ms: 0, reset_ms: 0, step_timings: [],
        tokens: { prompt: 0, completion: 0 },
      };
      outcome = { result, trajectory: [] };
      rows.set(task.id, rowFrom(task, result, [], null, rel, false));
    }
    const row = rows.get(task.id) ?? rowFrom(task, outcome.result, [], successFrom([], outcome.result, false), rel, false);
    row.noops = await countNoops(dir);
    rows.set(task.id, row);
    await writeFile(join(opts.outDir, RESULTS_DIR, `${dirName}.json`), JSON.stringify(outcome.result, null, 2)).catch((err: unknown) =>
      log.warn({ err, task: task.id }, 'could not write the episode result file'),
    );
    tokens.prompt += outcome.result.tokens.prompt;
    tokens.completion += outcome.result.tokens.completion;
    progress.episodeFinished(row.termination.reason === 'aborted' ? 'aborted' : row.success === true, `${task.id} ${row.termination.reason}${row.success === true ? ' ok' : ''}`);
  };

  try {
    await runPool({
      concurrency: opts.concurrency,
      items: todo,
      work: runOne,
      shouldStop: () => {
        if (ctl.signal.aborted) {
          stoppedEarly ??= `aborted: ${String(ctl.signal.reason)}`;
          return true;
        }
        if (overBudget()) {
          stoppedEarly ??= `cost cap of $${opts.maxCostUsd} reached`;
          return true;
        }
        return false;
      },
    });
  } finally {
    if (capTimer) clearTimeout(capTimer);
    opts.signal?.removeEventListener('abort', onAbort);
    progress.stop();
  }

  // Rows in task order.
  const ordered = tasks.map((t) => rows.get(t.id)).filter((r): r is EpisodeRow => r !== undefined);
  const finishedAt = new Date();
  const summary = summarize(ordered, {
    run_id: runId,
    suite: opts.suite,
    ...opts.meta,
    started_at: startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    duration_ms: Date.now() - t0,
    total: tasks.length,
    cost_usd: costUsd(tokens, opts.price),
    stopped_early: stoppedEarly,
  });
  const summaryPath = join(opts.outDir, 'summary.json');
  const reportPath = join(opts.outDir, 'report.html');
  await writeFile(summaryPath, JSON.stringify(summary, null, 2));
  await writeFile(reportPath, renderReport(summary));
  return { summary, summaryPath, reportPath };
}
