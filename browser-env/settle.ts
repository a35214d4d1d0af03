// Settle by causality: after an action, wait for the work the action caused — not for the page to go quiet.
// The page attributes its own asynchronous work (timers, promise chains, MessageChannel, animation frames,
// fetch/XHR, WebSocket replies, the loading of a document the action navigated to): see settle-script.ts.
// Node adds what only the browser sees: navigation requests (a submit's request reaches Node only after the
// key is acknowledged, so the page is asked whether it started a navigation and the settle holds for its
// request and commit), and subresource loads (images, scripts, styles, frames) started since the action.
// Fetch/XHR are left to the page's attribution, so an ambient poll does not hold the step.
import { Progress } from '../sandbox/progress.ts';
import type { BrowserContext, Frame, Page, Request } from 'playwright-core';
import type { SettleReport } from '../protocol/observation.ts';
import { TimeoutError } from './util.ts';

export { SETTLE_INIT_SCRIPT } from './settle-script.ts';

/** Longest wait for the request of a navigation the page started (it normally shows up within milliseconds). */
const NAV_REQUEST_WAIT_MS = 2000;
/** Longest wait for the tab a click opened to be reported. */
const POPUP_WAIT_MS = 2000;
/** Request types Node never waits for: long-lived or not the page's doing. */
const IGNORED_TYPES = new Set(['websocket', 'eventsource', 'manifest', 'other', 'ping']);
/** Request types the page attributes itself (an ambient poll must not hold the step). */
const PAGE_ATTRIBUTED = new Set(['fetch', 'xhr']);

/** Requests started since `begin()`: main-frame documents, and subresources the settle waits for. */
export class NetworkTracker {
  private inflight = new Set<Request>();
  private docsInflight = new Set<Request>();
  private listeners = new Set<() => void>();
  private tracking = false;
  private documents = 0;
  private total = 0;
  /** Whether fetch/XHR are counted too (pages without the init script). */
  private countAll = false;

  attach(context: BrowserContext): void {
    context.on('request', (r) => {
      if (!this.tracking) return;
      const type = r.resourceType();
      if (IGNORED_TYPES.has(type)) return;
      if (isMainDocument(r)) {
        this.documents++;
        this.docsInflight.add(r);
      }
      this.inflight.add(r);
      if (!PAGE_ATTRIBUTED.has(type)) this.total++;
      this.bump();
    });
    const done = (r: Request) => {
      const a = this.inflight.delete(r);
      const b = this.docsInflight.delete(r);
      if (a || b) this.bump();
    };
    context.on('requestfinished', done);
    context.on('requestfailed', done);
  }

  /** Starts counting: only requests started from now on hold the settle. */
  begin(): void {
    this.inflight.clear();
    this.docsInflight.clear();
    this.documents = 0;
    this.total = 0;
    this.countAll = false;
    this.tracking = true;
    this.bump();
  }

  end(): void {
    this.tracking = false;
    this.inflight.clear();
    this.docsInflight.clear();
  }

  /** Counts fetch/XHR too (the page cannot attribute them: no init script there). */
  countEverything(): void {
    this.countAll = true;
    this.bump();
  }

  private bump(): void {
    for (const l of [...this.listeners]) l();
  }

  private busy(): boolean {
    for (const r of this.inflight) if (this.countAll || !PAGE_ATTRIBUTED.has(r.resourceType())) return true;
    return false;
  }

  /** Whether no waited-for request is in flight now. */
  idle(): boolean {
    return !this.busy();
  }

  /** Main-frame navigation requests started since `begin()`. */
  get documentRequests(): number {
    return this.documents;
  }

  /** Requests Node waited for (not fetch/XHR: the page reports those) started since `begin()`, documents aside. */
  get requests(): number {
    return this.total - this.documents;
  }

  /** Resolves true once a navigation request has been seen since `begin()`; false when `p` ends. */
  waitDocument(p: Progress): Promise<boolean> {
    return this.waitUntil(p, () => this.documents > 0);
  }

  /** Resolves true once no navigation request is in flight; false when `p` ends. */
  waitDocumentsDone(p: Progress): Promise<boolean> {
    return this.waitUntil(p, () => this.docsInflight.size === 0);
  }

  /** Resolves true once no waited-for request is in flight; false when `p` ends. */
  waitIdle(p: Progress): Promise<boolean> {
    return this.waitUntil(p, () => !this.busy());
  }

  /** Resolves true when `test` does (checked now and on every request event); false when `p` ends (time up or aborted). */
  private waitUntil(p: Progress, test: () => boolean): Promise<boolean> {
    if (test()) return Promise.resolve(true);
    if (p.expired) return Promise.resolve(false);
    const signal = p.signal;
    return new Promise((resolve) => {
      const finish = (v: boolean) => {
        signal.removeEventListener('abort', onEnd);
        this.listeners.delete(check);
        resolve(v);
      };
      const check = () => {
        if (test()) finish(true);
      };
      const onEnd = () => finish(test());
      signal.addEventListener('abort', onEnd, { once: true });
      this.listeners.add(check);
    });
  }
}

function isMainDocument(r: Request): boolean {
  try {
    return r.isNavigationRequest() && r.frame().parentFrame() === null;
  } catch {
    return false; // service-worker requests have no frame
  }
}

/** What the settle needs from the sandbox. */
export interface SettleHost {
  readonly page: Page;
  /** Evaluates `expression` in the active page's main frame (main world), awaiting a returned promise, within `p`. */
  evaluate(expression: string, p: Progress): Promise<unknown>;
  /** Resolves true once the active page is no longer `from` (a popup was followed); false when `p` ends. */
  waitPageChange(from: Page, p: Progress): Promise<boolean>;
}

interface PageAnswer {
  state: 'done' | 'cap' | 'navigation';
  waited: Record<string, number>;
  navAt: number;
  popupAt: number;
  pending: string[];
  title?: unknown;
}

/** What a settle reports, and the active page's title as it ended (null when Node cannot vouch for it). */
export interface SettleOutcome {
  report: SettleReport;
  /** Read by the page as its caused work was done, and nothing was waited for after that: the title the
   * observation would read a moment later (one renderer round trip less per step). */
  title: { page: Page; text: string } | null;
}

const probe = (since: number, ms: number, navSeen: number) =>
  `window.__grove && window.__grove.settle ? window.__grove.settle(${since}, ${Math.max(0, Math.round(ms))}, ${navSeen}) : null`;

/**
 * Waits for the work the action (started at `since`, epoch ms) caused, within `p` (its end is the settle's cap).
 * Call `net.begin()` before the action. `extraQuietMs` is added once the caused work is done.
 */
export async function settle(host: SettleHost, net: NetworkTracker, since: number, p: Progress, extraQuietMs = 0): Promise<SettleOutcome> {
  const t0 = Date.now();
  const waited: Record<string, number> = {};
  const add = (k: string, n: number) => {
    if (n > 0) waited[k] = (waited[k] ?? 0) + n;
  };
  let stopped: SettleReport['stopped'] = 'cap';
  let navigated = false;
  let navSeen = 0;
  let popupFollowed = false;
  const startPage = host.page;
  let title: SettleOutcome['title'] = null;
  try {
    for (;;) {
      const left = p.remaining();
      if (left <= 0) break;
      let answer: PageAnswer | null;
      try {
        // The page's own probe ends at `left`; the race gives it 200 ms to answer that it did.
        answer = (await host.evaluate(probe(since, left, navSeen), Progress.after(left + 200, 'settle probe'))) as PageAnswer | null;
      } catch (e) {
        if (e instanceof TimeoutError) break; // a busy page: the sandbox checks whether it still answers
        // The document went away under the probe (a navigation is committing) or has no context yet.
        navigated = true;
        await p.sleep(20);
        continue;
      }
      if (answer === null) {
        // No init script in this document (about:blank, a chrome-error page): wait for the network only.
        net.countEverything();
        if (await net.waitIdle(p)) stopped = navigated || net.documentRequests > 0 ? 'navigation' : 'caused_done';
        break;
      }
      for (const [k, n] of Object.entries(answer.waited)) add(k, n);
      if (answer.state === 'cap') break;
      if (answer.state === 'navigation') {
        navigated = true;
        navSeen = answer.navAt;
        add('navigation', 1);
        // A navigation to a scheme that loads nothing (mailto:) must not hold the step: bounded.
        if (await net.waitDocument(p.within(NAV_REQUEST_WAIT_MS))) await waitCommit(host.page, net, p);
        continue;
      }
      // A tab the action opened: the sandbox follows it; settle on the new page (its load is caused work).
      if (answer.popupAt >= since && !popupFollowed) {
        popupFollowed = true;
        if (host.page !== startPage || (await host.waitPageChange(startPage, p.within(POPUP_WAIT_MS)))) {
          add('new tab', 1);
          navSeen = 0;
          continue;
        }
      }
      // Caused work in the page is done; subresources and frames it started come next.
      const docsBefore = net.documentRequests;
      const loadsBefore = net.requests;
      const titledPage = host.page;
      const idleAtAnswer = net.idle();
      if (!(await net.waitIdle(p))) break;
      const frames = await settleFrames(host.page, since, p);
      for (const [k, n] of Object.entries(frames.waited)) add(k, n);
      if (!frames.done) break;
      if (net.documentRequests > docsBefore) {
        // The page navigated after all (a late redirect, a meta refresh): follow it.
        navigated = true;
        await waitCommit(host.page, net, p);
        continue;
      }
      if (extraQuietMs > 0) await p.sleep(extraQuietMs);
      stopped = navigated || net.documentRequests > 0 ? 'navigation' : 'caused_done';
      // Nothing ran on Node's side after the page's answer (no load, no frame, no extra quiet): its title stands.
      const nothingAfter = idleAtAnswer && extraQuietMs === 0 && frames.children === 0 && net.requests === loadsBefore && net.documentRequests === docsBefore;
      if (nothingAfter && typeof answer.title === 'string' && host.page === titledPage) title = { page: titledPage, text: answer.title };
      break;
    }
  } finally {
    add('request', net.requests);
    if (net.documentRequests && !waited.navigation) add('navigation', 1);
    net.end();
  }
  return { report: { ms: Date.now() - t0, stopped, waited_for: waited }, title };
}

/** Resolves when the active page's main frame commits a new document, or the navigation request ended without one. */
async function waitCommit(page: Page, net: NetworkTracker, p: Progress): Promise<void> {
  let onNav: ((f: Frame) => void) | undefined;
  const committed = new Promise<void>((resolve) => {
    onNav = (f: Frame) => {
      if (f === page.mainFrame()) resolve();
    };
    page.on('framenavigated', onNav);
  });
  try {
    await Promise.race([committed, net.waitDocumentsDone(p)]);
  } finally {
    if (onNav) page.off('framenavigated', onNav);
  }
}

/** Child frames (out-of-process ones included) run the same script: wait for what the action caused there. */
async function settleFrames(page: Page, since: number, p: Progress): Promise<{ done: boolean; waited: Record<string, number>; children: number }> {
  const waited: Record<string, number> = {};
  let done = true;
  // A frame without a URL never committed a document (its load was refused: a local-scheme src): Playwright would
  // wait for a context it never gets. Its request, if any, was the network's to wait for.
  const children = page.frames().filter((f) => f !== page.mainFrame() && !f.isDetached() && f.url() !== '');
  if (!children.length) return { done, waited, children: 0 };
  await Promise.all(
    children.map(async (f) => {
      const left = p.remaining();
      if (left <= 0) return;
      try {
        const a = (await Progress.after(left + 200, 'frame settle').race(f.evaluate(probe(since, left, Number.MAX_SAFE_INTEGER)))) as PageAnswer | null;
        if (!a) return;
        if (a.state === 'cap') done = false;
        for (const [k, n] of Object.entries(a.waited)) waited[`frame ${k}`] = (waited[`frame ${k}`] ?? 0) + n;
      } catch (e) {
        // A frame detached or navigating: its own load is a subresource Node already waited for.
        if (e instanceof TimeoutError) done = false;
      }
    }),
  );
  return { done, waited, children: children.length };
}
