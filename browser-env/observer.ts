// The observer: capture (CDP, observe.ts), resize and SoM overlay, accessibility text and the tab list, put
// together into an Observation; a renderer that hangs or died while being observed is replaced and observed once
// more. Every wait is a slice of the step's Progress.
import type { Page } from 'playwright-core';
import type { ActionError, Observation, SomElement } from '../protocol/observation.ts';
import { GroveError } from '../protocol/errors.ts';
import { Progress } from '../sandbox/progress.ts';
import { accessibilityText } from './a11y.ts';
import { FrameCache } from './frame-cache.ts';
import { CaptureQueueTimeout } from './capture-gate.ts';
import { captureFormat, cdpCapture, finishShot, sendCapture, type EncodedShot, type ShotSettings } from './observe.ts';
import type { Recovery } from './recovery.ts';
import { firstLine, PROBE_MS, type SandboxState } from './sandbox-state.ts';
import { collectSom } from './som.ts';
import { recoveryMs } from './step-budget.ts';
import type { Tabs } from './tabs.ts';
import type { StepOptions } from './types.ts';
import { errMessage, quietly, TimeoutError } from './util.ts';
import { isBlankUrl } from './watchdogs.ts';

type Shot = EncodedShot & { captureMs: number; cached?: boolean };

/** Captures tried on a page that answers before the observation reports capture_timeout. */
const CAPTURE_TRIES = 3;
/** A capture is not tried again with less than this left of the deadline. */
const CAPTURE_MIN_MS = 1000;

/** What a failed capture means for the client: capture_timeout (a 503 at the API), or another observation failure. */
function observationFailure(e: unknown): ActionError {
  const message = `observation failed: ${firstLine(errMessage(e))}`;
  return { code: e instanceof TimeoutError ? 'capture_timeout' : 'action_failed', message };
}

/** What a capture is cached under: its settings and, with the SoM overlay, the labels drawn on it. */
function frameKey(settings: ShotSettings, som: SomElement[] | undefined): string {
  return JSON.stringify([settings, som ?? null]);
}

/** A cached shot answered again: the same bytes (decoded from the base64 only if asked), capture = the check's ms. */
function again(shot: Shot, ms: number): Shot {
  const copy = { base64: shot.base64, mime: shot.mime, width: shot.width, height: shot.height, scale_x: shot.scale_x, scale_y: shot.scale_y, ms: 0, captureMs: ms, cached: true };
  return Object.defineProperty(copy, 'bytes', { enumerable: true, get: () => shot.bytes }) as Shot;
}

export class Observer {
  /** Captures answered again while nothing painted (frame-cache.ts); the step pipeline invalidates it per action. */
  readonly frames = new FrameCache<Shot>();

  constructor(
    private readonly s: SandboxState,
    private readonly tabs: Tabs,
    private readonly recovery: Recovery,
  ) {}

  private settings(): ShotSettings {
    const o = this.s.options;
    return { viewport: o.viewport, scale: o.device_scale_factor ?? 1, format: o.screenshot_format, quality: o.screenshot_quality, resize: o.resize };
  }

  async shoot(pg: Page, som: SomElement[] | undefined, d: Progress): Promise<Shot> {
    const s = this.s;
    const settings = this.settings();
    const f = captureFormat(settings, som !== undefined);
    const budget = () => Math.max(1, d.within(Math.min(s.T, 5000)).remaining());
    // At a device scale other than 1 Chromium's capture paints frames of its own after its reply (it changes the
    // page's emulated metrics to capture and restores them: 2-3 frames each, measured): the damage count could never
    // tell a frame of ours from the page's, so no cache there.
    // As the sandbox asks, else as the server's configuration says (off by default; environment.ts resolves
    // frame_cache). frame-cache.ts says what keeps an answer from being stale: the layer tree, the busy check, and
    // animated images (frame-images.ts).
    const useCache = s.options.frame_cache === true && (s.options.device_scale_factor ?? 1) === 1;
    const key = useCache ? frameKey(settings, som) : '';
    let pending;
    if (useCache) {
      const t0 = Date.now();
      const cdp = await d.race(s.session(pg), 'CDP session');
      const hit = await this.frames.lookup(cdp, key, pg.url(), d);
      if (hit) return again(hit, Date.now() - t0);
      pending = await this.frames.begin(cdp, d);
    }
    let raw;
    // The capture's time as the step saw it: its wait for a turn on the browser (capture-gate.ts) included.
    const started = Date.now();
    for (let tries = 1; ; tries++) {
      try {
        const cdp = await d.race(s.session(pg), 'CDP session');
        // Through the browser process's capture gate (pool contexts have one): a burst is served in order.
        const gate = s.pooled.captures;
        raw = gate ? await gate.run(d, budget, () => sendCapture(cdp, f.format, f.quality)) : await cdpCapture(cdp, f.format, f.quality, budget());
        break;
      } catch (e) {
        // The deadline ran out waiting for a turn: an overloaded machine, not a page to retry or recover.
        if (e instanceof CaptureQueueTimeout) throw e;
        if (/Unable to capture screenshot/i.test(errMessage(e)) && tries === 1) {
          // Chromium has no compositor frame yet (seen on a page created a moment ago under load): wait for one
          // animation frame, then capture once more.
          await quietly(d.within(PROBE_MS).race(pg.evaluate('new Promise((r) => requestAnimationFrame(() => r(0)))'), 'first frame'));
          continue;
        }
        // A capture that ran out of time on a page that still answers is a starved machine, not a hung page:
        // capture again while the step's deadline leaves time for it (a hung page goes to recovery instead).
        if (!(e instanceof TimeoutError) || tries >= CAPTURE_TRIES || d.remaining() < CAPTURE_MIN_MS || !(await this.recovery.responsive(pg, d))) throw e;
      }
    }
    const captureMs = Date.now() - started;
    const shot: Shot = Object.assign(await finishShot(raw, settings, som), { captureMs }); // not a spread: that would decode the lazy bytes
    if (pending) this.frames.keep(pending, key, pg.url(), shot);
    if (useCache) shot.cached = false;
    return shot;
  }

  async observe(opts: StepOptions, error: ActionError | null, actionMs: number, settleMs: number, t0: number, deadline: Progress): Promise<Observation> {
    const s = this.s;
    // Capture, SoM and accessibility leave one recovery its time; the recovery itself may use the rest.
    const d = deadline.reserve(recoveryMs(s.options));
    // Downloads being saved, dialogs being answered, popups committing: give them a moment to report (the
    // page runs on meanwhile: the title its settle read may be out of date).
    if (s.pending.size) {
      s.episode.settledTitle = null;
      await quietly(d.within(Math.min(s.T, 3000)).race(Promise.all([...s.pending]), 'watchdog tasks'));
    }
    // After the watchdogs: a forbidden commit they reported is this step's error.
    if (!error && s.episode.pendingError) error = s.episode.pendingError;
    s.episode.pendingError = null;
    const wantSom = opts.som ?? s.options.som;
    const wantA11y = opts.accessibility ?? s.options.accessibility;
    const wantShot = opts.screenshot !== 'none';

    let som: SomElement[] | undefined;
    let pageState: Pick<Observation, 'scroll' | 'focused'> | undefined;
    let shot: Shot | undefined;
    // Tab titles are read while the screenshot is captured (those the browser holds once it is back: tab-title.ts);
    // if the page has to be replaced below, they are read again.
    let shotDone = () => {};
    const afterShot = wantShot ? new Promise<void>((ok) => (shotDone = ok)) : undefined;
    const tabsRead = this.tabs.list(d, undefined, afterShot);
    let replaced = false;
    for (let attempt = 0; attempt < 2; attempt++) {
      const pg = s.page;
      if (wantSom) {
        // A failed collection leaves an empty list: label actions must not act on a stale one.
        const c = await quietly(collectSom(pg, Math.max(1, d.within(Math.min(s.T, 3000)).remaining())));
        som = c?.elements ?? [];
        pageState = c ? { scroll: c.scroll, focused: c.focused } : undefined;
        s.episode.lastSom = som;
        s.episode.somPage = pg;
        s.episode.somStale = null;
      }
      try {
        if (wantShot) shot = await this.shoot(pg, opts.som_overlay && som ? som : undefined, d);
        break;
      } catch (e) {
        // A renderer that hangs or died after the action: reopen and observe the fresh page once. A capture that
        // never got its turn on the browser says nothing about the page.
        if (attempt > 0 || s.closed || e instanceof CaptureQueueTimeout) {
          error ??= observationFailure(e);
          break;
        }
        const crashed = s.crashed.has(pg);
        // The probe is recovery's first move and has its time (the reserve kept back from d): a capture that used up
        // d on a starved machine must not make a live page look hung for want of time to ask it.
        if (!crashed && (await this.recovery.responsive(pg, deadline))) {
          error ??= observationFailure(e);
          break;
        }
        replaced = true;
        if (s.contextLost) await this.recovery.replaceContext('browser process exited', deadline);
        else await this.recovery.replacePage(crashed ? 'crash' : 'unresponsive', deadline);
        // The crash/hang is what the policy must learn about, whatever the action reported before it.
        if (!error || crashed || error.code !== 'page_crashed') {
          error = crashed
            ? { code: 'page_crashed', message: 'The page crashed; it was reopened on its last URL.' }
            : { code: 'page_unresponsive', message: 'The page stopped responding; it was reopened on its last URL.' };
        }
      } finally {
        shotDone();
      }
    }

    let accessibility: string | undefined;
    if (wantA11y) {
      // Big pages take seconds to snapshot on a loaded machine; say so instead of dropping the field.
      accessibility = await accessibilityText(s.page, Math.max(1, deadline.within(Math.min(s.T, 8000)).remaining())).catch(
        (e: unknown) => `(accessibility tree unavailable: ${firstLine(errMessage(e))})`,
      );
    }

    // A page just reopened gets a recovery's time for its title, as its reload had: on a starved machine a 4 s slice
    // can run out. (The '' titles CI saw for reopened pages were not this: the gate had served its
    // connection_reset page for the reload, see gate-forward.ts.)
    const tabs = replaced ? await this.tabs.list(deadline, recoveryMs(s.options)) : await tabsRead;
    const url = s.page.url();
    const active = tabs.find((t) => t.active);
    if (!error && !isBlankUrl(url) && !url.startsWith('chrome-error:')) s.episode.lastGoodUrl = url;
    const events = s.episode.events;
    s.episode.events = [];
    s.episode.limitsReported.clear();
    const obs: Observation = {
      step: s.episode.steps,
      url,
      title: active?.title ?? '',
      tabs,
      viewport: { ...s.options.viewport },
      last_action_error: error,
      events,
      timings: { action: actionMs, settle: settleMs, capture: shot?.captureMs ?? 0, encode: shot?.ms ?? 0, total: 0 },
    };
    if (shot?.cached !== undefined) obs.timings.cached = shot.cached;
    if (shot) s.episode.lastShotSize = { width: shot.width, height: shot.height };
    if (shot) obs.screenshot = { mime: shot.mime, width: shot.width, height: shot.height, base64: shot.base64 ?? shot.bytes.toString('base64'), scale: shot.scale_x, scale_x: shot.scale_x, scale_y: shot.scale_y };
    if (som) obs.som = som;
    if (som && pageState) Object.assign(obs, pageState);
    if (accessibility !== undefined) obs.accessibility = accessibility;
    obs.timings.total = Date.now() - t0;
    return obs;
  }

  /** The current screenshot alone (GET .../screenshot, recording frame 0). */
  async screenshot(): Promise<{ mime: string; bytes: Buffer; width: number; height: number }> {
    const shot = await this.shoot(this.s.page, undefined, Progress.after(Math.min(this.s.T, 5000) * CAPTURE_TRIES, 'screenshot')).catch((e: unknown) => {
      throw e instanceof TimeoutError ? new GroveError('capture_timeout', `The screenshot could not be captured in time (${firstLine(errMessage(e))}); retry later.`, { retryAfter: 2 }) : e;
    });
    return { mime: shot.mime, bytes: shot.bytes, width: shot.width, height: shot.height };
  }
}
