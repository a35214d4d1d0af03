// The normalised view of one episode the readers produce, whatever wrote it (Grove, WebVoyager, Online-Mind2Web),
// and the one-row summary a runs list needs. Frame convention: `initial.frame` is what the agent saw first;
// `steps[i].frame` the screen after step i's actions; `steps[i].before_frame` the screen step i was decided on.
// Frame paths are relative to the episode directory.
import type { EpisodeMeta, StepRecord } from '../../protocol/recording.ts';
import type { InitialObservation } from '../recorder.ts';

export type Layout = 'grove' | 'webvoyager' | 'online-mind2web';

export interface StepView extends StepRecord {
  /** The frame the step was decided on (previous step's frame, or the initial frame). */
  before_frame?: string;
  /** The action as a foreign harness wrote it (WebVoyager "Click [5]", Online-Mind2Web "button -> CLICK"). */
  action_text?: string;
}

export interface TaskView {
  id: string;
  question: string;
  site: string;
  suite?: string;
  level?: string;
  start_url?: string;
}

export interface EpisodeView {
  /** Stable key: the directory relative to the root it was found under ("." for the root itself). */
  id: string;
  dir: string;
  layout: Layout;
  /** For foreign layouts a synthesised EpisodeMeta; `status` is the effective status (see recorder.ts). */
  meta: EpisodeMeta;
  task: TaskView;
  initial: InitialObservation & { frame?: string };
  steps: StepView[];
  /** Lines of steps.jsonl that could not be parsed (a torn last line after a crash). */
  damaged_lines: number;
  /** Online-Mind2Web schema of the source folder. */
  schema?: 'v1' | 'v2';
}

export type VerdictSummary = 'success' | 'failure' | 'judge_error' | 'mixed' | 'none';

/** One row of a runs list: everything the filters and the list need, without steps. */
export interface EpisodeSummary {
  id: string;
  layout: Layout;
  episode_id: string;
  run_id?: string;
  task_id: string;
  suite?: string;
  site: string;
  level?: string;
  question: string;
  status: EpisodeMeta['status'];
  steps: number;
  termination?: string;
  reward?: number;
  /** reward > 0 when there is a reward, else the verdicts' agreement, else null (unknown). */
  success: boolean | null;
  verdict: VerdictSummary;
  started_at?: string;
  duration_ms?: number;
  noops: number;
  errors: number;
  answer?: string;
  /** First frame worth showing as a thumbnail (last frame). */
  thumb?: string;
}
