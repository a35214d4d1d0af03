// Task loading entry points: one registry of suite loaders, a streaming reader, filters.
import type { Suite, Task } from '../protocol/task.ts';
import { clawLoader } from './claw.ts';
import { deepshopLoader } from './deepshop.ts';
import { onlineMind2WebLoader } from './online-mind2web.ts';
import { orchardGuiLoader } from './orchard-gui.ts';
import { readRows, TaskFileError } from './read.ts';
import { sweBenchLoader } from './swe-bench.ts';
import type { LoadEvent, LoadIssue, LoadOptions, SuiteLoader } from './types.ts';
import { webvoyagerLoader } from './webvoyager.ts';

export { TaskFileError } from './read.ts';
export type { LoadEvent, LoadOptions, SuiteLoader } from './types.ts';
export { presentDimensions } from './deepshop.ts';

export const LOADERS: Partial<Record<Suite, SuiteLoader>> = {
  webvoyager: webvoyagerLoader,
  'online-mind2web': onlineMind2WebLoader,
  deepshop: deepshopLoader,
  'swe-bench': sweBenchLoader,
  claw: clawLoader,
  'orchard-gui': orchardGuiLoader,
};

function loaderFor(suite: string): SuiteLoader | undefined {
  return (LOADERS as Record<string, SuiteLoader | undefined>)[suite];
}

/**
 * Stream a task file: yields each usable row as a Task and each unusable one as an issue, in file order.
 * Throws TaskFileError only when the file itself cannot be read (missing, not JSON, wrong shape).
 */
export async function* streamTasks(suite: Suite, file: string, opts: LoadOptions = {}): AsyncGenerator<LoadEvent> {
  const loader = loaderFor(suite);
  if (!loader) throw new Error(`no task loader for suite "${suite}" (known: ${Object.keys(LOADERS).join(', ')})`);
  const ctx = loader.prepare ? await loader.prepare(file, opts) : { seenIds: new Map<string, number>() };
  for await (const row of readRows(file)) {
    if ('error' in row) {
      yield { kind: 'issue', issue: { where: row.where, reason: row.error } };
      continue;
    }
    const out = loader.convert(row.value, row.where, ctx);
    if (typeof out === 'string') {
      const v = row.value as Record<string, unknown> | null;
      const id = v && typeof v === 'object' ? (v.id ?? v.task_id ?? v.instance_id) : undefined;
      yield { kind: 'issue', issue: { where: row.where, reason: out, id: typeof id === 'string' ? id : undefined } };
    } else yield { kind: 'task', task: out };
  }
}

export interface TaskFilter {
  /** Site names (case-insensitive). */
  site?: string[];
  level?: string[];
  ids?: string[];
  limit?: number;
}

export function matches(task: Task, f: TaskFilter): boolean {
  // Sites compare case-insensitively and without a leading "www." (Online-Mind2Web sites are host names).
  const bare = (s: string) => s.toLowerCase().replace(/^www\./, '');
  if (f.site?.length && !f.site.some((s) => bare(s) === bare(task.site))) return false;
  if (f.level?.length && !f.level.some((l) => l.toLowerCase() === (task.level ?? '').toLowerCase())) return false;
  if (f.ids?.length && !f.ids.includes(task.id)) return false;
  return true;
}

export interface LoadResult {
  tasks: Task[];
  issues: LoadIssue[];
  /** Rows read (usable or not). */
  rows: number;
  /** Usable tasks before filtering. */
  usable: number;
  flagged: number;
}

/** Load a whole file (optionally filtered). */
export async function loadTasks(suite: Suite, file: string, opts: LoadOptions & { filter?: TaskFilter } = {}): Promise<LoadResult> {
  const res: LoadResult = { tasks: [], issues: [], rows: 0, usable: 0, flagged: 0 };
  const f = opts.filter ?? {};
  for await (const ev of streamTasks(suite, file, opts)) {
    res.rows++;
    if (ev.kind === 'issue') {
      res.issues.push(ev.issue);
      continue;
    }
    res.usable++;
    if (ev.task.flags.length) res.flagged++;
    if (matches(ev.task, f) && (f.limit === undefined || res.tasks.length < f.limit)) res.tasks.push(ev.task);
  }
  if (res.rows > 0 && res.usable === 0) {
    // Not one row fits: the file is for another suite or of another shape, which is a file-level error.
    const first = res.issues[0];
    throw new TaskFileError('wrong_shape', file, `none of its ${res.rows} rows is a ${suite} task (${first.where}: ${first.reason})`);
  }
  return res;
}
