// The benchmark runner: a worker pool of episodes over a task list, each recorded under
// <out>/episodes/<task>/, judged, and aggregated into <out>/summary.json and <out>/report.html.
// Resume skips tasks whose recording is complete; time and cost caps stop the run early.
// Its parts: run-control.ts (abort, time and cost caps), episode-judging.ts (judges, success), episode-store.ts
// (directories, result files, resume).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserCreateInput } from '../protocol/sandbox.ts';
import type { Task } from '../protocol/task.ts';
import { EpisodeRecorder } from '../recording/recorder.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import type { Judge } from '../judges/types.ts';
import type { Policy } from './policy.ts';
import type { EnvClient } from './env-client.ts';
import { runEpisode, type EpisodeOutcome, type LocalParser, type RetryPolicy } from './episode.ts';
import { judgeEpisode, successFrom } from './episode-judging.ts';
import { countNoops, episodeDirName, readFinished, RESULTS_DIR, rowFrom, runnerErrorResult, sessionIdFor, writeEpisodeResult } from './episode-store.ts';
import { runPool } from './pool.ts';
import { ProgressReporter, type ProgressStream } from './progress.ts';
import { renderReport } from './report.ts';
import { RunControl, type TokenPrice } from './run-control.ts';
import { summarize } from './summary.ts';
import type { EpisodeRow, RunSummary } from './types.ts';

export { costUsd, type TokenPrice } from './run-control.ts';
export { judgeInput, successFrom } from './episode-judging.ts';
export { episodeDirName, sessionIdFor } from './episode-store.ts';

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

  const control = new RunControl(opts);
  for (const r of rows.values()) control.addTokens(r.tokens);

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
        signal: control.signal,
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
          const verdicts = await judgeEpisode(task, o, dir, sessions[o.result.attempts] ?? '', opts);
          const success = successFrom(verdicts, o.result, (opts.judges?.length ?? 0) > 0);
          const reward = verdicts[0]?.score ?? (success === null ? undefined : success ? 1 : 0);
          rows.set(task.id, rowFrom(task, o.result, verdicts, success, rel, false));
          return { verdicts, reward };
        },
      });
    } catch (err) {
      // runEpisode handles env/policy failures itself; this is the recording failing (disk full, …). The run goes on.
      log.error({ err, task: task.id }, 'episode could not be completed');
      const result = runnerErrorResult(task.id, `${runId}/${dirName}`, err);
      outcome = { result, trajectory: [] };
      rows.set(task.id, rowFrom(task, result, [], null, rel, false));
    }
    const row = rows.get(task.id) ?? rowFrom(task, outcome.result, [], successFrom([], outcome.result, false), rel, false);
    row.noops = await countNoops(dir);
    rows.set(task.id, row);
    await writeEpisodeResult(opts.outDir, dirName, outcome.result).catch((err: unknown) =>
      log.warn({ err, task: task.id }, 'could not write the episode result file'),
    );
    control.addTokens(outcome.result.tokens);
    progress.episodeFinished(row.termination.reason === 'aborted' ? 'aborted' : row.success === true, `${task.id} ${row.termination.reason}${row.success === true ? ' ok' : ''}`);
  };

  try {
    await runPool({
      concurrency: opts.concurrency,
      items: todo,
      work: runOne,
      shouldStop: () => control.shouldStop(),
    });
  } finally {
    control.dispose();
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
    cost_usd: control.cost(),
    stopped_early: control.stoppedEarly,
  });
  const summaryPath = join(opts.outDir, 'summary.json');
  const reportPath = join(opts.outDir, 'report.html');
  await writeFile(summaryPath, JSON.stringify(summary, null, 2));
  await writeFile(reportPath, renderReport(summary));
  return { summary, summaryPath, reportPath };
}
