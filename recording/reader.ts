// Reads episode directories into one normalised view: Grove recordings (protocol/recording.ts), WebVoyager
// result folders (task<id>/interact_messages.json + screenshotN.png) and Online-Mind2Web result folders
// (<task_id>/result.json + trajectory/*, schema v1 or v2). Used by the viewer, the exporters and the judges.
//
// The view and its frame convention: read/view.ts; one reader per layout in read/; this module is their entry.
import { basename } from 'node:path';
import { detectLayout, findEpisodes } from './read/layout.ts';
import { readGrove } from './read/grove.ts';
import { readWebVoyager } from './read/webvoyager.ts';
import { readOnlineMind2Web } from './read/online-mind2web.ts';
import { judgeRecordDir, recordVerdicts } from './read/judge-records.ts';
import type { EpisodeView } from './read/view.ts';

export type * from './read/view.ts';
export { detectLayout, findEpisodes, type FoundEpisode } from './read/layout.ts';
export { parseStepsJsonl } from './read/grove.ts';
export { webVoyagerAnswer } from './read/webvoyager.ts';
export { stepErrorKind, summarise } from './read/summary.ts';
export { modelActions } from './read/step-notes.ts';
export { judgeRecordDir } from './read/judge-records.ts';

export interface ReadOptions {
  /**
   * Validate every steps.jsonl line against StepRecord (default true). Indexes that only summarise thousands of
   * episodes turn it off: lines are then only JSON-parsed and checked for a numeric `step`.
   */
  validate?: boolean;
  /**
   * Output folders of `grove judge --out` whose records hold verdicts of this episode (`<out>/records/<id>/`):
   * added to the episode's verdicts, for any layout (WebVoyager and Online-Mind2Web results are judged there).
   */
  judgeDirs?: string[];
}

export async function readEpisode(dir: string, id = basename(dir), opts: ReadOptions = {}): Promise<EpisodeView> {
  const view = await readLayout(dir, id, opts);
  for (const out of opts.judgeDirs ?? []) {
    const more = await recordVerdicts(judgeRecordDir(out, id), view.meta.verdicts);
    if (more.length) view.meta = { ...view.meta, verdicts: [...view.meta.verdicts, ...more] };
  }
  return view;
}

async function readLayout(dir: string, id: string, opts: ReadOptions): Promise<EpisodeView> {
  const layout = await detectLayout(dir);
  switch (layout) {
    case 'grove':
      return readGrove(dir, id, opts.validate ?? true);
    case 'webvoyager':
      return readWebVoyager(dir, id);
    case 'online-mind2web':
      return readOnlineMind2Web(dir, id);
    default:
      throw new Error(
        `${dir} is not an episode directory: expected episode.json (Grove), interact_messages.json (WebVoyager) or result.json + trajectory/ (Online-Mind2Web)`,
      );
  }
}

/** Reads every episode under `root` (errors are returned, not thrown, so one broken folder does not hide the rest). */
export async function readAll(
  root: string,
  opts: { maxDepth?: number; concurrency?: number } & ReadOptions = {},
): Promise<{ episodes: EpisodeView[]; errors: { id: string; error: string }[] }> {
  const found = await findEpisodes(root, opts.maxDepth);
  const episodes: EpisodeView[] = [];
  const errors: { id: string; error: string }[] = [];
  let i = 0;
  const worker = async () => {
    while (i < found.length) {
      const f = found[i++];
      try {
        episodes.push(await readEpisode(f.dir, f.id, opts));
      } catch (e) {
        errors.push({ id: f.id, error: e instanceof Error ? e.message : String(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, worker));
  episodes.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { episodes, errors };
}
