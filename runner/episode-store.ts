// A benchmark run's episodes on disk: directory and session names, the result file of each episode
// (<out>/results/<task>.json), the summary row of an episode, and reading back finished episodes for resume.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EpisodeMeta } from '../protocol/recording.ts';
import type { Task, Verdict } from '../protocol/task.ts';
import { STEPS_FILE } from '../recording/recorder.ts';
import { parseStepsJsonl } from '../recording/reader.ts';
import { successFrom } from './episode-judging.ts';
import { EpisodeResult, type EpisodeRow } from './types.ts';

export const RESULTS_DIR = 'results';

/** Directory-safe form of a task id (also used in links of the report). */
export function episodeDirName(taskId: string): string {
  const s = taskId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return s.slice(0, 120) || '_';
}

/** A session id accepted by the offline sites ([A-Za-z0-9_-]{1,64}), unique per attempt. */
export function sessionIdFor(taskId: string): string {
  return `${taskId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}_${randomBytes(6).toString('hex')}`;
}

/** Steps the recorder marked as no visible change (missed clicks); undefined without a readable recording. */
export async function countNoops(episodeDir: string): Promise<number | undefined> {
  const text = await readFile(join(episodeDir, STEPS_FILE), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseStepsJsonl(text, false).steps.filter((s) => s.diff?.noop).length;
}

/** Writes <out>/results/<dirName>.json. */
export function writeEpisodeResult(outDir: string, dirName: string, result: EpisodeResult): Promise<void> {
  return writeFile(join(outDir, RESULTS_DIR, `${dirName}.json`), JSON.stringify(result, null, 2));
}

/** The result of an episode the runner itself could not complete (the recording failing: disk full, …). */
export function runnerErrorResult(taskId: string, episodeId: string, err: unknown): EpisodeResult {
  const detail = `runner error: ${err instanceof Error ? err.message : String(err)}`;
  return {
    task_id: taskId, episode_id: episodeId, termination: { reason: 'env_error', detail }, steps: 0, attempts: 1,
    attempt_failures: [], parse_failures: 0, started_at: new Date().toISOString(), duration_ms: 0, reset_ms: 0, step_timings: [],
    tokens: { prompt: 0, completion: 0 },
  };
}

export function rowFrom(task: Task, r: EpisodeResult, verdicts: Verdict[], success: boolean | null, dir: string, resumed: boolean): EpisodeRow {
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

/** A finished earlier episode that resume may reuse, or undefined to (re)run it. */
export async function readFinished(outDir: string, task: Task, haveJudges: boolean): Promise<EpisodeRow | undefined> {
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
