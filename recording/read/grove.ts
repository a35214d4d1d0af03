// Grove's own recordings (protocol/recording.ts): episode.json, steps.jsonl (a torn last line is counted, not fatal),
// initial.json, and the verdicts `grove judge` wrote beside the episode.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EpisodeMeta, StepRecord } from '../../protocol/recording.ts';
import type { Task } from '../../protocol/task.ts';
import { EPISODE_FILE, effectiveStatus, INITIAL_FILE, STEPS_FILE, type InitialObservation } from '../recorder.ts';
import { readJson, withBeforeFrames } from './common.ts';
import { recordVerdicts } from './judge-records.ts';
import type { EpisodeView, TaskView } from './view.ts';

/** Parses steps.jsonl text, skipping (and counting) lines that do not parse, e.g. a line torn by a crash. */
export function parseStepsJsonl(text: string, validate = true): { steps: StepRecord[]; damaged: number } {
  const steps: StepRecord[] = [];
  let damaged = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const raw = JSON.parse(line) as StepRecord;
      if (!validate) {
        if (typeof raw?.step === 'number' && Array.isArray(raw.actions)) steps.push(raw);
        else damaged++;
        continue;
      }
      const r = StepRecord.safeParse(raw);
      if (r.success) steps.push(r.data);
      else damaged++;
    } catch {
      damaged++;
    }
  }
  return { steps, damaged };
}

export async function readGrove(dir: string, id: string, validate: boolean): Promise<EpisodeView> {
  const meta = EpisodeMeta.parse(await readJson(join(dir, EPISODE_FILE)));
  const text = await readFile(join(dir, STEPS_FILE), 'utf8').catch(() => '');
  const { steps, damaged } = parseStepsJsonl(text, validate);
  // Servers recording one episode at once (recorder.ts `shared`) may append claimed steps out of order.
  steps.sort((x, y) => x.step - y.step);
  const initial = ((await readJson(join(dir, INITIAL_FILE)).catch(() => ({}))) ?? {}) as InitialObservation;
  const status = await effectiveStatus(dir, meta);
  const views = withBeforeFrames(steps, meta.initial_frame);
  const verdicts = [...meta.verdicts, ...(await recordVerdicts(join(dir, 'judge'), meta.verdicts))];
  return {
    id,
    dir,
    layout: 'grove',
    meta: { ...meta, status, verdicts, steps: Math.max(meta.steps, steps.at(-1)?.step ?? 0) },
    task: taskView(meta.task, meta.episode_id),
    initial: { ...initial, frame: meta.initial_frame },
    steps: views,
    damaged_lines: damaged,
  };
}

function taskView(task: Task | undefined, fallbackId: string): TaskView {
  if (!task) return { id: fallbackId, question: '', site: '' };
  return {
    id: task.id,
    question: task.question,
    site: task.site,
    suite: task.suite,
    level: task.level,
    start_url: task.start_url,
  };
}
