// What one browser sandbox knows, shared by its parts (tabs.ts, page-events.ts, recovery.ts, observer.ts,
// step.ts, sandbox.ts): the current episode (episode-state.ts, replaced whole on reset), the context and its tabs,
// and the sandbox's own settings. Each part owns the behaviour; this holds the state and the few helpers all need.
import os from 'node:os';
import { Progress } from '../sandbox/progress.ts';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { GroveError } from '../protocol/errors.ts';
import type { EnvEvent } from '../protocol/observation.ts';
import type { BrowserCreateOptions } from '../protocol/sandbox.ts';
import type { Logger } from '../sandbox/log.ts';
import type { ContextSource, Prepared, ProxyGate, ProxySettings, UpstreamErrorEvent } from './context.ts';
import { DEFAULT_LIMITS, type LimitName, type SandboxLimits } from './limits.ts';
import { NetworkTracker } from './settle.ts';
import { TitleWatch } from './title-watch.ts';
import { EpisodeState } from './episode-state.ts';
import type { ContextExtras } from './types.ts';
import { errMessage } from './util.ts';

/** Upper bound for small page queries (title, focus checks, probes). */
// Generous: on a loaded 2-core machine a healthy renderer can take over a second to answer; a
// busy-looping one never does, so a longer probe only delays the (rare) hang verdict.
export const PROBE_MS = 3000;

/** How much longer than on an idle machine a responsiveness probe may take, at most (see probeMs). */
const STARVED_PROBE_FACTOR = 4;

/**
 * The responsiveness probe's time for a sandbox whose action timeout is `actionTimeoutMs`: min(PROBE_MS, T/4) on a
 * machine with a core to spare, and up to STARVED_PROBE_FACTOR times that while the run queue is longer than the
 * cores (the 1-minute load average per core): there a live renderer waits its turn behind the others, and a page
 * declared hung is reopened on its last URL, losing what the episode typed and chose (at load ~50 a form's
 * earlier fields went with a reopen that a probe of 2.5 s had called a hang). A busy-looping page never answers:
 * the longer probe only delays its verdict. `loadPerCore` is for tests.
 */
export function probeMs(actionTimeoutMs: number, loadPerCore = os.loadavg()[0] / os.availableParallelism()): number {
  const base = Math.min(PROBE_MS, actionTimeoutMs / 4);
  return base * Math.min(STARVED_PROBE_FACTOR, Math.max(1, loadPerCore));
}

/** Where a gate registration reports blocked requests and upstream failures. */
export interface GateSinks {
  blocked(e: { url: string; reason: string }): void;
  upstream(e: UpstreamErrorEvent): void;
}

/** A warm context handed to a sandbox, registered with the gate under `gateKey` with the sandbox's rules. */
export interface WarmClaim {
  prepared: Prepared;
  gateKey: string;
  proxy: ProxySettings;
  setSinks(sinks: GateSinks): void;
}

export interface SandboxDeps {
  source: ContextSource;
  gate?: ProxyGate;
  /** Downloads go to `<dataDir>/downloads/<sandboxId>/`. */
  dataDir: string;
  log: Logger;
  /** Context additions from the composer (HAR record/replay); never combined with `warm`. */
  extras?: ContextExtras;
  /** A warm context already registered with the gate under `gateKey` (rules already updated). */
  warm?: WarmClaim;
  /** A warm context for an episode reset with these options (undefined: none fits or none is ready). */
  claimWarm?(options: BrowserCreateOptions): Promise<WarmClaim | undefined>;
  /** Called once when the sandbox is closed (the environment forgets it). */
  onClose?: () => void;
  /** Per-sandbox limits (default: DEFAULT_LIMITS). */
  limits?: SandboxLimits;
}

export class SandboxState {
  /** What the current episode knows (episode-state.ts); an episode reset replaces it whole. */
  episode = new EpisodeState();

  // The rest outlives an episode. The context and what hangs off it (tabs, sessions, crash marks, network tracker,
  // watchdog work) lasts until an episode reset or a recovery swaps the context (tabs.ts adopt()).
  pooled!: Prepared['pooled'];
  context!: BrowserContext;
  /** Active tab. */
  private _page!: Page;
  /** Tabs in opening order (tab index = position). */
  tabs: Page[] = [];
  cdp = new Map<Page, Promise<CDPSession>>();
  /** The titles the pages told through their own sessions (title-watch.ts). */
  readonly titles = new TitleWatch();
  /** Watchdog work (downloads, dialogs, popups) the next observation waits for, bounded. */
  pending = new Set<Promise<unknown>>();
  crashed = new WeakSet<Page>();
  /** Pages we open or close ourselves (no popup / tab_closed events for them). */
  ownPageOps = 0;
  selfClosing = new WeakSet<Page>();
  net = new NetworkTracker();
  // The sandbox's own life: closed, its context lost or being replaced, its gate registration.
  closed = false;
  /** Aborted (with sandbox_closed) when the sandbox closes: every step's Progress is made with its signal. */
  private readonly life = new AbortController();
  contextLost = false;
  replacingContext = false;
  gateKey: string | null = null;
  proxy: ProxySettings | undefined;
  /** Waiters for the active page to change (a settle following a popup). */
  private pageWaiters = new Set<() => void>();
  readonly log: Logger;
  /** action_timeout_ms */
  readonly T: number;
  readonly limits: SandboxLimits;

  constructor(
    readonly id: string,
    public options: BrowserCreateOptions,
    readonly deps: SandboxDeps,
  ) {
    this.log = deps.log;
    this.T = options.action_timeout_ms;
    this.limits = deps.limits ?? DEFAULT_LIMITS;
  }

  /** The sandbox's life as a signal, for the Progress of every operation run in it (Progress.after's `signal`). */
  get lifeSignal(): AbortSignal {
    return this.life.signal;
  }

  /** Marks the sandbox closed and aborts what runs in it: a step's CDP calls, navigation and settle stop now. */
  markClosed(): void {
    this.closed = true;
    this.life.abort(new GroveError('sandbox_closed', `Sandbox ${this.id} was closed while an operation ran in it; the operation was stopped.`));
  }

  /** Throws sandbox_closed once the sandbox is closed: between the stages of a step, nothing runs on. */
  throwIfClosed(): void {
    if (this.closed) throw this.life.signal.reason instanceof GroveError ? this.life.signal.reason : new GroveError('sandbox_closed');
  }

  reportLimit(limit: LimitName, max: number, message: string): void {
    this.log.info({ sandbox: this.id, limit, max }, 'sandbox limit reached');
    if (this.episode.firstReport(limit)) this.episode.emit({ type: 'limit', limit, max, message });
  }

  get page(): Page {
    return this._page;
  }

  set page(pg: Page) {
    this._page = pg;
    for (const w of [...this.pageWaiters]) w();
  }

  /** Resolves true once the active page is no longer `from`; false when `p` ends (its time is up or it was aborted). */
  waitPageChange(from: Page, p: Progress): Promise<boolean> {
    if (this._page !== from) return Promise.resolve(true);
    if (p.expired) return Promise.resolve(false);
    const signal = p.signal;
    return new Promise<boolean>((resolve) => {
      const finish = () => {
        this.pageWaiters.delete(check);
        signal.removeEventListener('abort', finish);
        resolve(this._page !== from);
      };
      const check = () => {
        if (this._page !== from) finish();
      };
      signal.addEventListener('abort', finish, { once: true });
      this.pageWaiters.add(check);
    });
  }

  /** Queues an event for the next observation of the current episode (episode-state.ts bounds the queue). */
  emit(e: EnvEvent): void {
    this.episode.emit(e);
  }

  track(p: Promise<unknown>): void {
    const q = p.catch((e) => this.log.warn({ err: errMessage(e), sandbox: this.id }, 'watchdog task failed'));
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }

  /** The sandbox's own CDP session to `pg` (capture, title, settle probes), made once per page. */
  session(pg: Page): Promise<CDPSession> {
    let s = this.cdp.get(pg);
    if (!s) {
      // A session attached after we gave up is detached again (each holds a target attachment in the browser).
      const d = Progress.after(Math.min(this.T, 5000), 'CDP session');
      s = d.race(this.newSession(pg), 'CDP session', { dispose: (late) => late.detach() });
      s.catch(() => this.cdp.delete(pg));
      // In the background: a busy renderer must not hold the session's first use. Until the page has told its
      // title, titles are asked for (tab-title.ts).
      void s.then((c) => this.titles.attach(pg, c)).catch(() => {});
      this.cdp.set(pg, s);
    }
    return s;
  }

  /**
   * A CDP session to `pg`. At a device scale other than 1 it carries the page's metrics override itself: a capture
   * through a second session is otherwise CSS-px sized and painted without the scale (seen with Chromium 156),
   * while with the override it is the true `viewport × scale` device-px render Playwright's own screenshot makes.
   */
  private async newSession(pg: Page): Promise<CDPSession> {
    const c = await this.context.newCDPSession(pg);
    const scale = this.options.device_scale_factor ?? 1;
    if (scale !== 1) {
      const { width, height } = this.options.viewport;
      // Raced by the caller (a session that comes late is detached there); one that fails is detached here.
      await c.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: scale, mobile: false, screenWidth: width, screenHeight: height }).catch(async (e: unknown) => {
        await c.detach().catch(() => {});
        throw e;
      });
    }
    return c;
  }
}

export function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim().length > 0) ?? s;
  return line.trim().slice(0, 500);
}
