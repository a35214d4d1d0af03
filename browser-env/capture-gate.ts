// The capture gate (issue 35): the screenshots of one Chromium process are taken a few at a time, in order of
// arrival, instead of all at once. Every capture of a process goes through its one display compositor (the GPU
// process composites in software with --disable-gpu), and its renderers share the same cores: asked for twenty
// captures at once on a loaded machine, each got a twentieth of it and all of them ran past their 5 s try together
// (the overload bench at 32 and 64 episodes: 12 and 25 screenshots of admitted episodes missing). Queued, each
// capture has the machine for its turn; the wait is bounded by the step's deadline (tens of seconds), not by the
// capture's own try.
// - The limit adapts (additive increase, multiplicative decrease): it starts at START_LIMIT, so a burst on a cold
//   gate is served a few at a time; it halves when a capture that began after the last cut took longer than
//   TARGET_MS, and grows by one, up to MAX_LIMIT, when a capture took less than half of that while others waited.
//   Never below MIN_LIMIT: a hung renderer's capture holds one slot, not the process. A quiet machine grows it to
//   MAX_LIMIT: 16 sandboxes of one process then capture as raw Playwright's 16 pages do, at once (with the limit held
//   at 8 the process spent ~1.9 ms more Chromium CPU per step: paired runs of 16 sandboxes, 2026-12-05).
// - A capture that ran out of time is not abandoned while Chromium still works on it: its slot stays taken until
//   Chromium answers (at most one more try's time), so retries do not pile new work on top of it.
// - What a burst can be served: the captures per second the process achieved while its gate was full (captures in
//   flight over their time, smoothed) times BURST_MS. Admission counts it as the browser sandboxes the process can
//   carry (sandbox/admission.ts, through the pool's `capture_capacity` stat). Measured only while the gate is full:
//   one capture at a time on a machine others load says little of what it serves in parallel (an estimate from
//   it would refuse the fifth sandbox of a test on a busy CI machine), and a gate that is never full has capacity
//   to spare.
// Free slots are taken synchronously: a quiet machine's steps pay no wait.
import { Progress, TimeoutError } from '../sandbox/progress.ts';
import { OBSERVE_MS } from './step-budget.ts';

/** Captures in flight per process at first. */
export const START_LIMIT = 8;
/** Captures in flight per process at most (grown to from START_LIMIT while captures are fast). */
export const MAX_LIMIT = 16;
/** Captures in flight per process at least. */
export const MIN_LIMIT = 2;
/** A capture (its turn, not its wait) should take at most this; a slower one halves the limit. */
export const TARGET_MS = 1000;
/**
 * The time a burst (every sandbox of the process capturing at once) may take to be served: capacity's unit. Half
 * the observation's share of a step's deadline: the wait is bounded by it, and SoM, titles and the rest need time too.
 */
export const BURST_MS = OBSERVE_MS / 2;
/** Measurements older than this say nothing about the machine now (admission's window). */
const STALE_MS = 30_000;
/** Weight of the newest capture in the smoothed rate. */
const ALPHA = 0.2;

/** The step's deadline ran out while its capture waited for a turn: the machine is overloaded, the page is fine. */
export class CaptureQueueTimeout extends TimeoutError {}

type Grant = () => void;

export interface CaptureGateStats {
  limit: number;
  active: number;
  queued: number;
  /** Browser sandboxes whose captures this process serves within BURST_MS at once; undefined while the gate was
   * not full within STALE_MS (no bound). */
  capacity: number | undefined;
}

export class CaptureGate {
  private limit = START_LIMIT;
  private active = 0;
  private readonly waiting: Grant[] = [];
  /** When the limit was last halved: captures that began before then do not halve it again. */
  private cutAt = -Infinity;
  /** Captures per ms, smoothed, and when it was last measured. */
  private rate = 0;
  private sampledAt = -Infinity;
  /** Called when a capture has to wait for its turn (the pool counts them). */
  onWait: () => void = () => {};

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Runs `work` (one CDP capture) in its turn: waits for a slot within `d` (CaptureQueueTimeout when `d` runs
   * out), then gives the capture `tryMs()` (computed once the turn has come) before a TimeoutError.
   */
  async run<T>(d: Progress, tryMs: () => number, work: () => Promise<T>): Promise<T> {
    await this.enter(d);
    const t0 = this.now();
    const inFlight = this.active;
    // The gate was full as this capture began: its time measures what the process serves.
    const full = this.active >= this.limit || this.waiting.length > 0;
    let p: Promise<T>;
    try {
      p = work();
    } catch (e) {
      this.leave();
      throw e;
    }
    const ms = tryMs();
    const limit = Progress.after(ms, 'screenshot capture');
    try {
      const v = await limit.race(p);
      this.measured(t0, inFlight, full);
      this.leave();
      return v;
    } catch (e) {
      if (e instanceof TimeoutError) {
        this.measured(t0, inFlight, full);
        // Chromium is still working on it: the slot is free when it answers, or after one more try's time.
        const held = Progress.after(ms, 'abandoned screenshot capture');
        void held.race(p).then(
          () => (held.done(), this.leave()),
          () => (held.done(), this.leave()),
        );
      } else this.leave();
      throw e;
    } finally {
      limit.done();
    }
  }

  stats(): CaptureGateStats {
    return { limit: this.limit, active: this.active, queued: this.waiting.length, capacity: this.capacity() };
  }

  /** Sandboxes whose captures this process serves within BURST_MS at once (undefined: the gate was not full lately). */
  capacity(): number | undefined {
    if (this.now() - this.sampledAt > STALE_MS) return undefined;
    return Math.floor(this.rate * BURST_MS);
  }

  private async enter(d: Progress): Promise<void> {
    if (this.active < this.limit && this.waiting.length === 0) {
      this.active++;
      return;
    }
    this.onWait();
    let grant!: Grant;
    const turn = new Promise<void>((ok) => (grant = () => ok()));
    const queued = this.waiting.length + 1;
    const since = this.now();
    this.waiting.push(grant);
    try {
      await d.race(turn, 'waiting for a screenshot turn', {
        // Gave up before its turn: off the queue. Its turn came as it gave up: the slot goes on.
        cancel: () => {
          const i = this.waiting.indexOf(grant);
          if (i >= 0) this.waiting.splice(i, 1);
        },
        dispose: () => this.leave(),
      });
    } catch (e) {
      if (e instanceof TimeoutError) throw new CaptureQueueTimeout(`waiting for a screenshot turn (${queued} queued on this browser)`, this.now() - since);
      throw e;
    }
  }

  private leave(): void {
    this.active--;
    // The limit may have grown or shrunk meanwhile: waiters get what is free under it now.
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      this.waiting.shift()!();
    }
  }

  /** A capture that began at `t0` with `inFlight` captures running (itself included; the gate `full`) is over. */
  private measured(t0: number, inFlight: number, full: boolean): void {
    const t = this.now();
    const ms = Math.max(1, t - t0);
    if (full) {
      const r = inFlight / ms;
      this.rate = t - this.sampledAt > STALE_MS ? r : this.rate + ALPHA * (r - this.rate);
      this.sampledAt = t;
    }
    if (ms > TARGET_MS) {
      if (t0 >= this.cutAt) {
        this.limit = Math.max(MIN_LIMIT, Math.floor(this.limit / 2));
        this.cutAt = t;
      }
    } else if (ms < TARGET_MS / 2 && this.waiting.length > 0 && this.limit < MAX_LIMIT) {
      // The slot's release right after this hands the new one out too.
      this.limit++;
    }
  }
}
