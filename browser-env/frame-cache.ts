// The frame cache (issue 35): when nothing has painted since the last capture of a page, the observation answers
// that capture again instead of asking Chromium for a new one.
//
// The damage signal is Chromium's own: a screencast on the sandbox's CDP session (Page.startScreencast, 8×8 px,
// every frame acknowledged at once). Its capturer delivers a frame only when the compositor draws damage, so a page
// at rest sends none. Measured with Chromium 156 (bench/frame-probe.mts prints it): DOM and 1-px colour
// changes, canvas draws, a change made from requestAnimationFrame, the caret blinking (~2 frames/s), hover, scroll,
// CSS animations and transitions (every frame), navigation and resize each sent frames, at device scale 1 and 2;
// a page at rest sent none (an animation outside the viewport sends none either: nothing visible changes). Our own
// Page.captureScreenshot sends one frame too, before its reply in every case seen.
//
// What keeps an answer fresh (all of it must hold; see the known hole below for what it does not cover):
// - an answer from the cache needs the damage count unchanged since its capture, checked before and after a
//   barrier: two animation frames of the page, run in an isolated world (the page cannot replace its
//   requestAnimationFrame there), so a change already made is drawn and its frame delivered before the check;
// - a capture is kept only when at most one frame (its own) arrived while it ran; a change during the capture sends
//   a second frame and the capture is not kept (its own frame, when not there by the reply, must be the very next
//   frame and come within OWN_FRAME_MS). Chromium drops a frame that comes while two earlier ones are
//   unacknowledged; a capture is kept only when every frame before it was acknowledged, so at most its own frame
//   can be outstanding after it, and a second one in flight arrives later and moves the count;
// - the entry is keyed by the capture settings, the URL and an epoch every action (but wait) bumps;
// - a barrier that fails or runs out of time, a screencast that could not start: capture as without a cache.
//
// Known hole (why the cache is opt-in, `frame_cache: true`): the screencast does not send a frame for every change.
// bench/frame-probe-stale.mts (a 1-px flip every 230 ms, wait steps back to back) found cached answers without the
// last flip while the page had not changed since: 12 of 147, 4 of 75, 6 of 135 at load ~8-14; without the
// own-frame wait (keep only when the capture's frame came before its reply) still 7 of 118. In every case no frame
// came for the flip at all (not a late one), and the flip was 1-50 ms after a capture. bench/frame-probe-flips.mts:
// with no captures every flip sent its frame (30 of 30); with a capture every 60 ms, 100 frames came for 30 flips and
// 76 captures (6 missing): near our own captures the count loses changes (one frame for a capture and a change).
// Closing it needs a signal per compositor frame, or the capture and the damage count taken from the same frames
// (capture from the screencast itself).
import type { CDPSession } from 'playwright-core';
import type { Progress } from '../sandbox/progress.ts';
import { quietly } from './util.ts';

/** The barrier's share of the observation: beyond it the page is busy, and a capture is asked for instead. */
const BARRIER_MS = 250;
const BARRIER = 'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(0))))';
const WORLD = '__grove_frame_cache';
/** How long after its reply a capture's own frame may come (measured: before the reply; later under load). */
const OWN_FRAME_MS = 100;
/** How long a capture waits for outstanding acknowledgements before it is taken anyway (then not kept). */
const ACK_MS = 20;

interface Entry<T> {
  key: string;
  url: string;
  epoch: number;
  /** The damage count when the capture was kept. */
  gen: number;
  shot: T;
}

/** One page's damage count (its screencast) and its last capture. */
class Tracker<T> {
  /** Screencast frames received: the damage count. */
  frames = 0;
  /** Frames received whose acknowledgement Chromium has not answered yet. */
  unacked = 0;
  /** Resolves once no acknowledgement is outstanding. */
  private acked: Promise<void> = Promise.resolve();
  private ackedNow: () => void = () => {};
  entry: Entry<T> | undefined;
  /** A capture whose own frame had not come by its reply: kept when that frame is the next one, soon (OWN_FRAME_MS). */
  awaiting: { entry: Entry<T>; by: number; epoch: () => number } | undefined;
  /** The screencast could not start: no cache for this page. */
  broken = false;
  /** The isolated world the barrier runs in (made again after a navigation destroyed it). */
  private world: Promise<number> | undefined;

  constructor(private readonly cdp: CDPSession) {}

  async start(): Promise<void> {
    this.cdp.on('Page.screencastFrame', (f) => {
      this.frames++;
      if (this.unacked++ === 0) this.acked = new Promise((r) => (this.ackedNow = r));
      const a = this.awaiting;
      this.awaiting = undefined;
      if (a && a.entry.gen === this.frames && Date.now() <= a.by && a.entry.epoch === a.epoch()) this.entry = a.entry;
      void this.cdp
        .send('Page.screencastFrameAck', { sessionId: f.sessionId })
        .catch(() => {})
        .finally(() => {
          if (--this.unacked === 0) this.ackedNow();
        });
    });
    // The first frame Chromium sends on start counts as damage like any other: the capture after it is kept.
    await this.cdp.send('Page.startScreencast', { format: 'jpeg', quality: 1, maxWidth: 8, maxHeight: 8, everyNthFrame: 1 }).catch(() => {
      this.broken = true;
    });
  }

  /** Waits (within `d`) until Chromium answered every acknowledgement; false when it did not in time. */
  async settled(d: Progress): Promise<boolean> {
    if (this.unacked === 0) return true;
    await quietly(d.race(this.acked, 'screencast acknowledgements'));
    return this.unacked === 0;
  }

  /** Two animation frames of the page's main frame, in an isolated world; false when they did not come. */
  async barrier(d: Progress): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        this.world ??= this.makeWorld();
        const contextId = await d.race(this.world, 'frame cache world');
        const r = (await d.race(this.cdp.send('Runtime.evaluate', { expression: BARRIER, contextId, awaitPromise: true, returnByValue: true }), 'frame cache barrier')) as {
          exceptionDetails?: unknown;
        };
        if (!r.exceptionDetails) return true;
      } catch {
        if (d.expired) return false;
      }
      // The world went with its document (a navigation): make it again, once.
      this.world = undefined;
    }
    return false;
  }

  private async makeWorld(): Promise<number> {
    const tree = (await this.cdp.send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } };
    const w = (await this.cdp.send('Page.createIsolatedWorld', { frameId: tree.frameTree.frame.id, worldName: WORLD, grantUniveralAccess: false })) as {
      executionContextId: number;
    };
    return w.executionContextId;
  }
}

/** A capture in progress: what `keep` needs to decide whether it may be answered again. */
export interface Pending {
  tracker: Tracker<unknown> | undefined;
  gen: number;
  epoch: number;
  /** No acknowledgement was outstanding when the capture began. */
  quiet: boolean;
}

export class FrameCache<T extends object> {
  private readonly trackers = new WeakMap<CDPSession, Promise<Tracker<T>>>();
  private epoch = 0;
  hits = 0;
  misses = 0;

  /** The damage count of a page's session (tests pair it with their own captures); undefined before its start. */
  damage(cdp: CDPSession): Promise<number | undefined> {
    return this.trackers.get(cdp)?.then((t) => t.frames) ?? Promise.resolve(undefined);
  }

  /** Any action but a wait: no capture before it is answered again. */
  invalidate(): void {
    this.epoch++;
  }

  private tracker(cdp: CDPSession): Promise<Tracker<T>> {
    let t = this.trackers.get(cdp);
    if (!t) {
      const tr = new Tracker<T>(cdp);
      t = tr.start().then(() => tr);
      this.trackers.set(cdp, t);
    }
    return t;
  }

  /** The last capture of this page with these settings, when nothing painted since; undefined: capture. */
  async lookup(cdp: CDPSession, key: string, url: string, d: Progress): Promise<T | undefined> {
    const t = await quietly(d.race(this.tracker(cdp), 'frame cache start'));
    const e = t?.entry;
    if (!t || t.broken || !e || e.key !== key || e.url !== url || e.epoch !== this.epoch || e.gen !== t.frames) {
      this.misses++;
      return undefined;
    }
    const bd = d.within(BARRIER_MS, 'frame cache barrier');
    const ok = await t.barrier(bd).finally(() => bd.done());
    // Anything drawn before the barrier has sent its frame by now; an action that began meanwhile bumped the epoch.
    if (!ok || e.gen !== t.frames || e.epoch !== this.epoch || t.entry !== e) {
      if (t.entry === e) t.entry = undefined;
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e.shot;
  }

  /** Call right before a capture is asked for. */
  async begin(cdp: CDPSession, d: Progress): Promise<Pending> {
    const t = await quietly(d.race(this.tracker(cdp), 'frame cache start'));
    if (!t) return { tracker: undefined, gen: 0, epoch: this.epoch, quiet: false };
    t.entry = t.awaiting = undefined;
    // The last capture's own frame is often still being acknowledged: a moment for that keeps this capture.
    const ad = d.within(ACK_MS, 'screencast acknowledgements');
    const quiet = await t.settled(ad).finally(() => ad.done());
    return { tracker: t as Tracker<unknown>, gen: t.frames, epoch: this.epoch, quiet };
  }

  /**
   * Keeps a finished capture when every earlier frame was acknowledged as it began, at most its own frame came
   * while it ran, and no action began.
   */
  keep(p: Pending, key: string, url: string, shot: T): void {
    const t = p.tracker as Tracker<T> | undefined;
    if (!t || t.broken || !p.quiet || p.epoch !== this.epoch || t.frames - p.gen > 1) return;
    const entry = { key, url, epoch: this.epoch, gen: p.gen + 1, shot };
    if (t.frames === entry.gen) t.entry = entry;
    else t.awaiting = { entry, by: Date.now() + OWN_FRAME_MS, epoch: () => this.epoch };
  }
}
