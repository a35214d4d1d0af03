// Recording as a step hook (sandbox/step-hook.ts): the one place a step record and frame 0 are built, used by
// the server (a `record: true` sandbox: server/recording.ts attaches a RecordingHook to the registry's hooks) and
// by the runner (its episode loop runs the same hook for the steps it takes over HTTP).
import { imageExtOf } from '../protocol/image.ts';
import type { Observation, Screenshot, Tab } from '../protocol/observation.ts';
import type { StepRecord } from '../protocol/recording.ts';
import { agentTermination, type Termination } from '../protocol/task.ts';
import type { EpisodeEndInfo, StepContext, StepHook } from '../sandbox/step-hook.ts';
import type { Sandbox } from '../sandbox/types.ts';
import type { Frame, InitialObservation } from './recorder.ts';

/** What a recording hook drives (recorder.ts EpisodeRecorder fits). */
export interface EpisodeRecorderLike {
  recordInitial(frame?: Frame, obs?: InitialObservation): Promise<void>;
  recordStep(rec: Omit<StepRecord, 'frame' | 'diff'>, frame?: Frame): Promise<unknown>;
  finish(end: EpisodeEndInfo): Promise<void>;
  /** A recording several servers append to (shared-steps.ts): its last step on storage, whoever took it. */
  lastStep?(): Promise<Pick<StepRecord, 'actions'> | null | undefined>;
}

/** The state an episode starts from: an observation, or the parts of one a sandbox gives without taking one. */
export interface InitialState {
  url: string;
  title: string;
  tabs: Tab[];
  screenshot?: Omit<Screenshot, 'base64'> & { base64?: string };
  /** The image bytes when the caller has them raw (else `screenshot.base64` is decoded). */
  bytes?: Buffer;
}

const NO_TIMINGS = { action: 0, settle: 0, capture: 0, encode: 0, total: 0 };

/** The frame an observation carries (none without screenshot bytes). */
export function frameOf(o: { screenshot?: { mime: string; base64?: string } }, bytes?: Buffer): Frame | undefined {
  const s = o.screenshot;
  if (!s) return undefined;
  if (bytes) return { bytes, ext: imageExtOf(s.mime) };
  return s.base64 ? { bytes: Buffer.from(s.base64, 'base64'), ext: imageExtOf(s.mime) } : undefined;
}

const shotMeta = (s: Omit<Screenshot, 'base64'>) => ({ mime: s.mime, width: s.width, height: s.height, scale: s.scale_x, scale_y: s.scale_y });

/** Frame 0 and its metadata (initial.json). */
function buildInitial(s: InitialState): { frame?: Frame; obs: InitialObservation } {
  return {
    frame: frameOf(s, s.bytes),
    obs: { url: s.url, title: s.title, tabs: s.tabs, ...(s.screenshot ? { screenshot: { ...shotMeta(s.screenshot), scale_x: s.screenshot.scale_x } } : {}) },
  };
}

/** The one builder of a step record (steps.jsonl line) and its frame, whoever took the step. */
function buildStepRecord(step: number, ctx: StepContext, ts = new Date()): { record: Omit<StepRecord, 'frame' | 'diff'>; frame?: Frame } {
  const o: Observation = ctx.observation;
  const fresh = !ctx.stale;
  const src = ctx.source;
  const record: Omit<StepRecord, 'frame' | 'diff'> = {
    step,
    ts: ts.toISOString(),
    ...(src
      ? {
          model_output: src.model_output,
          ...(src.format === undefined ? {} : { format: src.format }),
          ...(src.thought === undefined ? {} : { thought: src.thought }),
          ...(src.parse_error === undefined ? {} : { parse_error: src.parse_error }),
        }
      : {}),
    actions: ctx.actions,
    url: o.url,
    title: o.title,
    tabs: o.tabs,
    events: fresh ? o.events : [],
    last_action_error: fresh ? o.last_action_error : null,
    timings: fresh ? o.timings : NO_TIMINGS,
    ...(fresh && o.screenshot ? { screenshot: shotMeta(o.screenshot) } : {}),
    ...(ctx.policy ? { policy: ctx.policy } : {}),
  };
  return { record, frame: fresh ? frameOf(o) : undefined };
}

/** The end a terminal step (answer / terminate) gives an episode; null for any other step. */
function terminalOf(rec: Pick<StepRecord, 'actions'> | null): { answer?: string; termination: Termination } | null {
  const actions = rec?.actions.map((a) => a.action) ?? [];
  const end = actions.find((a) => a.action === 'answer' || a.action === 'terminate');
  if (!end) return null;
  const termination = agentTermination(actions);
  return end.action === 'answer' ? { answer: end.text, termination } : { termination };
}

/**
 * Records one episode through a recorder: frame 0 (`begin`, or `onReady` with `initialOf` for a sandbox), one
 * step record per step, the episode end. Steps are numbered in the order onStep is called, from 1.
 */
export class RecordingHook implements StepHook {
  private rec: EpisodeRecorderLike | null = null;
  private opening: Promise<EpisodeRecorderLike> | null = null;
  private starting: Promise<void> | null = null;
  private n = 0;
  private terminal: { answer?: string; termination: Termination } | null = null;
  private ended = false;

  constructor(
    private readonly recorder: () => Promise<EpisodeRecorderLike>,
    private readonly initialOf?: (sandbox: Sandbox) => Promise<InitialState>,
  ) {}

  /** Opens the recording (once); begin() does it too. */
  open(): Promise<EpisodeRecorderLike> {
    this.opening ??= this.recorder().then((r) => (this.rec = r));
    return this.opening;
  }

  /** Opens the recording and writes frame 0. */
  begin(initial: InitialState | (() => Promise<InitialState>)): Promise<void> {
    this.starting = (async () => {
      const state = typeof initial === 'function' ? await initial() : initial;
      const rec = await this.open();
      const { frame, obs } = buildInitial(state);
      await rec.recordInitial(frame, obs);
    })();
    return this.starting;
  }

  onReady(sandbox: Sandbox): Promise<void> {
    const read = this.initialOf;
    if (!read) return Promise.reject(new Error('this recording hook does not know how to read a sandbox'));
    return this.begin(() => read(sandbox));
  }

  /** Numbered at once (callers may not wait); the recorder keeps its writes in order. */
  onStep(ctx: StepContext): Promise<void> {
    const step = ++this.n;
    if (ctx.done) {
      // terminate(failure) is the agent giving up, not a completion.
      const termination = agentTermination(ctx.actions.map((a) => a.action));
      this.terminal = ctx.answer === undefined ? { termination } : { answer: ctx.answer, termination };
    }
    const { record, frame } = buildStepRecord(step, ctx);
    if (this.rec) return this.rec.recordStep(record, frame).then(() => undefined);
    // A recording joined from another server (open() called at attach) may still be opening; steps keep their order.
    if (!this.opening) return Promise.reject(new Error('step recorded before the recording was opened'));
    return this.opening.then((rec) => rec.recordStep(record, frame)).then(() => undefined);
  }

  /** Finishes the recording (once); without an end given (a closed sandbox), a terminal step ends it (task_completed, or agent_gave_up for terminate(failure)). */
  async onEnd(end?: EpisodeEndInfo): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    // A frame 0 still being written must finish (or fail) before the episode is closed.
    await this.starting?.catch(() => undefined);
    const rec = this.rec ?? (this.opening ? await this.opening.catch(() => null) : null);
    if (!rec) return;
    // Shared by several servers: the episode ends as its last step on storage says, whoever served it.
    const stored = await rec.lastStep?.();
    const t = stored === undefined ? this.terminal : terminalOf(stored);
    await rec.finish(
      end ?? {
        termination: t ? t.termination : { reason: 'aborted', detail: 'the sandbox was closed before a terminal action' },
        ...(t?.answer === undefined ? {} : { answer: t.answer }),
      },
    );
  }
}
