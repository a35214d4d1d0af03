// Pieces every reader shares: JSON files, before-frames from the frame sequence, and the step and meta records a
// foreign layout (WebVoyager, Online-Mind2Web) is synthesised into.
import { readdir, readFile } from 'node:fs/promises';
import { EpisodeMeta, type StepRecord } from '../../protocol/recording.ts';
import type { ResolvedAction } from '../../protocol/observation.ts';
import type { StepView } from './view.ts';

export async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8'));
}

export function withBeforeFrames(steps: StepRecord[], initialFrame?: string): StepView[] {
  let prev = initialFrame;
  return steps.map((s) => {
    const v: StepView = { ...s, before_frame: prev };
    if (s.frame) prev = s.frame;
    return v;
  });
}

const EMPTY_TIMINGS = { action: 0, settle: 0, capture: 0, encode: 0, total: 0 };

export function foreignStep(step: number, fields: Partial<StepView>): StepView {
  return {
    step,
    ts: '',
    actions: [],
    url: '',
    title: '',
    tabs: [],
    events: [],
    last_action_error: null,
    timings: EMPTY_TIMINGS,
    ...fields,
  };
}

/** A foreign action as a resolved one; page-pixel coordinates (css_px) double as the overlay's position. */
export function resolved(a: ResolvedAction['action'] | undefined): ResolvedAction[] {
  if (!a) return [];
  const at = 'x' in a && 'y' in a && typeof a.x === 'number' && typeof a.y === 'number' && (!('space' in a) || a.space === 'css_px') ? { css: { x: a.x, y: a.y } } : {};
  return [{ action: a, error: null, ms: 0, ...at }];
}

export function foreignMeta(fields: Partial<EpisodeMeta> & Pick<EpisodeMeta, 'episode_id'>): EpisodeMeta {
  return EpisodeMeta.parse({ started_at: '', status: 'complete', ...fields });
}

export async function numberedFiles(dir: string, re: RegExp): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = re.exec(name);
    if (m) out.set(Number(m[1]), name);
  }
  return out;
}
