// Writes one episode directory (protocol/recording.ts): episode.json, steps.jsonl, frames/NNNN.<ext>.
//
// Crash safety: each step's frame is written first, then its steps.jsonl line is appended and fsynced, so a
// line never points at a missing frame and every finished step survives a kill. episode.json is replaced
// atomically (tmp + fsync + rename). While the episode is open, `.writer.json` names the writing process
// (pid + hostname); finish() removes it. Readers (reader.ts `effectiveStatus`) report a `running` episode as
// `incomplete` when its writer is gone: when the shared state's leader found its server gone (writer.ts), on the
// same host by checking the pid, on another host when nothing was written for `staleMs`. Recorded by several
// servers at once (option `shared`: kubernetes replicas on one volume), step numbers are claimed on storage
// (shared-steps.ts) and one server claims the end (shared-end.ts).
import { open, mkdir, rm, stat, readFile, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EpisodeMeta, StepRecord } from '../protocol/recording.ts';
import type { Screenshot, Tab } from '../protocol/observation.ts';
import type { Termination, Verdict } from '../protocol/task.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { decodeSmall, expectsVisibleChange, NOOP_THRESHOLD, type RawFrame } from './diff.ts';
import { changedShareOffThread } from './diff-thread.ts';
import { writeFileAtomic, writeFileSynced } from './files.ts';
import { claimEnd, settleSteps } from './shared-end.ts';
import { CLAIMS_DIR, claimedStep, claimStep, commitStep, lastStepOnDisk, latestStep } from './shared-steps.ts';
import { lastWrite, readWriter, WRITER_FILE, writerGone, writerInfo } from './writer.ts';

export const EPISODE_FILE = 'episode.json';
export const STEPS_FILE = 'steps.jsonl';
export { WRITER_FILE } from './writer.ts';
/** Observation metadata of frame 0 (after reset), kept beside episode.json. */
export const INITIAL_FILE = 'initial.json';

type FrameExt = 'jpg' | 'png' | 'webp';
export interface Frame {
  bytes: Buffer;
  ext: FrameExt | string;
}

/** What the caller knows when an episode starts; the recorder fills status, steps, verdicts, started_at. */
export type EpisodeStart = Pick<EpisodeMeta, 'episode_id'> &
  Partial<Pick<EpisodeMeta, 'run_id' | 'task' | 'config' | 'versions' | 'started_at'>>;

export interface InitialObservation {
  url?: string;
  title?: string;
  tabs?: Tab[];
  /** Recordings made before `scale_x`/`scale_y` carry only `scale` (horizontal). */
  screenshot?: Omit<Screenshot, 'base64' | 'scale_x' | 'scale_y'> & Partial<Pick<Screenshot, 'scale_x' | 'scale_y'>>;
}

export interface RecorderOptions {
  logger?: Logger;
  /** Compute the visual diff per step (default true). */
  diff?: boolean;
  /** changed_share below which a step that should change the screen is flagged a no-op. */
  noopThreshold?: number;
  /** fsync every frame and step line (default true). Only bulk generators (bench fixtures) turn it off. */
  durable?: boolean;
  /** Other servers append steps to this episode too (kubernetes replicas on one recordings volume): step numbers
   * and diffs follow the steps on storage (shared-steps.ts). */
  shared?: boolean;
  /** This server's name in the state the servers share (a kubernetes replica id), written in the writer marker so
   * the leader can tell readers once it is gone (writer.ts). */
  server?: string;
}

export interface EpisodeEnd {
  termination: Termination;
  answer?: string;
  reward?: number;
  verdicts?: Verdict[];
}

export const frameName = (step: number, ext: string) => `frames/${String(step).padStart(4, '0')}.${normaliseExt(ext)}`;

function normaliseExt(ext: string): string {
  const e = ext.replace(/^\./, '').replace(/^image\//, '').toLowerCase();
  return e === 'jpeg' ? 'jpg' : e;
}

export class EpisodeRecorder {
  readonly dir: string;
  private meta: EpisodeMeta;
  private steps: FileHandle;
  private readonly log: Logger;
  private readonly diffOn: boolean;
  private readonly noopThreshold: number;
  private readonly durable: boolean;
  private readonly shared: boolean;
  /** Opened with join(): appends steps; writes episode.json only to end it, when it claims the end (shared-end.ts). */
  private joined = false;
  private prev: RawFrame | undefined;
  /** Shared: the last step number this server claimed. */
  private claimed = 0;
  /** Serialises writes so callers that do not await still get ordered, complete lines. */
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(dir: string, meta: EpisodeMeta, steps: FileHandle, opts: RecorderOptions) {
    this.dir = dir;
    this.meta = meta;
    this.steps = steps;
    this.log = opts.logger ?? silentLogger;
    this.diffOn = opts.diff ?? true;
    this.noopThreshold = opts.noopThreshold ?? NOOP_THRESHOLD;
    this.durable = opts.durable ?? true;
    this.shared = opts.shared ?? false;
  }

  /** Creates the directory (which must not already hold an episode) and writes a `running` episode.json. */
  static async create(dir: string, start: EpisodeStart, opts: RecorderOptions = {}): Promise<EpisodeRecorder> {
    await mkdir(join(dir, 'frames'), { recursive: true });
    if (opts.shared) await mkdir(join(dir, CLAIMS_DIR), { recursive: true });
    const exists = await stat(join(dir, EPISODE_FILE)).then(
      () => true,
      () => false,
    );
    if (exists) throw new Error(`${dir} already holds an episode; record each episode into its own directory`);
    const meta = EpisodeMeta.parse({
      ...start,
      started_at: start.started_at ?? new Date().toISOString(),
      status: 'running',
      steps: 0,
      verdicts: [],
    });
    await writeFileAtomic(join(dir, WRITER_FILE), JSON.stringify(writerInfo(meta.started_at, opts.server)));
    await writeFileAtomic(join(dir, EPISODE_FILE), JSON.stringify(meta, null, 2));
    const steps = await open(join(dir, STEPS_FILE), 'a');
    return new EpisodeRecorder(dir, meta, steps, opts);
  }

  /** Appends the steps this server serves to an episode another server created and ends (shared-steps.ts). */
  static async join(dir: string, opts: RecorderOptions = {}): Promise<EpisodeRecorder> {
    const meta = EpisodeMeta.parse(JSON.parse(await readFile(join(dir, EPISODE_FILE), 'utf8')));
    // Its writer is gone (the creating server died): this server carries it on, and its marker says so.
    if ((await effectiveStatus(dir, meta)) === 'incomplete' && meta.status === 'running') {
      await writeFileAtomic(join(dir, WRITER_FILE), JSON.stringify(writerInfo(meta.started_at, opts.server)));
    }
    const steps = await open(join(dir, STEPS_FILE), 'a');
    const r = new EpisodeRecorder(dir, meta, steps, { ...opts, shared: true });
    r.joined = true;
    return r;
  }

  /** The episode metadata as last written. */
  get episode(): Readonly<EpisodeMeta> {
    return this.meta;
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    // The chain must survive a failed write so later calls still run; the caller sees the failure via `p`.
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** Frame 0: the observation after reset. */
  recordInitial(frame?: Frame, obs?: InitialObservation): Promise<void> {
    return this.enqueue(async () => {
      this.assertOpen();
      if (frame) {
        const name = frameName(0, frame.ext);
        await writeFileSynced(join(this.dir, name), frame.bytes, this.durable);
        this.meta = { ...this.meta, initial_frame: name };
        if (this.diffOn) this.prev = await this.decode(frame.bytes);
      }
      if (obs) await writeFileAtomic(join(this.dir, INITIAL_FILE), JSON.stringify(obs, null, 2));
      await this.writeMeta();
    });
  }

  /** Appends one step (1-based `rec.step`); returns the record as written, with frame path and diff. */
  recordStep(rec: Omit<StepRecord, 'frame' | 'diff'>, frame?: Frame): Promise<StepRecord> {
    return this.enqueue(async () => {
      this.assertOpen();
      const out: StepRecord = StepRecord.parse(rec);
      if (this.shared) await this.followStorage(out);
      if (frame) {
        out.frame = frameName(out.step, frame.ext);
        await writeFileSynced(join(this.dir, out.frame), frame.bytes, this.durable);
        if (this.diffOn) {
          const cur = await this.decode(frame.bytes);
          if (this.prev && cur) {
            // Off the event loop: a frame that changed everywhere costs pixelmatch ~0.2 s of a loaded core.
            const share = await changedShareOffThread(this.prev, cur);
            out.diff = {
              changed_share: Math.round(share * 1e5) / 1e5,
              noop: share < this.noopThreshold && expectsVisibleChange(out.actions) && !out.parse_error,
            };
          }
          this.prev = cur;
        }
      } else {
        // Without a frame the next diff would compare across two steps; drop the baseline instead.
        this.prev = undefined;
      }
      const line = JSON.stringify(out);
      if (this.shared) await commitStep(this.dir, out.step, line, this.durable);
      await this.steps.write(line + '\n');
      if (this.durable) await this.steps.sync();
      this.meta = { ...this.meta, steps: Math.max(this.meta.steps, out.step) };
      return out;
    });
  }

  /** Shared: the first number free on storage after the last step there (claimed, shared-steps.ts), its diff
   * against the step before it (whoever recorded it; or frame 0). */
  private async followStorage(out: StepRecord): Promise<void> {
    const last = await lastStepOnDisk(join(this.dir, STEPS_FILE));
    out.step = await claimStep(this.dir, Math.max(last?.step ?? 0, this.claimed) + 1);
    this.claimed = out.step;
    if (!this.diffOn) return;
    // The step before may be claimed and not appended yet: its claim file holds its record once written.
    const prior = out.step === 1 ? null : last?.step === out.step - 1 ? last : ((await claimedStep(this.dir, out.step - 1)) ?? last);
    const before = prior ? prior.frame : (await this.storedMeta())?.initial_frame;
    const bytes = before ? await readFile(join(this.dir, before)).catch(() => null) : null;
    this.prev = bytes ? await this.decode(bytes) : undefined;
  }

  private storedMeta(): Promise<EpisodeMeta | null> {
    return readFile(join(this.dir, EPISODE_FILE), 'utf8').then((t) => EpisodeMeta.parse(JSON.parse(t)), () => null);
  }

  /** Shared: the last step on storage, whoever recorded it (null when none); undefined when not shared. */
  lastStep(): Promise<StepRecord | null | undefined> {
    return this.enqueue(async () => (this.shared ? latestStep(this.dir, join(this.dir, STEPS_FILE)) : undefined));
  }

  /** Stores judge verdicts (and a reward) now; may be called before or after finish(). */
  setVerdicts(verdicts: Verdict[], reward?: number): Promise<void> {
    return this.enqueue(async () => {
      this.meta = { ...this.meta, verdicts, ...(reward === undefined ? {} : { reward }) };
      await this.writeMeta();
    });
  }

  /** Marks the episode complete, closes steps.jsonl and removes the writer marker. Idempotent. */
  finish(end: EpisodeEnd): Promise<void> {
    return this.enqueue(async () => {
      if (this.closed) return;
      this.closed = true;
      await this.steps.close();
      // Shared: whichever server claims the end writes it (shared-end.ts), from the episode as stored.
      if (this.shared && !(await claimEnd(this.dir))) return;
      const stored = this.shared ? await settleSteps(this.dir, join(this.dir, STEPS_FILE)) : 0;
      const base = this.joined ? ((await this.storedMeta()) ?? this.meta) : this.meta;
      this.meta = {
        ...base,
        steps: Math.max(base.steps, this.meta.steps, stored),
        status: 'complete',
        finished_at: new Date().toISOString(),
        termination: end.termination,
        ...(end.answer === undefined ? {} : { answer: end.answer }),
        ...(end.reward === undefined ? {} : { reward: end.reward }),
        ...(end.verdicts === undefined ? {} : { verdicts: end.verdicts }),
      };
      await writeFileAtomic(join(this.dir, EPISODE_FILE), JSON.stringify(this.meta, null, 2));
      await rm(join(this.dir, WRITER_FILE), { force: true });
      this.prev = undefined;
    });
  }

  private assertOpen() {
    if (this.closed) throw new Error(`episode ${this.meta.episode_id} is finished; no more steps can be recorded`);
  }

  private async decode(bytes: Buffer): Promise<RawFrame | undefined> {
    try {
      return await decodeSmall(bytes);
    } catch (err) {
      // A frame sharp cannot decode still gets recorded; it just gets no diff.
      this.log.warn({ err, episode: this.meta.episode_id }, 'frame could not be decoded for the visual diff');
      return undefined;
    }
  }

  private writeMeta(): Promise<void> {
    if (this.joined) return Promise.resolve();
    return writeFileAtomic(join(this.dir, EPISODE_FILE), JSON.stringify(this.meta, null, 2));
  }
}

/** Default: an episode on another host with no write for this long is considered abandoned. */
const STALE_MS = 15 * 60_000;

/**
 * The status a reader should show: `running` only while the writer is plausibly alive, else `incomplete`.
 * Found gone by the shared state's leader (writer.ts), with nothing written since: incomplete. Same host: the writer
 * pid must exist. Other host: the episode must have been written within `staleMs`.
 */
export async function effectiveStatus(dir: string, meta: Pick<EpisodeMeta, 'status'>, staleMs = STALE_MS): Promise<EpisodeMeta['status']> {
  if (meta.status !== 'running') return meta.status;
  const w = await readWriter(dir);
  if (!w) return 'incomplete';
  const files = [STEPS_FILE, EPISODE_FILE];
  if (await writerGone(dir, w, files)) return 'incomplete';
  if (w.hostname === hostname()) return pidAlive(w.pid) ? 'running' : 'incomplete';
  return Date.now() - (await lastWrite(dir, files)) < staleMs ? 'running' : 'incomplete';
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
