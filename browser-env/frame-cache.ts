// The frame cache (issue 35): when nothing has painted since the last capture of a page, the observation answers
// that capture again instead of asking Chromium for a new one.
//
// The damage signals are the page's (frame-damage.ts): screencast frames from the compositor, the layer tree with its
// paint counts from the renderer (LayerTree), and the page's state read in an isolated world (busy: running
// animations, playing media, frames of other origins, composited layers; the scroll offsets and viewport).
//
// What keeps an answer fresh (all of it must hold):
// - an answer from the cache needs no screencast frame and the same layer tree (paint counts) since its capture,
//   checked before and after a barrier: two animation frames of the page, run in an isolated world (the page cannot
//   replace its requestAnimationFrame there). A change the page made before the barrier has painted by its end, and
//   its layer tree is sent before the barrier's answer on the same channel; the page must not be
//   busy and must be scrolled as right before the capture;
// - a capture is kept only when the page was not busy right before it, no new layer tree came while it ran, and at most one screencast frame (its own) arrived; its own frame, when not there by the reply,
//   must be the very next frame and come within OWN_FRAME_MS. Chromium drops a frame that comes while two earlier
//   ones are unacknowledged; a capture is kept only when every frame before it was acknowledged;
// - the entry is keyed by the capture settings, the URL, the document (the isolated world) and an epoch every action
//   (but wait) bumps;
// - a barrier or a state read that fails or runs out of time, a screencast that could not start: capture as without
//   a cache.
//
// An animated image (GIF, APNG, animated WebP or AVIF, also as a CSS background) changes pixels on the compositor
// with no paint and no new layer tree (measured: 13 screencast frames, 0 trees in 3 s): a document that loaded one is
// busy (frame-images.ts reads the images' frame counts). Only a capture's `begin` reads them: an image shown after a
// kept capture paints when it appears, so the entry's tree no longer matches.
//
// Why more than the screencast: Chromium sends no screencast frame for some changes made 1-50 ms after one of our
// own Page.captureScreenshot calls. A probe (a 1-px flip every 230 ms, wait steps back to back; bench/frame-probe-
// stale.mts and frame-probe-signals.mts, in git history at eed177b) found 12 of 147, 4 of 75, 6 of 135 cached answers
// stale with the screencast alone; the timer pages of test/browser-env/frame-cache.slow.test.ts check it now.
import type { CDPSession } from 'playwright-core';
import type { Progress } from '../sandbox/progress.ts';
import { Damage, type PageState } from './frame-damage.ts';
import { quietly } from './util.ts';

/** The barrier's share of the observation: beyond it the page is busy, and a capture is asked for instead. */
const BARRIER_MS = 250;
/** The state read before a capture (no animation frame to wait for). */
const STATE_MS = 100;
/**
 * How long after its reply a capture's own frame may come (measured: before the reply; later under load). A change
 * of the page's own in that time sends a new layer tree first, and the capture is not kept.
 */
const OWN_FRAME_MS = 250;
/** How long a capture waits for outstanding acknowledgements before it is taken anyway (then not kept). */
const ACK_MS = 20;

interface Entry<T> {
  key: string;
  url: string;
  epoch: number;
  /** The screencast frame count when the capture was kept. */
  gen: number;
  doc: number;
  /** The layer tree (paint counts, transforms) when the capture began. */
  tree: string;
  view: string;
  shot: T;
}

/** One page's damage signals and its last capture. */
class Tracker<T> {
  readonly damage: Damage;
  entry: Entry<T> | undefined;
  /** A capture whose own frame had not come by its reply: kept when that frame is the next one, soon (OWN_FRAME_MS). */
  awaiting: { entry: Entry<T>; by: number; epoch: () => number } | undefined;

  constructor(cdp: CDPSession) {
    this.damage = new Damage(cdp);
    this.damage.onFrame = () => {
      const a = this.awaiting;
      this.awaiting = undefined;
      const d = this.damage;
      if (a && a.entry.gen === d.frames && a.entry.doc === d.doc && a.entry.tree === d.tree && Date.now() <= a.by && a.entry.epoch === a.epoch()) this.entry = a.entry;
    };
  }

  /** The entry still describes what the page shows: no frame, new layer tree, new document or action since. */
  current(e: Entry<T>, epoch: number): boolean {
    const d = this.damage;
    return this.entry === e && !d.broken && !d.composited && e.gen === d.frames && e.doc === d.doc && e.tree === d.tree && e.epoch === epoch;
  }
}

/** A capture in progress: what `keep` needs to decide whether it may be answered again. */
export interface Pending {
  tracker: Tracker<unknown> | undefined;
  gen: number;
  doc: number;
  tree: string;
  epoch: number;
  /** No acknowledgement was outstanding when the capture began. */
  quiet: boolean;
  /** The page's state right before the capture. */
  before: PageState | undefined;
}

export class FrameCache<T extends object> {
  private readonly trackers = new WeakMap<CDPSession, Promise<Tracker<T>>>();
  private epoch = 0;
  hits = 0;
  misses = 0;

  /** The damage counts of a page's session (tests pair them with their own captures); undefined before its start. */
  damage(cdp: CDPSession): Promise<{ frames: number; tree: string } | undefined> {
    return this.trackers.get(cdp)?.then((t) => ({ frames: t.damage.frames, tree: t.damage.tree })) ?? Promise.resolve(undefined);
  }

  /** Any action but a wait: no capture before it is answered again. */
  invalidate(): void {
    this.epoch++;
  }

  private tracker(cdp: CDPSession): Promise<Tracker<T>> {
    let t = this.trackers.get(cdp);
    if (!t) {
      const tr = new Tracker<T>(cdp);
      t = tr.damage.start().then(() => tr);
      this.trackers.set(cdp, t);
    }
    return t;
  }

  /** The last capture of this page with these settings, when nothing painted since; undefined: capture. */
  async lookup(cdp: CDPSession, key: string, url: string, d: Progress): Promise<T | undefined> {
    const t = await quietly(d.race(this.tracker(cdp), 'frame cache start'));
    const e = t?.entry;
    if (!t || !e || e.key !== key || e.url !== url || !t.current(e, this.epoch)) return this.miss();
    const bd = d.within(BARRIER_MS, 'frame cache barrier');
    const state = await t.damage.state(bd, true).finally(() => bd.done());
    // Anything drawn before the barrier has sent its layer tree (and, mostly, its frame) by now; an action that
    // began meanwhile bumped the epoch.
    if (!state || state.busy || state.view !== e.view || !t.current(e, this.epoch)) {
      if (t.entry === e) t.entry = undefined;
      return this.miss();
    }
    this.hits++;
    return e.shot;
  }

  private miss(): undefined {
    this.misses++;
    return undefined;
  }

  /** Call right before a capture is asked for. */
  async begin(cdp: CDPSession, d: Progress): Promise<Pending> {
    const t = await quietly(d.race(this.tracker(cdp), 'frame cache start'));
    if (!t) return { tracker: undefined, gen: 0, doc: 0, tree: '', epoch: this.epoch, quiet: false, before: undefined };
    t.entry = t.awaiting = undefined;
    // The last capture's own frame is often still being acknowledged: a moment for that keeps this capture.
    const ad = d.within(ACK_MS, 'screencast acknowledgements');
    const quiet = await t.damage.settled(ad).finally(() => ad.done());
    // The counts before the state is read: an animation or animated image that began while it was read has sent a
    // new tree since (it painted), and the capture is not kept.
    const dm = t.damage;
    const gen = dm.frames;
    const tree = dm.tree;
    const sd = d.within(STATE_MS, 'frame cache state');
    const [state, animated] = await Promise.all([dm.state(sd, false), dm.images.animated(sd)]).finally(() => sd.done());
    // An animated image, or images not read in time: busy.
    const before: PageState | undefined = state && (animated === false ? state : { busy: true });
    return { tracker: t as Tracker<unknown>, gen, doc: dm.doc, tree, epoch: this.epoch, quiet, before };
  }

  /**
   * Keeps a finished capture when every earlier frame was acknowledged as it began, the page was not busy then, no
   * new layer tree and at most its own frame came while it ran, and no action began. The view is
   * not read again after it: a scroll while it ran makes the view at the next look differ from the one before it,
   * whichever of the two the capture shows.
   */
  keep(p: Pending, key: string, url: string, shot: T): void {
    const t = p.tracker as Tracker<T> | undefined;
    const dm = t?.damage;
    if (!t || !dm || dm.broken || !p.quiet || !p.before || p.before.busy || p.epoch !== this.epoch) return;
    if (dm.doc !== p.doc || dm.tree !== p.tree || dm.composited || dm.frames - p.gen > 1) return;
    const entry: Entry<T> = { key, url, epoch: this.epoch, gen: p.gen + 1, doc: p.doc, tree: p.tree, view: p.before.view, shot };
    if (dm.frames === entry.gen) t.entry = entry;
    else t.awaiting = { entry, by: Date.now() + OWN_FRAME_MS, epoch: () => this.epoch };
  }
}
