// Episodes → judge inputs. Reading the three layouts (Grove recordings, WebVoyager and Online-Mind2Web result
// folders) is recording/reader.ts's job (H7); this file only maps an EpisodeView to a JudgeInput.
import { join } from 'node:path';
import type { Suite, Task } from '../protocol/task.ts';
import type { EpisodeView } from '../recording/reader.ts';
import { mimeOf } from './base.ts';
import { judgedHistory, stepText } from './history.ts';
import type { JudgeInput, ScreenshotRef } from './types.ts';

/**
 * Frames oldest first and the action history, as judges get them (judges/history.ts). Grove recordings: the
 * initial frame, then the frame after each step, without the final answer step. Foreign layouts keep what their
 * own harness judges: WebVoyager every screenshotN, Online-Mind2Web v1 every trajectory image and action, v2 every
 * step's screenshot and every action but the last (run.py's steps[:-1]).
 */
export function episodeHistory(view: EpisodeView): { frames: string[]; actions: string[] } {
  if (view.layout === 'grove') return judgedHistory(view.initial.frame, view.steps);
  const frames: string[] = [];
  for (const f of [view.initial.frame, ...view.steps.map((s) => s.frame)]) if (f && frames.at(-1) !== f) frames.push(f);
  const steps = view.layout === 'online-mind2web' && view.schema === 'v2' ? view.steps.slice(0, -1) : view.steps;
  return { frames, actions: steps.map(stepText) };
}

/**
 * The Task for an episode: the one from the task file when given (it carries references, level and DeepShop
 * dimensions), else the recording's own full Task (Grove), else one built from what the folder says.
 */
function episodeTask(view: EpisodeView, suite: Suite, tasks?: Map<string, Task>): Task {
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
  const history = episodeHistory(view);
  const screenshots: ScreenshotRef[] = history.frames.map((f) => {
    const path = join(view.dir, f);
    return { path, mime: mimeOf(path) };
  });
  const thoughts = view.steps.map((s) => s.thought ?? '');
  return {
    task: episodeTask(view, opts.suite, opts.tasks),
    answer: view.meta.answer,
    screenshots,
    actions: history.actions,
    thoughts: thoughts.some((t) => t !== '') ? thoughts : undefined,
    episodeDir: view.dir,
    recordDir: opts.recordDir,
  };
}
