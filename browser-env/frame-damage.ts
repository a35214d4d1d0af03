// What tells the frame cache (frame-cache.ts) that a page may have changed since a capture: the damage signals of
// one page, on the sandbox's CDP session of that page.
//
// - Screencast frames (Page.startScreencast, 8×8, each acknowledged at once): the compositor's own damage, so also
//   what never passes the page's main thread (compositor animations, video, a worker's OffscreenCanvas, other
//   processes' iframes). Not every change sends one: Chromium's capture oracle drops and delays frames, and a change
//   made a few ms after one of our own Page.captureScreenshot calls sometimes sends none at all (measured by the
//   probes bench/frame-probe-stale.mts and bench/frame-probe-signals.mts, in git history at eed177b).
// - The layer tree (LayerTree.layerTreeDidChange): the renderer sends it when it commits a frame, on the same
//   channel as the answers to our Runtime.evaluate, with each layer's size, screen transform (a composited layer
//   moved, the page scrolled) and paint count. A change the page painted before our barrier (two animation frames)
//   ran has therefore sent its tree before the barrier's answer: the barrier orders it. Measured on Chromium 156
//   (bench/frame-probe-signals.mts at eed177b, and the probe in framecache2's report): 10 of 10 1-px changes sent a changed tree
//   before the barrier's answer, with or without a screencast; LayerTree.layerPainted never came (0 events).
//   A page with layers of its own elements (a canvas, a focused input's caret, will-change, video, another
//   process's frame) counts as busy: the compositor changes their opacity, filters or clips without a new paint
//   count or transform in the tree.
// - The page's state, read in an isolated world: whether anything runs that changes pixels without a main-thread
//   paint (running animations, playing media, a frame of another origin, layers the compositor moves), and where the
//   page and its viewport are scrolled. A busy page is never answered from the cache.
// - The images its documents loaded (frame-images.ts): an animated one changes pixels with neither a paint nor a new
//   layer tree, so a document that holds one is busy too.
import type { CDPSession } from 'playwright-core';
import type { Progress } from '../sandbox/progress.ts';
import { DocumentImages } from './frame-images.ts';
import { inPage, quietly } from './util.ts';

const WORLD = '__grove_frame_cache';

/** Read in the isolated world: `1|…` busy, else `0|` and the view (scroll offsets, viewport). */
function pageState(): string {
  const busyIn = (doc: Document, depth: number): boolean => {
    try {
      if (doc.getAnimations().some((a) => a.playState === 'running')) return true;
    } catch {
      return true;
    }
    for (const m of doc.querySelectorAll('video, audio')) if (!(m as HTMLMediaElement).paused) return true;
    for (const f of doc.querySelectorAll('iframe, frame, object, embed')) {
      let inner: Document | null = null;
      try {
        inner = (f as HTMLIFrameElement).contentDocument;
      } catch {
        inner = null;
      }
      // Another origin's frame paints in its own process (or may): its paints are not seen here.
      if (!inner || depth > 2 || busyIn(inner, depth + 1)) return true;
    }
    return false;
  };
  const v = window.visualViewport;
  const view = [scrollX, scrollY, innerWidth, innerHeight, v?.offsetLeft ?? 0, v?.offsetTop ?? 0, v?.scale ?? 1].join(',');
  return `${busyIn(document, 0) ? 1 : 0}|${view}`;
}

const STATE = inPage(pageState, null);
const BARRIER = `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(${STATE}))))`;

/** The page's state as read: busy, or the view it is scrolled to. */
export type PageState = { busy: true } | { busy: false; view: string };

function parseState(s: unknown): PageState | undefined {
  if (typeof s !== 'string') return undefined;
  const [b, view] = s.split('|');
  return b === '0' ? { busy: false, view: view ?? '' } : { busy: true };
}

interface Layer {
  layerId: string;
  parentLayerId?: string;
  backendNodeId?: number;
  drawsContent: boolean;
}

/**
 * Whether a layer tree has layers of its own elements beyond the document's: their opacity, filters and clips are the
 * compositor's and change without a paint event or a changed transform in the tree.
 */
export function composited(layers: Layer[]): boolean {
  return layers.filter((l) => l.drawsContent && l.backendNodeId !== undefined).length > PLAIN_LAYERS;
}
/** Layers of a plain page that draw and belong to a node (measured: bench/frame-probe-signals.mts at eed177b). */
const PLAIN_LAYERS = 1;

/** One page's damage signals. */
export class Damage {
  /** Screencast frames received. */
  frames = 0;
  /** Frames received whose acknowledgement Chromium has not answered yet. */
  unacked = 0;
  /** The latest layer tree, as JSON. */
  tree = '';
  /** The latest layer tree has layers the compositor may change unseen (see composited()). */
  composited = false;
  /** Bumped when the isolated world had to be made again (a new document): layer trees are enabled per document. */
  doc = 0;
  /** The screencast or the layer trees could not start: no cache for this page. */
  broken = false;
  /** Called after each screencast frame is counted. */
  onFrame: () => void = () => {};
  /** The images of the page's documents (animated ones make it busy). */
  readonly images: DocumentImages;
  private acked: Promise<void> = Promise.resolve();
  private ackedNow: () => void = () => {};
  private world: Promise<number> | undefined;

  constructor(private readonly cdp: CDPSession) {
    this.images = new DocumentImages(cdp);
  }

  async start(): Promise<void> {
    this.cdp.on('LayerTree.layerTreeDidChange', (e) => {
      const layers = (e.layers ?? []) as Layer[];
      this.tree = JSON.stringify(layers);
      this.composited = composited(layers);
    });
    this.cdp.on('Page.screencastFrame', (f) => {
      this.frames++;
      if (this.unacked++ === 0) this.acked = new Promise((r) => (this.ackedNow = r));
      this.onFrame();
      void this.cdp
        .send('Page.screencastFrameAck', { sessionId: f.sessionId })
        .catch(() => {})
        .finally(() => {
          if (--this.unacked === 0) this.ackedNow();
        });
    });
    // Page.getResourceContent (the images' bytes) answers only with the Page domain on (page-events.ts turns it on
    // for this session too).
    await this.cdp.send('Page.enable').catch(() => {
      this.broken = true;
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

  /**
   * The page's state in an isolated world (the page cannot replace what runs there), after two animation frames of
   * the page when `barrier`: a change made before has painted, and its layer tree (and mostly its frame) has come.
   * Undefined when it could not be read in time.
   */
  async state(d: Progress, barrier: boolean): Promise<PageState | undefined> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        this.world ??= this.makeWorld();
        const contextId = await d.race(this.world, 'frame cache world');
        const r = (await d.race(this.cdp.send('Runtime.evaluate', { expression: barrier ? BARRIER : STATE, contextId, awaitPromise: barrier, returnByValue: true }), 'frame cache state')) as {
          result?: { value?: unknown };
          exceptionDetails?: unknown;
        };
        if (!r.exceptionDetails) return parseState(r.result?.value);
      } catch {
        if (d.expired) return undefined;
      }
      // The world went with its document (a navigation): make it again, once.
      this.world = undefined;
    }
    return undefined;
  }

  /**
   * A world in the current document, then layer trees: a navigation after the world was made takes the world with
   * it (the next read fails and makes both again), so trees come for every document the world was read in.
   */
  private async makeWorld(): Promise<number> {
    this.doc++;
    const tree = (await this.cdp.send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } };
    const w = (await this.cdp.send('Page.createIsolatedWorld', { frameId: tree.frameTree.frame.id, worldName: WORLD, grantUniveralAccess: false })) as {
      executionContextId: number;
    };
    await this.cdp.send('LayerTree.enable').catch(() => {
      this.broken = true;
    });
    return w.executionContextId;
  }
}
