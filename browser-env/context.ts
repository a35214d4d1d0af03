// Context creation shared by the warm pool and fresh sandboxes: the same options, init script and first page,
// so a warm context is indistinguishable from a fresh one.
import { Progress } from '../sandbox/progress.ts';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import type { NetworkRules } from '../protocol/sandbox.ts';
import type { CaptureGate } from './capture-gate.ts';
import { newPageWithin } from './new-page.ts';
import { SETTLE_INIT_SCRIPT } from './settle.ts';
import { TITLE_WATCH_SCRIPT } from './title-watch.ts';
import { TimeoutError } from './util.ts';

/** The proxy settings the network gate hands out per sandbox (Playwright's `proxy` option). */
export interface ProxySettings {
  server: string;
  bypass?: string;
  username?: string;
  password?: string;
}

export interface UpstreamErrorEvent {
  url: string;
  error: 'dns_error' | 'connection_refused' | 'connection_reset' | 'timeout';
}

/** Structural view of browser-env/network-gate.ts (kept here so this module does not depend on its internals). */
export interface ProxyGate {
  /** `onUpstreamError` reports the gate's 502s: the only trace of a failed HTTPS tunnel, which Chromium shows
   * as ERR_TUNNEL_CONNECTION_FAILED whatever the cause. */
  register(
    sandboxId: string,
    rules: NetworkRules,
    onBlocked?: (e: { url: string; reason: string }) => void,
    onUpstreamError?: (e: UpstreamErrorEvent) => void,
  ): Promise<ProxySettings>;
  update(sandboxId: string, rules: NetworkRules): Promise<void> | void;
  unregister(sandboxId: string): Promise<void> | void;
}

/** Structural view of browser-env/pool.ts's PooledContext / ChromiumPool. */
interface PooledContextLike {
  context: BrowserContext;
  browserPid: number;
  /** The browser process's capture gate (capture-gate.ts); absent: captures go straight to Chromium. */
  captures?: CaptureGate;
  release(): Promise<void>;
}
export interface ContextSource {
  newContext(options: BrowserContextOptions): Promise<PooledContextLike>;
}

export interface ContextLook {
  viewport: { width: number; height: number };
  /** Device pixels per CSS px; 1 when absent. */
  device_scale_factor?: number;
  user_agent?: string;
  locale?: string;
  timezone?: string;
}

export const DEFAULT_LOOK: ContextLook = { viewport: { width: 1280, height: 1000 } };

/** Whether a sandbox with `look` may take a context created with DEFAULT_LOOK. */
export function isDefaultLook(look: ContextLook): boolean {
  return (
    look.viewport.width === DEFAULT_LOOK.viewport.width &&
    look.viewport.height === DEFAULT_LOOK.viewport.height &&
    (look.device_scale_factor ?? 1) === 1 &&
    look.user_agent === undefined &&
    look.locale === undefined &&
    look.timezone === undefined
  );
}

export function contextOptions(look: ContextLook, proxy: ProxySettings | undefined): BrowserContextOptions {
  const o: BrowserContextOptions = {
    viewport: { ...look.viewport },
    deviceScaleFactor: look.device_scale_factor ?? 1,
    acceptDownloads: true,
    ignoreHTTPSErrors: false,
  };
  if (look.user_agent !== undefined) o.userAgent = look.user_agent;
  if (look.locale !== undefined) o.locale = look.locale;
  if (look.timezone !== undefined) o.timezoneId = look.timezone;
  if (proxy) o.proxy = proxy;
  return o;
}

export interface Prepared {
  pooled: PooledContextLike;
  page: Page;
}

/**
 * New pooled context with the settle init script and one blank page, within `timeoutMs` in all. Releases the context
 * on failure. A renderer (or browser) that dies while the first page is made is not the caller's fault: the page
 * either fails ("Target crashed") or never comes (a killed spare renderer); the first attempt's page gets half the
 * time, and the context is then replaced once, in the time that is left.
 */
export async function prepareContext(source: ContextSource, options: BrowserContextOptions, timeoutMs: number): Promise<Prepared> {
  const p = Progress.after(timeoutMs, 'browser context');
  const left = () => Math.max(1, p.remaining());
  for (let attempt = 1; ; attempt++) {
    // A context the pool hands over after we gave up goes back to it, not into a leak.
    const pooled = await p.race(source.newContext(options), 'new browser context', { dispose: (late) => late.release() });
    try {
      await p.race(pooled.context.addInitScript(`${SETTLE_INIT_SCRIPT}\n${TITLE_WATCH_SCRIPT}`), 'init script');
      const page = await newPageWithin(pooled.context, attempt === 1 ? Math.max(1, left() / 2) : left());
      return { pooled, page };
    } catch (e) {
      await Progress.after(left(), 'release').race(pooled.release()).catch(() => {});
      if (attempt > 1 || !(isCrash(e) || e instanceof TimeoutError) || p.remaining() < 1000) throw e;
    }
  }
}

/** Playwright's word for a target that died under a call (a killed renderer or browser), as opposed to a timeout. */
function isCrash(e: unknown): boolean {
  return e instanceof Error && /Target crashed|has been closed|browser has disconnected/i.test(e.message);
}
