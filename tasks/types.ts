// Loader contract shared by every suite. A loader turns raw rows into normalised Tasks (protocol/task.ts);
// a row that cannot be used becomes a LoadIssue (where + why), never an exception.
import type { Suite, Task } from '../protocol/task.ts';

export interface LoadIssue {
  /** "line 12" (JSONL) or "index 7" (JSON array). */
  where: string;
  reason: string;
  /** The row's id when it had one. */
  id?: string;
}

export type LoadEvent = { kind: 'task'; task: Task } | { kind: 'issue'; issue: LoadIssue };

export interface LoadOptions {
  /**
   * WebVoyager: path of reference_answer.json. Default: the file of that name beside the task file, when
   * present. `false` disables the join.
   */
  references?: string | false;
}

/** One definition object per suite: name, description, and a row converter. */
export interface SuiteLoader {
  suite: Suite;
  description: string;
  /** Convert one parsed row. Return a Task, or a string saying why the row cannot be used. */
  convert(value: unknown, where: string, ctx: LoaderContext): Task | string;
  /** Optional per-file setup (e.g. reading WebVoyager reference answers). */
  prepare?(file: string, opts: LoadOptions): Promise<LoaderContext>;
}

/** Per-file state a loader may keep (reference answers, ids seen so far). */
export interface LoaderContext {
  seenIds: Map<string, number>;
  [key: string]: unknown;
}
