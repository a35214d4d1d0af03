// Adaptive settle after an action: wait until the network, the DOM and short timers have been quiet for
// `quietMs`, capped at `maxMs`. Network is watched from Node (context request events); DOM mutations and
// pending short timers are recorded in the page by an init script and checked by an in-page poll.
// A navigation the action started is waited for even when its request has not reached Node yet: Chromium
// runs a form submission (Enter in a field, a submit button) as a task after the input event is
// acknowledged, and the browser reports the request later still. The init script records every
// cross-document navigation the page starts (Navigation API `navigate` event); after the action the settle
// lets the page run its queued tasks, asks whether one started, and if so holds until the navigation's
// request is seen. Without this a loaded machine observes the old page after a submit.
import type { BrowserContext, Page, Request } from 'playwright-core';
import { inPage, TimeoutError, withTimeout } from './util.ts';

/**
 * Installed in every frame before page scripts run. Records the last DOM mutation time and the number of
 * pending short `setTimeout`s (≤ 2 s). Timers created from inside a tracked timer's callback beyond the
 * second generation are not counted, so self-rescheduling polling loops do not hold settling to the cap.
 */
export const SETTLE_INIT_SCRIPT = `(() => {
  if (window.__grove) return;
  const now = Date.now.bind(Date);
  const origSet = window.setTimeout, origClear = window.clearTimeout;
  const g = { lastMutation: now(), pending: new Map(), depth: 0, navAt: 0, navEvent: null, setTimeout: origSet.bind(window) };
  Object.defineProperty(window, '__grove', { value: g, enumerable: false, configurable: false });
  try {
    if (window.navigation) window.navigation.addEventListener('navigate', (e) => {
      if (!e.destination || !e.destination.sameDocument) { g.navAt = now(); g.navEvent = e; }
    });
  } catch {}
  window.setTimeout = function (fn, delay, ...args) {
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > 2000 || g.depth >= 2) return origSet.call(window, fn, delay, ...args);
    const myDepth = g.depth + 1;
    let id;
    const wrapped = function () {
      g.pending.delete(id);
      const prev = g.depth; g.depth = myDepth;
      try { return fn.apply(this, args); } finally { g.depth = prev; }
    };
    id = origSet.call(window, wrapped, delay);
    g.pending.set(id, true);
    return id;
  };
  window.clearTimeout = function (id) { g.pending.delete(id); return origClear.call(window, id); };
  // Look native to scripts that inspect timer functions.
  const nativeSet = origSet.toString(), nativeClear = origClear.toString();
  window.setTimeout.toString = () => nativeSet;
  window.clearTimeout.toString = () => nativeClear;
  const start = () => {
    try {
      new MutationObserver(() => { g.lastMutation = now(); })
        .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    } catch {}
  };
  start();
})();`;

/** True in the page when DOM and short timers have been quiet for `quiet` ms and the document is parsed. */
const PAGE_QUIET = (quiet: number) => {
  const g = (window as unknown as { __grove?: { lastMutation: number; pending: Map<number, boolean> } }).__grove;
  if (document.readyState === 'loading') return false;
  if (!g) return true;
  return g.pending.size === 0 && Date.now() - g.lastMutation >= quiet;
};

/**
 * In the page, after the action: lets two macrotasks run (a scheduled form submission goes first), then
 * answers whether this document started a cross-document navigation at or after `since` (epoch ms).
 */
const NAV_STARTED = async (since: number): Promise<boolean> => {
  type G = { navAt: number; navEvent: Event | null; setTimeout: (f: () => void, ms: number) => void };
  const g = (window as unknown as { __grove?: G }).__grove;
  if (!g) return false;
  for (let i = 0; i < 2; i++) await new Promise<void>((r) => g.setTimeout(r, 0));
  // A later listener may have cancelled it (a script-handled link): nothing will load.
  return g.navAt >= since && !g.navEvent?.defaultPrevented;
};

/** Longest wait for the request of a navigation the page started (it normally shows up within milliseconds). */
const NAV_REQUEST_WAIT_MS = 2000;

const IGNORED_TYPES = new Set(['websocket', 'eventsource', 'manifest', 'other']);

/** Counts requests started since `begin()`; wakes waiters on every change. */
export class NetworkTracker {
  private inflight = new Set<Request>();
  private lastActivity = 0;
  private listeners = new Set<() => void>();
  private tracking = false;
  private documents = 0;

  attach(context: BrowserContext): void {
    context.on('request', (r) => {
      if (!this.tracking || IGNORED_TYPES.has(r.resourceType())) return;
      if (r.isNavigationRequest()) this.documents++;
      this.inflight.add(r);
      this.bump();
    });
    const done = (r: Request) => {
      if (this.inflight.delete(r)) this.bump();
    };
    context.on('requestfinished', done);
    context.on('requestfailed', done);
  }

  /** Starts counting: only requests started from now on hold the settle. */
  begin(): void {
    this.inflight.clear();
    this.documents = 0;
    this.tracking = true;
    this.bump();
  }

  end(): void {
    this.tracking = false;
    this.inflight.clear();
  }

  private bump(): void {
    this.lastActivity = Date.now();
    for (const l of [...this.listeners]) l();
  }

  quietFor(ms: number): boolean {
    return this.inflight.size === 0 && Date.now() - this.lastActivity >= ms;
  }

  /** Navigation (document) requests started since `begin()`. */
  get documentRequests(): number {
    return this.documents;
  }

  /** Resolves true once a navigation request has been seen since `begin()`; false at `deadline`. */
  waitDocument(deadline: number): Promise<boolean> {
    // Request events call the test again; the timer only enforces the cap.
    return this.waitUntil(deadline, () => this.documents > 0 || deadline);
  }

  /** Resolves true once no request is in flight and none started/ended for `quietMs`; false at `deadline`. */
  waitQuiet(quietMs: number, deadline: number): Promise<boolean> {
    return this.waitUntil(deadline, (now) => {
      if (this.inflight.size > 0) return deadline;
      const idle = now - this.lastActivity;
      return idle >= quietMs || now + quietMs - idle;
    });
  }

  /**
   * Resolves true when `test` does; false at `deadline`. `test` runs now and on every request event, and
   * otherwise answers when to look again (epoch ms).
   */
  private waitUntil(deadline: number, test: (now: number) => true | number): Promise<boolean> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (v: boolean) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(v);
      };
      const check = () => {
        clearTimeout(timer);
        const now = Date.now();
        if (now >= deadline) return finish(false);
        const next = test(now);
        if (next === true) return finish(true);
        timer = setTimeout(check, Math.min(next, deadline) - now);
      };
      this.listeners.add(check);
      check();
    });
  }
}

export interface SettleResult {
  ms: number;
  /** False when the cap was reached before everything went quiet. */
  quiet: boolean;
}

/** Waits for network + page quiet. Call `net.begin()` before the action and pass its start time. */
export async function settle(page: Page, net: NetworkTracker, quietMs: number, maxMs: number, actionStart: number): Promise<SettleResult> {
  const t0 = Date.now();
  const deadline = Math.max(actionStart, t0) + maxMs;
  let quiet = false;
  try {
    // A navigation the page started whose request Node has not seen yet: wait for the request first.
    // Bounded: a navigation to a scheme that loads nothing (mailto:) must not hold the step to the cap.
    if (net.documentRequests === 0) {
      const started = await withTimeout(page.evaluate(inPage(NAV_STARTED, actionStart)), Math.max(1, deadline - Date.now()), 'navigation probe').then(
        (v) => v === true,
        // A busy page: the loop below reports it. Any other failure: the document went away under the
        // probe, so a navigation is committing.
        (e) => !(e instanceof TimeoutError),
      );
      if (started) await net.waitDocument(Math.min(deadline, Date.now() + NAV_REQUEST_WAIT_MS));
    }
    for (;;) {
      if (!(await net.waitQuiet(quietMs, deadline))) break;
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const pageOk = await page
        .waitForFunction(inPage(PAGE_QUIET, quietMs), undefined, { polling: 30, timeout: remaining })
        .then(
          () => true,
          () => false,
        );
      if (!pageOk) break;
      if (net.quietFor(quietMs)) {
        quiet = true;
        break;
      }
    }
  } finally {
    net.end();
  }
  return { ms: Date.now() - t0, quiet };
}
