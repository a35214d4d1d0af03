// Episodes → judge inputs. Reading the three layouts (Grove recordings, WebVoyager and Online-Mind2Web result
// folders) is recording/reader.ts's job (H7); this file only maps an EpisodeView to a JudgeInput.
import { join } from 'node:path';
import type { Suite, Task } from '../protocol/task.ts';
import { describeAction } from '../recording/action-text.ts';
import type { EpisodeView } from '../recording/reader.ts';
import { mimeOf } from './base.ts';
import type { JudgeInput, ScreenshotRef } from './types.ts';

/** Frames oldest first: the initial frame, then the frame after each step (repeats of the same file dropped). */
export function episodeFrames(view: EpisodeView): string[] {
  const out: string[] = [];
  const push = (f?: string) => {
    if (f && out[out.length - 1] !== f) out.push(f);
  };
  push(view.initial.frame);
  for (const s of view.steps) push(s.frame);
  return out;
}

/** The action history as text, one entry per step. */
export function episodeActions(view: EpisodeView): string[] {
  let steps = view.steps;
  // Online-Mind2Web v2: the last step is the agent's answer/complete action, which run.py drops from the history.
  if (view.layout === 'online-mind2web' && view.schema === 'v2') steps = steps.slice(0, -1);
  return steps.map((s) => {
    if (s.action_text) return s.action_text;
    if (s.actions.length) return s.actions.map((a) => describeAction(a.action, a.css ?? undefined)).join('; ');
    return s.parse_error ? `(unparsed: ${s.parse_error})` : '(no action)';
  });
}

/**
 * The Task for an episode: the one from the task file when given (it carries references, level and DeepShop
 * dimensions), else the recording's own full Task (Grove), else one built from what the folder says.
 */
export function episodeTask(view: EpisodeView, suite: Suite, tasks?: Map<string, Task>): Task {
  const fromFile = tasks?.get(view.task.id);
  if (fromFile) return fromFile;
  if (view.meta.task) return view.meta.task;
  return {
    id: view.task.id,
    suite,
    site: view.task.site,
    question: view.task.question,
    start_url: view.task.start_url,
    level: view.task.level,
    extra: {},
    flags: [],
  };
}

export function judgeInputFromEpisode(
  view: EpisodeView,
  opts: { suite: Suite; tasks?: Map<string, Task>; recordDir?: string },
): JudgeInput {
  const screenshots: ScreenshotRef[] = episodeFrames(view).map((f) => {
    const path = join(view.dir, f);
    return { path, mime: mimeOf(path) };
  });
  const thoughts = view.steps.map((s) => s.thought ?? '');
  return {
    task: episodeTask(view, opts.suite, opts.tasks),
    answer: view.meta.answer,
    screenshots,
    actions: episodeActions(view),
    thoughts: thoughts.some((t) => t !== '') ? thoughts : undefined,
    episodeDir: view.dir,
    recordDir: opts.recordDir,
  };
}
