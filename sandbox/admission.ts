// Admission control: the server knows what it can carry and refuses the rest with 503 `overloaded` (Retry-After)
// instead of starting sandboxes that then time out. Two bounds:
// - starts: at most `maxStarting` sandboxes are started at once; later creates wait in a bounded queue (they stay
//   `creating`), and a create beyond the queue is refused. Sixteen Chromium contexts started at once on two cores
//   all ran past their start timeout; started a few at a time, each gets the machine for its start.
// - pressure: recent step latency against the step's deadline, screenshot capture time against its budget and the
//   event loop's lateness, each over a sliding window. While any of them is past its limit, creates are refused:
//   the running episodes keep the capacity they need to meet their deadlines.
// - capture capacity: the browsers serve a burst of screenshots (every sandbox capturing at once) for so many
//   sandboxes within its time (browser-env/capture-gate.ts measures it per process); creates beyond it are
//   refused, and a create that waited in the queue is refused when its turn comes if the sandboxes started by then
//   already use it. Episodes admitted are episodes whose screenshots the machine serves.
// - capacity learned from misses: when a screenshot misses its deadline while the server holds N browser
//   sandboxes, it carries at most max(maxStarting, 3/4 N) until a window passes without a miss; and a create that
//   waited in the queue while a capture missed is refused when its turn comes (it fails with `overloaded`)
//   instead of joining a machine that already cannot serve its episodes.
// - the start limit is learned (additive increase, multiplicative decrease), as the capture gate's: it begins at
//   `maxStarting`, its ceiling; a start that took more than half of its deadline (`startDeadlineMs`) halves it
//   (once per round: starts that began before the last cut do not cut again), as does a queued create refused when its turn comes
//   (the machine cannot serve more episodes: starting them faster does not help), and a start that took less than
//   an eighth of it while others waited for a slot raises it by one. Within [1, `maxStarting`]: a starved machine
//   starts one at a time instead of running several past their deadline together, and a machine that recovered
//   starts `maxStarting` at once again. (A ceiling above it was measured: with 4 × maxStarting the overload bench's
//   32 and 64 episodes completed fewer episodes, more refused after queueing: starts are fast at the beginning of a
//   burst, and what the machine then cannot carry is the episodes' captures, not their starts.)
// Knows nothing of HTTP; the registry calls admit() and startSlot(), the step route reports steps.
import { GroveError } from '../protocol/errors.ts';

export interface AdmissionOptions {
  /** Sandboxes started at once at most (the learned start limit's ceiling and first value); more wait for a slot. */
  maxStarting: number;
  /** false: the start limit stays at maxStarting (nothing learned). Default true. */
  learnStarts?: boolean;
  /** A browser start's deadline (ms): a start past half of it lowers the start limit, one under an eighth raises it. */
  startDeadlineMs: number;
  /** Creates waiting for a start slot at most; beyond it creates are refused. */
  startQueue: number;
  /** Refuse creates while the event loop runs this late (ms, 90th percentile of 100 ms ticks over the window; 0: never).
   * A percentile, not the worst: one stall is not a state, a loop that is late all the time is. */
  loopLagMs: number;
  /** Refuse creates while captures take this long (ms, 90th percentile over the window; 0: never). */
  captureMs: number;
  /** Refuse creates while steps use this share of their deadline (90th percentile over the window; 0: never). */
  stepShare: number;
  /** The sliding window of the measurements, ms. */
  windowMs: number;
  /** Browser sandboxes whose screenshots the browsers serve at once (browser-env/capture-gate.ts); undefined while
   * unmeasured. Absent: not counted. */
  captureCapacity?: () => number | undefined;
  /** Time source (tests). */
  now?: () => number;
}

export const DEFAULT_ADMISSION: AdmissionOptions = { maxStarting: 4, startDeadlineMs: 30_000, startQueue: 32, loopLagMs: 500, captureMs: 2500, stepShare: 0.5, windowMs: 30_000 };

/** The measurements behind admission, as /metrics and the overload bench read them. */
export interface Pressure {
  starting: number;
  /** The learned start limit now. */
  startLimit: number;
  queued: number;
  /** p90 of capture ms, of step ms / step deadline ms and of the loop's lateness (ms), over the window (0 when none). */
  captureP90: number;
  stepShareP90: number;
  loopLagP90: number;
  /** The worst lateness of the loop over the window (reported, not judged). */
  loopLagMax: number;
  /** Why creates are refused now, or null. */
  overloaded: string | null;
}

/** Samples of one measurement over a sliding window. */
class Window {
  private readonly at: number[] = [];
  private readonly v: number[] = [];
  constructor(private readonly ms: number) {}
  add(t: number, value: number): void {
    this.at.push(t);
    this.v.push(value);
    // Bounded however fast samples come: the newest 512 are plenty for a percentile.
    if (this.at.length > 512) this.drop(1);
  }
  private drop(n: number): void {
    this.at.splice(0, n);
    this.v.splice(0, n);
  }
  values(now: number): number[] {
    let old = 0;
    while (old < this.at.length && this.at[old] < now - this.ms) old++;
    if (old) this.drop(old);
    return this.v;
  }
  p(now: number, q: number): number {
    const s = [...this.values(now)].sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
  }
  max(now: number): number {
    return this.values(now).reduce((m, x) => Math.max(m, x), 0);
  }
}

const LOOP_TICK_MS = 100;

export class Admission {
  readonly opts: AdmissionOptions;
  private readonly now: () => number;
  private starting = 0;
  private readonly queue: Array<() => void> = [];
  private readonly captures: Window;
  private readonly steps: Window;
  private readonly loop: Window;
  /** Recent start durations (ms), for the Retry-After of a full queue. */
  private readonly starts: Window;
  private timer: NodeJS.Timeout | null = null;
  /** The learned bound on live browser sandboxes (Infinity: none), and when a capture last missed. */
  private liveCap = Infinity;
  private lastMiss = -Infinity;
  /** The learned start limit, and when it was last cut (starts that began before then do not cut it again). */
  private startLimit: number;
  private startCutAt = -Infinity;

  constructor(opts: Partial<AdmissionOptions> = {}) {
    this.opts = { ...DEFAULT_ADMISSION, ...opts };
    this.now = this.opts.now ?? Date.now;
    const w = this.opts.windowMs;
    this.captures = new Window(w);
    this.steps = new Window(w);
    this.loop = new Window(w);
    this.starts = new Window(w * 4);
    this.startLimit = this.opts.maxStarting;
  }

  /** Whether the start limit is learned or fixed at maxStarting. */
  private get learns(): boolean {
    return this.opts.learnStarts !== false;
  }

  /** Halves the start limit for a start (or a wait) that began at `t0`, unless the limit was cut since. */
  private cutStarts(t0: number): void {
    if (t0 < this.startCutAt || !this.learns) return;
    this.startLimit = Math.max(1, Math.floor(this.startLimit / 2));
    this.startCutAt = this.now();
  }

  /** A start that began at `t0` took `ms` (its slot's time): the start limit learns from it. */
  private startTook(t0: number, ms: number): void {
    if (!this.learns) return;
    const deadline = this.opts.startDeadlineMs;
    if (ms > deadline / 2) this.cutStarts(t0);
    else if (ms < deadline / 8 && this.queue.length > 0 && this.startLimit < this.opts.maxStarting) this.startLimit++;
  }

  /** Starts measuring the event loop's lateness (a timer that keeps nothing alive). */
  start(): void {
    if (this.timer) return;
    let due = Date.now() + LOOP_TICK_MS;
    this.timer = setInterval(() => {
      const t = Date.now();
      this.observeLoopLag(Math.max(0, t - due));
      due = t + LOOP_TICK_MS;
    }, LOOP_TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // Creates still waiting for a slot go ahead (the registry is closing them anyway).
    for (const go of this.queue.splice(0)) go();
  }

  observeLoopLag(ms: number): void {
    this.loop.add(this.now(), Math.max(0, ms));
  }

  /** One browser step: how long it took against its deadline, and its capture time (when it captured). */
  observeStep(ms: number, deadlineMs: number, captureMs?: number): void {
    const t = this.now();
    if (deadlineMs > 0) this.steps.add(t, ms / deadlineMs);
    if (captureMs !== undefined && captureMs > 0) this.captures.add(t, captureMs);
  }

  /**
   * A screenshot that missed its deadline (503 capture_timeout) while the server held `live` sandboxes: it carries
   * at most 3/4 of them (never fewer than maxStarting) until a window passes without a miss.
   */
  observeCaptureMiss(live: number): void {
    this.lastMiss = this.now();
    this.liveCap = Math.max(this.opts.maxStarting, Math.min(this.liveCap, Math.floor((live * 3) / 4)));
  }

  /** The learned bound on live browser sandboxes now (Infinity when no capture missed within the window). */
  capacity(): number {
    if (this.now() - this.lastMiss >= this.opts.windowMs) this.liveCap = Infinity;
    return this.liveCap;
  }

  pressure(): Pressure {
    const t = this.now();
    const captureP90 = this.captures.p(t, 0.9);
    const stepShareP90 = this.steps.p(t, 0.9);
    const loopLagP90 = this.loop.p(t, 0.9);
    const loopLagMax = this.loop.max(t);
    const o = this.opts;
    let overloaded: string | null = null;
    if (o.loopLagMs > 0 && loopLagP90 >= o.loopLagMs) overloaded = `the server's event loop runs ${Math.round(loopLagP90)} ms late (p90; limit ${o.loopLagMs} ms)`;
    else if (o.captureMs > 0 && captureP90 >= o.captureMs) overloaded = `screenshot captures take ${Math.round(captureP90)} ms (p90; limit ${o.captureMs} ms)`;
    else if (o.stepShare > 0 && stepShareP90 >= o.stepShare) overloaded = `steps use ${Math.round(stepShareP90 * 100)} % of their deadline (p90; limit ${Math.round(o.stepShare * 100)} %)`;
    return { starting: this.starting, startLimit: this.startLimit, queued: this.queue.length, captureP90, stepShareP90, loopLagP90, loopLagMax, overloaded };
  }

  /** Seconds a refused client should wait: the measurements' window drains, or the queue ahead starts. */
  private retryAfter(queueFull: boolean): number {
    if (!queueFull) return Math.max(1, Math.min(30, Math.ceil(this.opts.windowMs / 4000)));
    const startMs = this.starts.p(this.now(), 0.5) || 2000;
    const rounds = Math.ceil((this.queue.length + 1) / this.startLimit);
    return Math.max(1, Math.min(60, Math.ceil((rounds * startMs) / 1000)));
  }

  /**
   * Throws 503 `overloaded` (with retryAfter) when a new sandbox cannot be carried now. `live`: the sandboxes the
   * server holds; below `maxStarting` of them the measurements never refuse (a server always runs a few: the load
   * that slows it is then someone else's, and a runner that bounds its own concurrency must not starve).
   */
  admit(live: number): void {
    const served = live >= this.opts.maxStarting ? this.opts.captureCapacity?.() : undefined;
    if (served !== undefined && live >= served) {
      throw new GroveError('overloaded', `The server is at capacity: its browsers serve screenshots for ${served} sandboxes at once within the time a step's capture has (it holds ${live}); retry later.`, { retryAfter: this.retryAfter(false) });
    }
    const cap = this.capacity();
    if (live >= cap) {
      throw new GroveError('overloaded', `The server is at capacity: a screenshot missed its deadline recently, so it carries ${cap} sandboxes (holds ${live}) until ${Math.round(this.opts.windowMs / 1000)} s pass without a miss; retry later.`, { retryAfter: this.retryAfter(false) });
    }
    const p = live >= this.opts.maxStarting ? this.pressure() : null;
    if (p?.overloaded) {
      throw new GroveError('overloaded', `The server is at capacity: ${p.overloaded}; retry later.`, { retryAfter: this.retryAfter(false) });
    }
    if (this.starting >= this.startLimit && this.queue.length >= this.opts.startQueue) {
      throw new GroveError(
        'overloaded',
        `The server is at capacity: ${this.starting} sandboxes are starting and ${this.queue.length} are waiting to start (limit ${this.opts.startQueue}); retry later.`,
        { retryAfter: this.retryAfter(true) },
      );
    }
  }

  /**
   * Waits for a start slot (queued behind earlier creates) and returns its release; call it once the sandbox
   * is ready or failed. A `signal` that aborts while waiting (the sandbox was deleted) leaves the queue. `live`:
   * the sandboxes the server holds (this one and those still queued included), for the capture capacity.
   */
  async startSlot(signal?: AbortSignal, live?: () => number): Promise<() => void> {
    if (this.starting < this.startLimit && this.queue.length === 0) this.starting++;
    else {
      const queuedAt = this.now();
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', onAbort);
          this.starting++;
          resolve();
        };
        const onAbort = () => {
          const i = this.queue.indexOf(go);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting to start'));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.queue.push(go);
      });
      // A screenshot missed its deadline while this create waited, or the sandboxes started meanwhile already use
      // what the browsers' captures serve: the machine cannot serve one more episode.
      const served = live ? this.opts.captureCapacity?.() : undefined;
      const started = live ? live() - this.queue.length : 0;
      const why =
        this.lastMiss >= queuedAt
          ? 'a screenshot missed its deadline while this sandbox waited to start'
          : served !== undefined && started > Math.max(served, this.opts.maxStarting)
            ? `while this sandbox waited to start, its browsers came to serve screenshots for ${served} sandboxes at once and ${started - 1} hold them`
            : null;
      if (why) {
        // Starting more at once does not help a machine that cannot serve the episodes it has: fewer at once.
        this.cutStarts(queuedAt);
        this.starting--;
        this.grant();
        throw new GroveError('overloaded', `The server is at capacity: ${why}; retry later.`, { retryAfter: this.retryAfter(false) });
      }
    }
    const t0 = this.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const ms = this.now() - t0;
      this.starts.add(this.now(), ms);
      this.startTook(t0, ms);
      this.starting--;
      this.grant();
    };
  }

  /** Waiting starts get the slots free under the start limit now (it may have grown or shrunk meanwhile). */
  private grant(): void {
    while (this.starting < this.startLimit && this.queue.length > 0) this.queue.shift()!();
  }
}
