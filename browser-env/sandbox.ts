// One browser sandbox: a pooled BrowserContext, its tabs, the step loop (actions → settle → observation),
// and the recovery paths (crashed or hung renderer, dead browser process).
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Dialog, Download, Frame, Page } from 'playwright-core';
import type { Action } from '../protocol/action.ts';
import { GroveError } from '../protocol/errors.ts';
import type { ActionError, EnvEvent, Observation, ResolvedAction, SettleReport, SomElement, StepResult, Tab } from '../protocol/observation.ts';
import type { BrowserCreateOptions, SandboxStatus } from '../protocol/sandbox.ts';
import { Deadline } from '../sandbox/deadline.ts';
import type { Logger } from '../sandbox/log.ts';
import { accessibilityText } from './a11y.ts';
import { ActionFailure, type ActionHost, type ActionRecord, actionDef, NO_SETTLE } from './actions.ts';
import { classifyNavError, classifyResponse, isRetryable, normalizeUrl, type ClassifiedError } from './classify.ts';
import {
  contextOptions,
  prepareContext,
  type ContextSource,
  type Prepared,
  type ProxyGate,
  type ProxySettings,
  type UpstreamErrorEvent,
} from './context.ts';
import { resolvePoint, type CoordContext, type PointInput } from './coords.ts';
import { captureFormat, cdpCapture, finishShot, type EncodedShot, type ShotSettings } from './observe.ts';
import { targetSize } from './resize.ts';
import { NetworkTracker, settle, type SettleHost } from './settle.ts';
import { collectSom } from './som.ts';
import { observeBudgetMs, recoveryMs, stepBudgetMs, actionMs as actionBudgetMs, OBSERVE_MS } from './step-budget.ts';
import type { BrowserResetInput, BrowserSandbox, ContextExtras, DownloadInfo, ParseContext, StepOptions } from './types.ts';
import { delay, errMessage, quietly, TimeoutError, withTimeout } from './util.ts';
import { navigationAllowed, schemeOf } from './url-policy.ts';
import { isBlankUrl, watchPage, type WatchdogHost } from './watchdogs.ts';

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
}

/** Upper bound for small page queries (title, focus checks, probes). */
// Generous: on a loaded 2-core machine a healthy renderer can take over a second to answer; a
// busy-looping one never does, so a longer probe only delays the (rare) hang verdict.
const PROBE_MS = 3000;
const START_TRIES = 3;
/** Events kept between two observations; a few more for the ones a policy must not miss (crash, limits). */
const MAX_EVENTS = 200;
const RESERVED_EVENTS = 20;
const PRIORITY_EVENTS: ReadonlySet<EnvEvent['type']> = new Set(['crash']);

interface InternalDownload extends DownloadInfo {
  path: string;
}

export class ChromiumSandbox implements BrowserSandbox, WatchdogHost {
  readonly type = 'browser' as const;
  readonly id: string;
  /** The create options; an episode reset replaces start_url and network. */
  options: BrowserCreateOptions;
  /** The start URL's failure (the sandbox still works), or null. */
  startError: ActionError | null = null;

  private _steps = 0;
  private _status: SandboxStatus = 'creating';
  private busy = false;
  private closed = false;
  private readyPromise: Promise<void>;

  private pooled!: Prepared['pooled'];
  private context!: BrowserContext;
  /** Active tab. */
  private page!: Page;
  /** Tabs in opening order (tab index = position). */
  private tabs: Page[] = [];
  private cdp = new Map<Page, Promise<CDPSession>>();
  private events: EnvEvent[] = [];
  private pending = new Set<Promise<unknown>>();
  private crashed = new WeakSet<Page>();
  /** Pages we open or close ourselves (no popup / tab_closed events for them). */
  private ownPageOps = 0;
  private selfClosing = new WeakSet<Page>();
  private contextLost = false;
  private replacingContext = false;
  private net = new NetworkTracker();
  /** Settles waiting for a popup to become the active page. */
  private pageWaiters = new Set<() => void>();
  private lastSom: SomElement[] | null = null;
  /** The page the labels of `lastSom` were made on, and why they no longer describe it (set on navigation). */
  private somPage: Page | null = null;
  private somStale: string | null = null;
  /** Where the last pointer action left the mouse (CSS px): a bare click (Anthropic's) clicks there. */
  private pointer: { x: number; y: number } | null = null;
  /** Size of the last screenshot returned (image px). */
  private lastShotSize: { width: number; height: number } | null = null;
  private lastGoodUrl: string | null = null;
  private pendingError: ActionError | null = null;
  private lastBlocked: { url: string; at: number } | null = null;
  private lastUpstream: (UpstreamErrorEvent & { at: number }) | null = null;
  private dl = new Map<string, InternalDownload>();
  private dlSeq = 0;
  private gateKey: string | null = null;
  private proxy: ProxySettings | undefined;
  private readonly log: Logger;
  private readonly T: number;

  constructor(id: string, options: BrowserCreateOptions, private readonly deps: SandboxDeps) {
    this.id = id;
    this.options = options;
    this.log = deps.log;
    this.T = options.action_timeout_ms;
    this.readyPromise = this.start();
    // ready() hands the outcome to whoever asks; nobody asking must not be an unhandled rejection.
    this.readyPromise.catch(() => {});
  }

  get status(): SandboxStatus {
    if (this.closed) return 'closed';
    if (this._status === 'ready' && this.busy) return 'busy';
    return this._status;
  }

  get steps(): number {
    return this._steps;
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  // ---------------------------------------------------------------- lifecycle

  private async start(): Promise<void> {
    try {
      const w = this.deps.warm;
      if (w) {
        this.gateKey = w.gateKey;
        this.proxy = w.proxy;
        w.setSinks({ blocked: (e) => this.onBlocked(e), upstream: (e) => this.onUpstream(e) });
        this.adopt(w.prepared);
      } else {
        if (this.deps.gate) {
          this.gateKey = this.id;
          this.proxy = await withTimeout(
            this.deps.gate.register(
              this.id,
              this.options.network,
              (e) => this.onBlocked(e),
              (e) => this.onUpstream(e),
            ),
            this.T,
            'network gate registration',
          );
        }
        const extra = this.deps.extras;
        const ctxOptions = { ...contextOptions(this.options, this.proxy), ...extra?.contextOptions };
        this.adopt(await prepareContext(this.deps.source, ctxOptions, Math.max(this.T, 30_000)));
        // After adopt(): a failing hook leaves a context that releaseResources() frees.
        if (extra?.prepare) await withTimeout(extra.prepare(this.context), this.T, 'context preparation');
      }
      if (this.closed) throw new GroveError('sandbox_closed');
      if (this.options.start_url) await this.openStartUrl(this.options.start_url);
      this._status = 'ready';
    } catch (e) {
      this._status = 'error';
      await this.releaseResources();
      if (e instanceof GroveError) throw e;
      this.log.error({ err: errMessage(e), sandbox: this.id }, 'browser sandbox creation failed');
      throw new GroveError('internal_error', `Browser sandbox creation failed: ${errMessage(e)}`, { cause: e });
    }
  }

  private async openStartUrl(url: string): Promise<void> {
    const t0 = Date.now();
    let last: ClassifiedError | null = null;
    for (let i = 0; i < START_TRIES; i++) {
      try {
        await this.navigate('goto', url, Deadline.after(this.T, 'start URL'));
        last = null;
        break;
      } catch (e) {
        last = e instanceof ActionFailure ? { code: e.code, message: e.message } : { code: 'navigation_failed', message: errMessage(e) };
        // Retries are for transient failures, and a slow site must not triple the creation time.
        if (!isRetryable(last) || Date.now() - t0 > 2 * this.T) break;
        await delay(200 * (i + 1));
      }
    }
    if (last) {
      this.startError = { code: last.code, message: `start URL ${url}: ${last.message}` };
      this.pendingError = this.startError;
      this.log.info({ sandbox: this.id, code: last.code }, 'start URL failed');
    } else {
      this.lastGoodUrl = this.page.url();
    }
  }

  /** Takes over a prepared context: listeners, tab list. */
  private adopt(p: Prepared): void {
    this.pooled = p.pooled;
    this.context = p.pooled.context;
    this.contextLost = false;
    this.tabs = [];
    this.cdp.clear();
    this.context.setDefaultTimeout(this.T);
    this.context.setDefaultNavigationTimeout(this.T);
    this.net = new NetworkTracker();
    this.net.attach(this.context);
    const ctx = this.context;
    ctx.on('page', (pg) => this.onNewPage(pg));
    ctx.on('close', () => {
      if (ctx === this.context && !this.closed && !this.replacingContext) {
        this.contextLost = true;
        this.log.warn({ sandbox: this.id }, 'browser context closed unexpectedly');
      }
    });
    for (const pg of ctx.pages()) this.registerPage(pg);
    this.page = p.page;
    if (!this.tabs.includes(p.page)) this.registerPage(p.page);
  }

  /**
   * An episode reset: a fresh context (a warm one when the options allow it; no cookies, storage, history or
   * tabs from before), the new network rules and start URL; the step count starts again at 0. The sandbox id,
   * its settings and its gate registration (unless a warm context brings its own) stay.
   */
  async reset(input: BrowserResetInput = {}): Promise<void> {
    this.enter();
    this.replacingContext = true;
    const oldPooled = this.pooled;
    try {
      const options: BrowserCreateOptions = {
        ...this.options,
        ...(input.start_url !== undefined ? { start_url: input.start_url } : {}),
        ...(input.network !== undefined ? { network: input.network } : {}),
      };
      const warm = await this.deps.claimWarm?.(options);
      if (warm) {
        const oldKey = this.gateKey;
        this.gateKey = warm.gateKey;
        this.proxy = warm.proxy;
        warm.setSinks({ blocked: (e) => this.onBlocked(e), upstream: (e) => this.onUpstream(e) });
        this.adopt(warm.prepared);
        if (oldKey && this.deps.gate) await quietly(Promise.resolve(this.deps.gate.unregister(oldKey)));
      } else {
        if (this.gateKey && this.deps.gate) await this.deps.gate.update(this.gateKey, options.network);
        const extra = this.deps.extras;
        const ctxOptions = { ...contextOptions(options, this.proxy), ...extra?.contextOptions };
        this.adopt(await prepareContext(this.deps.source, ctxOptions, Math.max(this.T, 30_000)));
        if (extra?.prepare) await withTimeout(extra.prepare(this.context), this.T, 'context preparation');
      }
      this.options = options;
      this._steps = 0;
      this.events = [];
      this.lastSom = null;
      this.lastShotSize = null;
      this.lastGoodUrl = null;
      this.pendingError = null;
      this.startError = null;
      this.lastBlocked = null;
      this.lastUpstream = null;
      this.dl.clear();
      // The old context goes while the new one opens its start URL.
      const released = quietly(withTimeout(oldPooled.release(), 10_000, 'context release'));
      if (options.start_url) await this.openStartUrl(options.start_url);
      await released;
    } catch (e) {
      this.log.error({ err: errMessage(e), sandbox: this.id }, 'episode reset failed');
      throw e instanceof GroveError ? e : new GroveError('internal_error', `Episode reset failed: ${errMessage(e)}`, { cause: e });
    } finally {
      this.replacingContext = false;
      this.busy = false;
    }
  }

  private registerPage(pg: Page): void {
    if (this.tabs.includes(pg)) return;
    this.tabs.push(pg);
    pg.setDefaultTimeout(this.T);
    watchPage(pg, this);
  }

  private onNewPage(pg: Page): void {
    const known = this.tabs.includes(pg);
    this.registerPage(pg);
    if (known || this.ownPageOps > 0) return;
    // A page opened by the page (window.open, target=_blank): follow it, as a user would see it.
    this.page = pg;
    for (const w of [...this.pageWaiters]) w();
    const index = this.tabs.indexOf(pg);
    this.track(
      (async () => {
        // The popup's URL is known once its first navigation commits (it starts as about:blank).
        if (isBlankUrl(pg.url())) await quietly(pg.waitForURL((u) => !isBlankUrl(u.href), { waitUntil: 'commit', timeout: 2000 }));
        this.emit({ type: 'popup', url: pg.url(), tab_index: index, switched: true });
      })(),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await quietly(this.readyPromise);
    await this.releaseResources();
    await quietly(rm(this.downloadDir(), { recursive: true, force: true }));
    this.deps.onClose?.();
  }

  private async releaseResources(): Promise<void> {
    const pooled = this.pooled;
    if (pooled) await quietly(withTimeout(pooled.release(), 10_000, 'context release'));
    if (this.gateKey && this.deps.gate) {
      const key = this.gateKey;
      this.gateKey = null;
      await quietly(Promise.resolve(this.deps.gate.unregister(key)));
    }
  }

  // ---------------------------------------------------------------- watchdog host

  pushEvent(e: EnvEvent): void {
    this.emit(e);
  }

  /**
   * Queues an event for the next observation. A page spamming dialogs or blocked requests cannot grow the queue
   * without bound, nor crowd out a crash report (those have a reserve).
   */
  private emit(e: EnvEvent): void {
    if (this.events.length < MAX_EVENTS + (PRIORITY_EVENTS.has(e.type) ? RESERVED_EVENTS : 0)) this.events.push(e);
  }

  track(p: Promise<unknown>): void {
    const q = p.catch((e) => this.log.warn({ err: errMessage(e), sandbox: this.id }, 'watchdog task failed'));
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }

  onCrash(pg: Page): void {
    this.crashed.add(pg);
    this.log.warn({ sandbox: this.id, url: pg.url() }, 'page crashed');
  }

  onPageClosed(pg: Page): void {
    const index = this.tabs.indexOf(pg);
    if (index < 0) return;
    this.tabs.splice(index, 1);
    const cdp = this.cdp.get(pg);
    this.cdp.delete(pg);
    if (cdp) void cdp.then((s) => s.detach()).catch(() => {});
    if (this.selfClosing.has(pg) || this.closed) return;
    this.emit({ type: 'tab_closed', tab_index: index });
    if (pg === this.page && this.tabs.length) this.page = this.tabs[Math.min(index, this.tabs.length - 1)];
  }

  onNavigated(pg: Page, url: string): void {
    if (pg === this.somPage && !this.somStale) this.somStale = `the page navigated to ${url} after they were made`;
    if (pg !== this.page || isBlankUrl(url)) return;
    const last = this.events[this.events.length - 1];
    if (last?.type === 'navigation' && last.url === url) return;
    this.emit({ type: 'navigation', url });
  }

  onForbiddenCommit(pg: Page, frame: Frame): void {
    const url = frame.url();
    this.pendingError ??= { code: 'navigation_blocked', message: `${schemeOf(url)} URLs are not allowed in a sandbox (${url.slice(0, 200)}).` };
    this.emit({ type: 'network_blocked', url: url.slice(0, 2000), reason: `scheme ${schemeOf(url)} is not allowed` });
    this.log.warn({ sandbox: this.id, url: url.slice(0, 200) }, 'a frame committed a forbidden URL; sending it to about:blank');
    // Whatever opened it, the document must not stay: replace it by a blank one (bounded, tracked).
    this.track(quietly(withTimeout(frame.goto('about:blank'), PROBE_MS, 'leave forbidden URL')).then(() => undefined));
    if (pg === this.page && frame === pg.mainFrame()) this.lastBlocked = { url, at: Date.now() };
  }

  async saveDownload(d: Download): Promise<void> {
    const id = `dl${++this.dlSeq}`;
    const filename = safeName(d.suggestedFilename()) || 'download';
    const dir = this.downloadDir();
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${id}-${filename}`);
    const info: InternalDownload = { id, filename, size: 0, url: d.url(), created_at: new Date().toISOString(), path };
    try {
      await withTimeout(d.saveAs(path), 120_000, 'download');
      info.size = (await stat(path)).size;
    } catch (e) {
      info.failure = (await quietly(withTimeout(d.failure(), PROBE_MS, 'download failure'))) ?? errMessage(e);
    }
    this.dl.set(id, info);
    const ev: EnvEvent = { type: 'download', filename, size: info.size, id, url: info.url };
    if (info.failure) ev.failure = info.failure;
    this.emit(ev);
  }

  async answerDialog(dlg: Dialog): Promise<void> {
    const type = dlg.type() as 'alert' | 'confirm' | 'prompt' | 'beforeunload';
    const ev: EnvEvent = { type: 'dialog', dialog_type: type, message: dlg.message(), handled: 'accepted' };
    if (type === 'prompt') ev.prompt_value = dlg.defaultValue();
    await withTimeout(type === 'prompt' ? dlg.accept(dlg.defaultValue()) : dlg.accept(), PROBE_MS * 5, 'dialog answer');
    this.emit(ev);
  }

  private onBlocked(e: { url: string; reason: string }): void {
    this.lastBlocked = { url: e.url, at: Date.now() };
    this.emit({ type: 'network_blocked', url: e.url, reason: e.reason });
  }

  private onUpstream(e: UpstreamErrorEvent): void {
    this.lastUpstream = { ...e, at: Date.now() };
  }

  private downloadDir(): string {
    // Ids come from the server, but a path must never leave the downloads directory.
    return join(this.deps.dataDir, 'downloads', safeName(this.id).replace(/^$/, '_'));
  }

  downloads(): DownloadInfo[] {
    return [...this.dl.values()].map(({ path: _path, ...info }) => info);
  }

  downloadPath(id: string): string | undefined {
    return this.dl.get(id)?.path;
  }

  parseContext(): ParseContext {
    // Before any screenshot the size is still known: it only depends on the viewport and the resize setting.
    const size = this.lastShotSize ?? targetSize(this.options.viewport, this.options.resize);
    // The grid divisor goes to the parser too, so parser and executor accept the same range (0..999 for 999).
    return {
      ...(this.lastSom ? { som: this.lastSom } : {}),
      width: size.width,
      height: size.height,
      rel_divisor: this.options.rel_divisor,
      ...(this.pointer ? { pointer: { ...this.pointer, space: 'css_px' as const } } : {}),
    };
  }

  async pageState(): Promise<{ url: string; title: string; tabs: Tab[] }> {
    if (this.closed) throw new GroveError('sandbox_closed');
    await this.readyPromise;
    const tabs = await this.tabList();
    return { url: this.page.url(), title: tabs.find((t) => t.active)?.title ?? '', tabs };
  }

  // ---------------------------------------------------------------- recovery

  /** Replaces the active page by a fresh one on the last good URL (after a crash or a hang). */
  private async replacePage(reason: 'crash' | 'unresponsive', deadline: Deadline): Promise<boolean> {
    const d = deadline.within(recoveryMs(this.options), 'recovery');
    const old = this.page;
    const index = Math.max(0, this.tabs.indexOf(old));
    this.selfClosing.add(old);
    // Closing through the browser works even when the renderer is stuck in a busy loop.
    await quietly(d.within(3000).race(old.close({ runBeforeUnload: false }), 'close hung page'));
    this.onPageClosed(old);
    let recovered = false;
    try {
      this.ownPageOps++;
      let fresh: Page;
      try {
        fresh = await d.race(this.context.newPage(), 'new page');
      } finally {
        this.ownPageOps--;
      }
      this.tabs = this.tabs.filter((p) => p !== fresh);
      this.tabs.splice(index, 0, fresh);
      this.page = fresh;
      if (this.lastGoodUrl) await quietly(d.race(fresh.goto(this.lastGoodUrl, { waitUntil: 'domcontentloaded', timeout: Math.max(1, d.remaining()) }), 'reload last URL'));
      recovered = true;
    } catch (e) {
      this.log.error({ sandbox: this.id, err: errMessage(e) }, 'page replacement failed; replacing the context');
      recovered = await this.replaceContext('page replacement failed', deadline);
      return recovered;
    }
    this.emit({
      type: 'crash',
      message: reason === 'crash' ? 'The page crashed and was reopened on its last URL.' : 'The page stopped responding; it was closed and reopened on its last URL.',
      recovered,
    });
    return recovered;
  }

  /** After the browser process died (or the context broke): a fresh context from the pool. */
  private async replaceContext(why: string, deadline: Deadline): Promise<boolean> {
    const d = deadline.within(recoveryMs(this.options), 'recovery');
    this.replacingContext = true;
    let recovered = false;
    try {
      const old = this.pooled;
      await quietly(d.within(3000).race(old.release(), 'release dead context'));
      this.adopt(await prepareContext(this.deps.source, contextOptions(this.options, this.proxy), Math.max(1, d.remaining())));
      if (this.lastGoodUrl) await quietly(d.race(this.page.goto(this.lastGoodUrl, { waitUntil: 'domcontentloaded', timeout: Math.max(1, d.remaining()) }), 'reload last URL'));
      recovered = true;
    } catch (e) {
      this.log.error({ sandbox: this.id, err: errMessage(e) }, 'context replacement failed');
    } finally {
      this.replacingContext = false;
    }
    this.emit({ type: 'crash', message: `The browser was lost (${why}); a fresh one was opened on the last URL.`, recovered });
    return recovered;
  }

  /** Repairs crash damage noticed between steps; returns the error to report, if any. */
  private async ensureHealthy(d: Deadline): Promise<ActionError | null> {
    if (this.contextLost) {
      const ok = await this.replaceContext('browser process exited', d);
      return { code: 'page_crashed', message: `The browser process died; ${ok ? 'a fresh page was opened on the last URL' : 'recovery failed'}.` };
    }
    if (this.page.isClosed() && !this.crashed.has(this.page)) {
      // The active tab went away between steps (closed by its own script): show a neighbour or a blank tab.
      if (this.tabs.length) this.page = this.tabs[this.tabs.length - 1];
      else await this.newTab(undefined, d);
      return null;
    }
    if (this.crashed.has(this.page)) {
      await this.replacePage('crash', d);
      return { code: 'page_crashed', message: 'The page crashed; it was reopened on its last URL.' };
    }
    return null;
  }

  /** Turns any action failure into an ActionError, recovering the page when it crashed or hung. */
  private async classifyFailure(e: unknown, d: Deadline): Promise<ActionError> {
    if (e instanceof ActionFailure) return { code: e.code, message: e.message };
    const msg = firstLine(errMessage(e));
    if (this.contextLost) {
      await this.replaceContext('browser process exited', d);
      return { code: 'page_crashed', message: `The browser process died during the action: ${msg}` };
    }
    if (this.crashed.has(this.page) || /crash/i.test(msg)) {
      await this.replacePage('crash', d);
      return { code: 'page_crashed', message: `The page crashed during the action: ${msg}` };
    }
    const timedOut = e instanceof TimeoutError || (e instanceof Error && e.name === 'TimeoutError');
    if (timedOut) {
      if (!(await this.responsive(this.page, d))) {
        await this.replacePage('unresponsive', d);
        return { code: 'page_unresponsive', message: `The page did not respond within ${this.T} ms (busy script?); it was reopened.` };
      }
      return { code: 'timeout', message: msg };
    }
    return { code: 'action_failed', message: msg };
  }

  private async responsive(pg: Page, d: Deadline): Promise<boolean> {
    try {
      await d.within(Math.min(PROBE_MS, this.T / 4)).race(pg.evaluate('1'), 'responsiveness probe');
      return true;
    } catch {
      return false;
    }
  }

  // ---------------------------------------------------------------- action host

  private coordContext(): CoordContext {
    const v = this.options.viewport;
    return {
      viewport: v,
      image: targetSize(v, this.options.resize),
      defaultSpace: this.options.coordinate_space,
      defaultDivisor: this.options.rel_divisor,
    };
  }

  private host(deadline: Deadline): ActionHost {
    const self = this;
    return {
      get page() {
        return self.page;
      },
      viewport: this.options.viewport,
      deadline,
      resolve: (p: PointInput) => {
        const r = resolvePoint(p, this.coordContext());
        if (!r.ok) throw new ActionFailure('invalid_coordinates', r.message);
        return r;
      },
      somElement: (label: number) => {
        if (this.lastSom === null) return null;
        // Labels are boxes on the page they were made on: never click them on another page or document.
        const stale = this.somPage !== this.page ? 'another tab is active now' : this.somStale;
        if (stale) {
          throw new ActionFailure('labels_stale', `The Set-of-Mark labels are out of date (${stale}); observe again with som enabled and use the new labels.`);
        }
        return this.lastSom.find((e) => e.label === label);
      },
      navigate: (kind, url) => this.navigate(kind, url, deadline),
      newTab: (url) => this.newTab(url, deadline),
      switchTab: (i) => this.switchTab(i, deadline),
      closeTab: (i) => this.closeTab(i, deadline),
    };
  }

  private settleHost(): SettleHost {
    const self = this;
    return {
      get page() {
        return self.page;
      },
      evaluate: async (expression, timeoutMs) => {
        const run = async () => {
          const s = await this.session(this.page);
          const r = (await s.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })) as {
            result?: { value?: unknown };
            exceptionDetails?: unknown;
          };
          return r.exceptionDetails ? null : (r.result?.value ?? null);
        };
        return withTimeout(run(), timeoutMs, 'settle probe');
      },
      waitPageChange: (from, deadline) =>
        new Promise<boolean>((resolve) => {
          const check = () => {
            if (this.page === from && Date.now() < deadline) return;
            clearTimeout(timer);
            this.pageWaiters.delete(check);
            resolve(this.page !== from);
          };
          const timer = setTimeout(check, Math.max(0, deadline - Date.now()));
          this.pageWaiters.add(check);
          check();
        }),
    };
  }

  private async navigate(kind: 'goto' | 'back' | 'forward' | 'reload', url: string | undefined, d: Deadline): Promise<void> {
    const pg = this.page;
    const started = Date.now();
    const target = url === undefined ? undefined : normalizeUrl(url);
    if (target !== undefined && !navigationAllowed(target)) {
      throw new ActionFailure('navigation_blocked', `${schemeOf(target)} URLs are not allowed in a sandbox: only http, https, data:, blob: and about:blank.`);
    }
    // Leave a little of the action budget so Playwright's own (classifiable) error wins the race.
    const opts = { waitUntil: 'domcontentloaded' as const, timeout: Math.max(100, d.remaining() - 300) };
    let resp;
    try {
      if (kind === 'goto') resp = await pg.goto(target ?? 'about:blank', opts);
      else if (kind === 'back') resp = await pg.goBack(opts);
      else if (kind === 'forward') resp = await pg.goForward(opts);
      else resp = await pg.reload(opts);
    } catch (e) {
      const msg = firstLine(errMessage(e));
      let code = classifyNavError(msg);
      // The URL-scheme guard (url-policy.ts) refused a local URL somewhere along the way (a redirect, a wrapper).
      if (/ERR_ACCESS_DENIED/.test(msg)) code = 'navigation_blocked';
      // A blocked HTTPS target shows up as a failed tunnel: the gate's callback tells us why.
      if (this.lastBlocked && this.lastBlocked.at >= started - 50) code = 'network_blocked';
      else if (/ERR_TUNNEL_CONNECTION_FAILED/.test(msg) && this.lastUpstream && this.lastUpstream.at >= started - 50) {
        code = this.lastUpstream.error;
      }
      // A navigation that killed the renderer (chrome://crash, OOM) can report ERR_ABORTED before the crash
      // event: a probe settles which it was.
      if (code === 'navigation_failed' && !this.crashed.has(pg)) await this.responsive(pg, d);
      if (this.crashed.has(pg)) throw e;
      throw new ActionFailure(code, `${kind} ${target ?? ''} failed: ${msg}`.replace(/\s+/g, ' '));
    }
    if (resp) {
      const c = classifyResponse(resp.status(), resp.headers(), resp.url());
      if (c) throw new ActionFailure(c.code, c.message);
    }
  }

  private async newTab(url: string | undefined, d: Deadline): Promise<void> {
    // Checked before the tab exists: a refused URL leaves no empty tab behind.
    if (url && !navigationAllowed(normalizeUrl(url))) {
      throw new ActionFailure('navigation_blocked', `${schemeOf(url)} URLs are not allowed in a sandbox: only http, https, data:, blob: and about:blank.`);
    }
    this.ownPageOps++;
    let pg: Page;
    try {
      pg = await d.race(this.context.newPage(), 'new tab');
    } finally {
      this.ownPageOps--;
    }
    this.registerPage(pg);
    this.page = pg;
    await quietly(d.within(PROBE_MS).race(pg.bringToFront(), 'bring to front'));
    if (url) await this.navigate('goto', url, d);
  }

  private async switchTab(index: number, d: Deadline): Promise<void> {
    const pg = this.tabs[index];
    if (!pg) throw new ActionFailure('no_such_tab', `No tab ${index}; there are ${this.tabs.length} tab(s).`);
    this.page = pg;
    await quietly(d.within(PROBE_MS).race(pg.bringToFront(), 'bring to front'));
  }

  private async closeTab(index: number | undefined, d: Deadline): Promise<void> {
    const i = index ?? this.tabs.indexOf(this.page);
    const pg = this.tabs[i];
    if (!pg) throw new ActionFailure('no_such_tab', `No tab ${index}; there are ${this.tabs.length} tab(s).`);
    this.selfClosing.add(pg);
    await quietly(d.race(pg.close({ runBeforeUnload: false }), 'close tab'));
    this.onPageClosed(pg);
    if (!this.tabs.length) await this.newTab(undefined, d);
    else if (pg === this.page || !this.tabs.includes(this.page)) this.page = this.tabs[Math.min(i, this.tabs.length - 1)];
  }

  // ---------------------------------------------------------------- step / observe

  private enter(): void {
    if (this.closed) throw new GroveError('sandbox_closed');
    if (this._status !== 'ready') throw new GroveError('sandbox_not_ready');
    if (this.busy) throw new GroveError('sandbox_busy');
    this.busy = true;
  }

  async step(actions: Action[], opts: StepOptions = {}): Promise<StepResult> {
    this.enter();
    try {
      const t0 = Date.now();
      this._steps++;
      const useSettle = opts.settle ?? this.options.settle;
      // The one deadline of this step: every wait below is bounded by a slice of it (step-budget.ts).
      const deadline = Deadline.after(stepBudgetMs(this.options, actions, useSettle), 'step');
      const rec2 = 2 * recoveryMs(this.options);
      // Actions and settles leave the observation and two recoveries their time.
      const work = deadline.reserve(OBSERVE_MS + rec2);
      const recovery = deadline.reserve(OBSERVE_MS);
      const resolved: ResolvedAction[] = [];
      let error: ActionError | null = await this.ensureHealthy(recovery);
      let done = false;
      let answer: string | undefined;
      let actionMs = 0;
      let settleMs = 0;
      let settled: SettleReport | undefined;
      for (const a of error ? [] : actions) {
        const rec: ActionRecord = {};
        const ta = Date.now();
        const wantSettle = useSettle && !NO_SETTLE.has(a.action);
        if (wantSettle) this.net.begin();
        let err: ActionError | null = null;
        // The action plus the responsiveness probe stay within its budget (action_timeout_ms, or a wait's length).
        const budget = actionBudgetMs(this.options, a);
        const ad = work.within(a.action === 'wait' ? budget : Math.max(budget - Math.min(PROBE_MS, budget / 4), budget * 0.75), `action ${a.action}`);
        try {
          const r = await ad.race(actionDef(a.action).run(this.host(ad), a, rec), `action ${a.action}`);
          if (r?.done) {
            done = true;
            answer = r.answer;
          }
        } catch (e) {
          err = await this.classifyFailure(e, recovery);
        }
        const ms = Date.now() - ta;
        actionMs += ms;
        if (wantSettle && !err) {
          // Settle's own cap (settle_max_ms after the action), never past the step's work deadline.
          const settleDeadline = Math.min(Math.max(ta, Date.now()) + this.options.settle_max_ms, work.at);
          const st = await settle(this.settleHost(), this.net, ta, settleDeadline, this.options.settle_quiet_ms);
          settleMs += st.ms;
          settled = mergeSettle(settled, st);
          // Settling to the cap may mean a busy page (the input was acknowledged before the script spun).
          if (st.stopped === 'cap' && !(await this.responsive(this.page, recovery))) {
            err = await this.classifyFailure(new TimeoutError(`settle after ${a.action}`, this.options.settle_max_ms), recovery);
          }
        } else this.net.end();
        resolved.push({ action: a, ...rec, error: err, ms });
        if (!err && rec.css) this.pointer = rec.to_css ?? rec.css;
        if (err) {
          error = err;
          break;
        }
        if (done) break;
      }
      const observation = await this.buildObservation(opts, error, actionMs, settleMs, t0, deadline);
      if (settled) observation.settle = settled;
      const result: StepResult = { observation, actions: resolved, done };
      if (answer !== undefined) result.answer = answer;
      return result;
    } finally {
      this.busy = false;
    }
  }

  async observe(opts: StepOptions = {}): Promise<Observation> {
    this.enter();
    try {
      const t0 = Date.now();
      const deadline = Deadline.after(observeBudgetMs(this.options), 'observation');
      const error = await this.ensureHealthy(deadline.reserve(OBSERVE_MS));
      return await this.buildObservation(opts, error, 0, 0, t0, deadline);
    } finally {
      this.busy = false;
    }
  }

  async screenshot(): Promise<{ mime: string; bytes: Buffer; width: number; height: number }> {
    if (this.closed) throw new GroveError('sandbox_closed');
    await this.readyPromise;
    const shot = await this.shoot(this.page, undefined, Deadline.after(Math.min(this.T, 5000), 'screenshot'));
    return { mime: shot.mime, bytes: shot.bytes, width: shot.width, height: shot.height };
  }

  private shotSettings(): ShotSettings {
    return {
      viewport: this.options.viewport,
      format: this.options.screenshot_format,
      quality: this.options.screenshot_quality,
      resize: this.options.resize,
    };
  }

  private session(pg: Page): Promise<CDPSession> {
    let s = this.cdp.get(pg);
    if (!s) {
      s = withTimeout(this.context.newCDPSession(pg), Math.min(this.T, 5000), 'CDP session');
      s.catch(() => this.cdp.delete(pg));
      this.cdp.set(pg, s);
    }
    return s;
  }

  private async shoot(pg: Page, som: SomElement[] | undefined, d: Deadline): Promise<EncodedShot & { captureMs: number }> {
    const s = this.shotSettings();
    const f = captureFormat(s, som !== undefined);
    const budget = () => Math.max(1, d.within(Math.min(this.T, 5000)).remaining());
    let raw;
    try {
      raw = await cdpCapture(await d.race(this.session(pg), 'CDP session'), f.format, f.quality, budget());
    } catch (e) {
      if (!/Unable to capture screenshot/i.test(errMessage(e))) throw e;
      // Chromium has no compositor frame yet (seen on a page created a moment ago under load): wait for one
      // animation frame, then capture once more.
      await quietly(d.within(PROBE_MS).race(pg.evaluate('new Promise((r) => requestAnimationFrame(() => r(0)))'), 'first frame'));
      raw = await cdpCapture(await d.race(this.session(pg), 'CDP session'), f.format, f.quality, budget());
    }
    const shot = await finishShot(raw, s, som);
    return Object.assign(shot, { captureMs: raw.ms }); // not a spread: that would decode the lazy bytes
  }

  private async buildObservation(
    opts: StepOptions,
    error: ActionError | null,
    actionMs: number,
    settleMs: number,
    t0: number,
    deadline: Deadline,
  ): Promise<Observation> {
    // Capture, SoM and accessibility leave one recovery its time; the recovery itself may use the rest.
    const d = deadline.reserve(recoveryMs(this.options));
    // Downloads being saved, dialogs being answered, popups committing: give them a moment to report.
    if (this.pending.size) await quietly(d.within(Math.min(this.T, 3000)).race(Promise.all([...this.pending]), 'watchdog tasks'));
    // After the watchdogs: a forbidden commit they reported is this step's error.
    if (!error && this.pendingError) error = this.pendingError;
    this.pendingError = null;
    const wantSom = opts.som ?? this.options.som;
    const wantA11y = opts.accessibility ?? this.options.accessibility;
    const wantShot = opts.screenshot !== 'none';

    let som: SomElement[] | undefined;
    let shot: (EncodedShot & { captureMs: number }) | undefined;
    // Tab titles are read while the screenshot is captured (each is a renderer round trip); if the page
    // has to be replaced below, they are read again.
    const tabsRead = this.tabList(d);
    let replaced = false;
    for (let attempt = 0; attempt < 2; attempt++) {
      const pg = this.page;
      if (wantSom) {
        // A failed collection leaves an empty list: label actions must not act on a stale one.
        som = (await quietly(collectSom(pg, Math.max(1, d.within(Math.min(this.T, 3000)).remaining())))) ?? [];
        this.lastSom = som;
        this.somPage = pg;
        this.somStale = null;
      }
      try {
        if (wantShot) shot = await this.shoot(pg, opts.som_overlay && som ? som : undefined, d);
        break;
      } catch (e) {
        // A renderer that hangs or died after the action: reopen and observe the fresh page once.
        if (attempt > 0 || this.closed) {
          error ??= { code: 'action_failed', message: `observation failed: ${firstLine(errMessage(e))}` };
          break;
        }
        const crashed = this.crashed.has(pg);
        if (!crashed && (await this.responsive(pg, d))) {
          error ??= { code: 'action_failed', message: `observation failed: ${firstLine(errMessage(e))}` };
          break;
        }
        replaced = true;
        if (this.contextLost) await this.replaceContext('browser process exited', deadline);
        else await this.replacePage(crashed ? 'crash' : 'unresponsive', deadline);
        // The crash/hang is what the policy must learn about, whatever the action reported before it.
        if (!error || crashed || error.code !== 'page_crashed') {
          error = crashed
            ? { code: 'page_crashed', message: 'The page crashed; it was reopened on its last URL.' }
            : { code: 'page_unresponsive', message: 'The page stopped responding; it was reopened on its last URL.' };
        }
      }
    }

    let accessibility: string | undefined;
    if (wantA11y) {
      // Big pages take seconds to snapshot on a loaded machine; say so instead of dropping the field.
      accessibility = await accessibilityText(this.page, Math.max(1, deadline.within(Math.min(this.T, 8000)).remaining())).catch(
        (e: unknown) => `(accessibility tree unavailable: ${firstLine(errMessage(e))})`,
      );
    }

    const tabs = replaced ? await this.tabList(deadline) : await tabsRead;
    const url = this.page.url();
    const active = tabs.find((t) => t.active);
    if (!error && !isBlankUrl(url) && !url.startsWith('chrome-error:')) this.lastGoodUrl = url;
    const events = this.events;
    this.events = [];
    const total = Date.now() - t0;
    const obs: Observation = {
      step: this._steps,
      url,
      title: active?.title ?? '',
      tabs,
      viewport: { ...this.options.viewport },
      last_action_error: error,
      events,
      timings: {
        action: actionMs,
        settle: settleMs,
        capture: shot?.captureMs ?? 0,
        encode: shot?.ms ?? 0,
        total,
      },
    };
    if (shot) this.lastShotSize = { width: shot.width, height: shot.height };
    if (shot) obs.screenshot = { mime: shot.mime, width: shot.width, height: shot.height, base64: shot.base64 ?? shot.bytes.toString('base64'), scale: shot.scale_x, scale_x: shot.scale_x, scale_y: shot.scale_y };
    if (som) obs.som = som;
    if (accessibility !== undefined) obs.accessibility = accessibility;
    obs.timings.total = Date.now() - t0;
    return obs;
  }

  /**
   * The page's title. The active page's comes through the sandbox's own CDP session (one Runtime.evaluate):
   * page.title() does the same through Playwright's utility world and API wrappers, which cost ~7 % of the
   * steps/s at 16 sessions on this 2-core machine (bench/core.bench.ts). Background tabs have no session.
   */
  private async title(pg: Page): Promise<string> {
    if (pg !== this.page || !this.cdp.has(pg)) return pg.title();
    try {
      const r = (await (await this.session(pg)).send('Runtime.evaluate', { expression: 'document.title', returnByValue: true })) as {
        result?: { value?: unknown };
      };
      if (typeof r.result?.value === 'string') return r.result.value;
    } catch {
      // A document being replaced has no context to evaluate in: Playwright's title() waits for the new one.
    }
    return pg.title();
  }

  private async tabList(d?: Deadline): Promise<Tab[]> {
    return Promise.all(
      this.tabs.map(async (pg, index) => ({
        index,
        url: pg.url(),
        // The active page has been probed by now: give it time on a loaded machine; background tabs get less.
        title: (await quietly((d ?? Deadline.after(5000, 'titles')).within(pg === this.page ? Math.min(this.T, 5000) : 1500).race(this.title(pg), 'title'))) ?? '',
        active: pg === this.page,
      })),
    );
  }
}

/** One report for a step of several actions: times and counts add up, the worst stop reason wins. */
function mergeSettle(a: SettleReport | undefined, b: SettleReport): SettleReport {
  if (!a) return b;
  const rank = { caused_done: 0, navigation: 1, cap: 2 } as const;
  const waited_for = { ...a.waited_for };
  for (const [k, n] of Object.entries(b.waited_for)) waited_for[k] = (waited_for[k] ?? 0) + n;
  return { ms: a.ms + b.ms, stopped: rank[b.stopped] >= rank[a.stopped] ? b.stopped : a.stopped, waited_for };
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim().length > 0) ?? s;
  return line.trim().slice(0, 500);
}

/** A download's suggested name without path parts or leading dots. */
function safeName(name: string): string {
  return name.replace(/[/\\\0]/g, '_').replace(/^\.+/, '').slice(0, 200);
}
