// One browser sandbox: its lifecycle (a pooled context, a warm one when it fits; the start URL; episode resets;
// close) and the BrowserSandbox surface. The work is done by its parts, which share a SandboxState:
// tabs.ts (tabs, popups, navigation), page-events.ts (dialogs, downloads, crashes, closes), recovery.ts
// (crashed or hung renderer, lost context), observer.ts (capture, resize, observation) and step.ts (the
// step pipeline: action → settle → observe, under one Progress).
import { rm } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import type { Action } from '../protocol/action.ts';
import { GroveError } from '../protocol/errors.ts';
import type { ActionError, Observation, StepResult, Tab } from '../protocol/observation.ts';
import type { BrowserCreateOptions, SandboxStatus } from '../protocol/sandbox.ts';
import { Progress } from '../sandbox/progress.ts';
import { ActionFailure } from './actions.ts';
import { isRetryable, type ClassifiedError } from './classify.ts';
import { contextOptions, prepareContext } from './context.ts';
import { EpisodeState } from './episode-state.ts';
import { Observer } from './observer.ts';
import { PageEvents } from './page-events.ts';
import { Recovery } from './recovery.ts';
import { targetSize } from './resize.ts';
import { PROBE_MS, SandboxState, type SandboxDeps, type WarmClaim } from './sandbox-state.ts';
import { StepPipeline } from './step.ts';
import { Tabs } from './tabs.ts';
import type { BrowserResetInput, BrowserSandbox, DownloadInfo, ParseContext, StepOptions } from './types.ts';
import { delay, errMessage, quietly, TimeoutError } from './util.ts';

export type { GateSinks, SandboxDeps, WarmClaim } from './sandbox-state.ts';

const START_TRIES = 3;

export class ChromiumSandbox implements BrowserSandbox {
  readonly type = 'browser' as const;
  readonly id: string;
  /** The start URL's failure (the sandbox still works), or null. */
  startError: ActionError | null = null;

  private _status: SandboxStatus = 'creating';
  private busy = false;
  /** The step or observation running now (close() waits for it to stop before it frees the context). */
  private running: Promise<unknown> | null = null;
  private readonly readyPromise: Promise<void>;
  private readonly s: SandboxState;
  private readonly events: PageEvents;
  private readonly tabsPart: Tabs;
  private readonly observer: Observer;
  private readonly pipeline: StepPipeline;

  constructor(id: string, options: BrowserCreateOptions, private readonly deps: SandboxDeps) {
    this.id = id;
    this.s = new SandboxState(id, options, deps);
    this.events = new PageEvents(this.s);
    this.tabsPart = new Tabs(this.s, this.events);
    const recovery = new Recovery(this.s, this.tabsPart, this.events);
    this.observer = new Observer(this.s, this.tabsPart, recovery);
    this.pipeline = new StepPipeline(this.s, this.tabsPart, recovery, this.observer);
    this.readyPromise = this.start();
    // ready() hands the outcome to whoever asks; nobody asking must not be an unhandled rejection.
    this.readyPromise.catch(() => {});
  }

  /** The create options; an episode reset replaces start_url and network. */
  get options(): BrowserCreateOptions {
    return this.s.options;
  }

  get status(): SandboxStatus {
    if (this.s.closed) return 'closed';
    if (this._status === 'ready' && this.busy) return 'busy';
    return this._status;
  }

  get steps(): number {
    return this.s.episode.steps;
  }

  // Internals some real-browser tests reach for (the active page, its context, the tab list, the pooled context).
  private get page(): Page {
    return this.s.page;
  }
  private get context(): BrowserContext {
    return this.s.context;
  }
  private get tabs(): Page[] {
    return this.s.tabs;
  }
  private get pooled(): SandboxState['pooled'] {
    return this.s.pooled;
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  private async start(): Promise<void> {
    const s = this.s;
    try {
      const w = this.deps.warm;
      if (w) this.takeWarm(w);
      else {
        if (this.deps.gate) {
          s.gateKey = this.id;
          s.proxy = await Progress.after(s.T, 'network gate registration').race(this.deps.gate.register(this.id, s.options.network, (e) => this.events.onBlocked(e), (e) => this.events.onUpstream(e)));
        }
        await this.freshContext(s.options);
      }
      if (s.closed) throw new GroveError('sandbox_closed');
      if (s.options.start_url) await this.openStartUrl(s.options.start_url);
      this._status = 'ready';
    } catch (e) {
      this._status = 'error';
      await this.releaseResources();
      if (e instanceof GroveError) throw e;
      if (e instanceof TimeoutError) s.log.warn({ err: errMessage(e), sandbox: this.id }, 'browser sandbox creation ran out of time');
      else s.log.error({ err: errMessage(e), sandbox: this.id }, 'browser sandbox creation failed');
      throw contextFailure(e, 'Browser sandbox creation');
    }
  }

  private takeWarm(w: WarmClaim): void {
    this.s.gateKey = w.gateKey;
    this.s.proxy = w.proxy;
    w.setSinks({ blocked: (e) => this.events.onBlocked(e), upstream: (e) => this.events.onUpstream(e) });
    this.tabsPart.adopt(w.prepared);
  }

  /** A new context with this sandbox's proxy and the composer's extras (HAR). */
  private async freshContext(options: BrowserCreateOptions): Promise<void> {
    const extra = this.deps.extras;
    const ctxOptions = { ...contextOptions(options, this.s.proxy), ...extra?.contextOptions };
    this.tabsPart.adopt(await prepareContext(this.deps.source, ctxOptions, Math.max(this.s.T, 30_000)));
    // After adopt(): a failing hook leaves a context that releaseResources() frees.
    if (extra?.prepare) await Progress.after(this.s.T, 'context preparation').race(extra.prepare(this.s.context));
  }

  private async openStartUrl(url: string): Promise<void> {
    const s = this.s;
    const t0 = Date.now();
    let last: ClassifiedError | null = null;
    for (let i = 0; i < START_TRIES; i++) {
      try {
        await this.tabsPart.navigate('goto', url, Progress.after(s.T, 'start URL', { signal: s.lifeSignal }));
        last = null;
        break;
      } catch (e) {
        last = e instanceof ActionFailure ? { code: e.code, message: e.message } : { code: 'navigation_failed', message: errMessage(e) };
        // Retries are for transient failures, and a slow site must not triple the creation time.
        if (!isRetryable(last) || Date.now() - t0 > 2 * s.T || s.closed) break;
        await delay(200 * (i + 1));
      }
    }
    if (last) {
      this.startError = { code: last.code, message: `start URL ${url}: ${last.message}` };
      s.episode.pendingError = this.startError;
      s.log.info({ sandbox: this.id, code: last.code }, 'start URL failed');
    } else {
      s.episode.lastGoodUrl = s.page.url();
    }
  }

  /**
   * An episode reset: a fresh context (a warm one when the options allow it; no cookies, storage, history or
   * tabs from before), the new network rules and start URL, and a new EpisodeState (step count, events, labels,
   * downloads and the download count start again). The sandbox id, its settings and its gate registration (unless
   * a warm context brings its own) stay.
   */
  reset(input: BrowserResetInput = {}): Promise<void> {
    // Like a step, a reset the sandbox's close cuts short stops (its start URL load aborts) and answers sandbox_closed;
    // the close frees the context it opened.
    return this.run(() => this.replaceEpisode(input));
  }

  private async replaceEpisode(input: BrowserResetInput): Promise<void> {
    const s = this.s;
    s.replacingContext = true;
    const oldPooled = s.pooled;
    try {
      const options: BrowserCreateOptions = {
        ...s.options,
        ...(input.start_url !== undefined ? { start_url: input.start_url } : {}),
        ...(input.network !== undefined ? { network: input.network } : {}),
      };
      const warm = await this.deps.claimWarm?.(options);
      if (warm) {
        const oldKey = s.gateKey;
        this.takeWarm(warm);
        if (oldKey && this.deps.gate) await quietly(Promise.resolve(this.deps.gate.unregister(oldKey)));
      } else {
        if (s.gateKey && this.deps.gate) await this.deps.gate.update(s.gateKey, options.network);
        await this.freshContext(options);
      }
      s.options = options;
      const ended = s.episode;
      s.episode = new EpisodeState();
      this.startError = null;
      // The ended episode's downloads go with it: the next one starts with none, on disk as in downloads().
      const removed = Promise.all([...ended.dl.values()].map((d) => quietly(rm(d.path, { force: true }))));
      // The old context goes while the new one opens its start URL.
      const released = quietly(Progress.after(10_000, 'context release').race(oldPooled.release()));
      if (options.start_url) await this.openStartUrl(options.start_url);
      await Promise.all([released, removed]);
    } catch (e) {
      s.log.error({ err: errMessage(e), sandbox: this.id }, 'episode reset failed');
      throw contextFailure(e, 'Episode reset');
    } finally {
      s.replacingContext = false;
    }
  }

  async close(): Promise<void> {
    if (this.s.closed) return;
    // A step running now is aborted (its Progress carries the sandbox's signal) and answers sandbox_closed; the
    // context goes only once it stopped, so no recovery inside it opens a context after the close.
    this.s.markClosed();
    if (this.running) await quietly(Progress.after(PROBE_MS + this.s.T, 'stopping the running step').race(this.running));
    await quietly(this.readyPromise);
    await this.releaseResources();
    await quietly(rm(this.events.downloadDir(), { recursive: true, force: true }));
    this.deps.onClose?.();
  }

  private async releaseResources(): Promise<void> {
    const s = this.s;
    if (s.pooled) await quietly(Progress.after(10_000, 'context release').race(s.pooled.release()));
    if (s.gateKey && this.deps.gate) {
      const key = s.gateKey;
      s.gateKey = null;
      await quietly(Promise.resolve(this.deps.gate.unregister(key)));
    }
  }

  private enter(): void {
    if (this.s.closed) throw new GroveError('sandbox_closed');
    if (this._status !== 'ready') throw new GroveError('sandbox_not_ready');
    if (this.busy) throw new GroveError('sandbox_busy');
    this.busy = true;
  }

  step(actions: Action[], opts: StepOptions = {}): Promise<StepResult> {
    return this.run(() => this.pipeline.step(actions, opts));
  }

  observe(opts: StepOptions = {}): Promise<Observation> {
    return this.run(() => this.pipeline.observe(opts));
  }

  /** One operation at a time; one the sandbox's close cut short answers sandbox_closed, whatever it was doing. */
  private async run<T>(op: () => Promise<T>): Promise<T> {
    this.enter();
    const p = op();
    this.running = p;
    try {
      const r = await p;
      this.s.throwIfClosed();
      return r;
    } catch (e) {
      this.s.throwIfClosed();
      throw e;
    } finally {
      this.running = null;
      this.busy = false;
    }
  }

  async screenshot(): Promise<{ mime: string; bytes: Buffer; width: number; height: number }> {
    if (this.s.closed) throw new GroveError('sandbox_closed');
    await this.readyPromise;
    return this.observer.screenshot();
  }

  downloads(): DownloadInfo[] {
    return [...this.s.episode.dl.values()].map(({ path: _path, ...info }) => info);
  }

  downloadPath(id: string): string | undefined {
    return this.s.episode.dl.get(id)?.path;
  }

  parseContext(): ParseContext {
    const s = this.s;
    // Before any screenshot the size is still known: it only depends on the viewport and the resize setting.
    const size = s.episode.lastShotSize ?? targetSize(s.options.viewport, s.options.resize);
    // The grid divisor goes to the parser too, so parser and executor accept the same range (0..999 for 999).
    return {
      ...(s.episode.lastSom ? { som: s.episode.lastSom } : {}),
      width: size.width,
      height: size.height,
      rel_divisor: s.options.rel_divisor,
      ...(s.episode.pointer ? { pointer: { ...s.episode.pointer, space: 'css_px' as const } } : {}),
    };
  }

  async pageState(): Promise<{ url: string; title: string; tabs: Tab[] }> {
    if (this.s.closed) throw new GroveError('sandbox_closed');
    await this.readyPromise;
    const tabs = await this.tabsPart.list();
    return { url: this.s.page.url(), title: tabs.find((t) => t.active)?.title ?? '', tabs };
  }
}

/**
 * A failure to open a sandbox's context (creation or episode reset) as the client sees it. Out of time while the
 * browser opened the context or its page is a machine or browser too busy, not a fault of the request, and worth
 * a retry: a 503 like a full server, not a 500.
 */
function contextFailure(e: unknown, what: string): GroveError {
  if (e instanceof GroveError) return e;
  if (e instanceof TimeoutError) return new GroveError('browser_start_timeout', `${what} ran out of time: ${errMessage(e)}`, { cause: e });
  return new GroveError('internal_error', `${what} failed: ${errMessage(e)}`, { cause: e });
}
