// Adaptive settle after an action: wait until the network, the DOM and short timers have been quiet for
// `quietMs`, capped at `maxMs`. Network is watched from Node (context request events); DOM mutations and
// pending short timers are recorded in the page by an init script and checked by an in-page poll.
import type { BrowserContext, Page, Request } from 'playwright-core';
import { inPage } from './util.ts';

/**
 * Installed in every frame before page scripts run. Records the last DOM mutation time and the number of
 * pending short `setTimeout`s (≤ 2 s). Timers created from inside a tracked timer's callback beyond the
 * second generation are not counted, so self-rescheduling polling loops do not hold settling to the cap.
 */
export const SETTLE_INIT_SCRIPT = `(() => {
  if (window.__grove) return;
  const g = { lastMutation: Date.now(), pending: new Map(), depth: 0 };
  Object.defineProperty(window, '__grove', { value: g, enumerable: false, configurable: false });
  const origSet = window.setTimeout, origClear = window.clearTimeout;
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
      new MutationObserver(() => { g.lastMutation = Date.now(); })
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

const IGNORED_TYPES = new Set(['websocket', 'eventsource', 'manifest', 'other']);

/** Counts requests started since `begin()`; wakes waiters on every change. */
export class NetworkTracker {
  private inflight = new Set<Request>();
  private lastActivity = 0;
  private listeners = new Set<() => void>();
  private tracking = false;

  attach(context: BrowserContext): void {
    context.on('request', (r) => {
      if (!this.tracking || IGNORED_TYPES.has(r.resourceType())) return;
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

  /** Resolves true once no request is in flight and none started/ended for `quietMs`; false at `deadline`. */
  waitQuiet(quietMs: number, deadline: number): Promise<boolean> {
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
        if (this.inflight.size > 0) {
          // Request events call check() again; the timer only enforces the cap.
          timer = setTimeout(check, deadline - now);
          return;
        }
        const idle = now - this.lastActivity;
        if (idle >= quietMs) return finish(true);
        timer = setTimeout(check, Math.min(quietMs - idle, deadline - now));
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
