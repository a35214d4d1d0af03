// Tabs and popups: taking over a context's pages, following pages the page opens, opening, switching and
// closing tabs, navigating the active one, and the tab list (with titles) of an observation.
import type { Page } from 'playwright-core';
import type { Tab } from '../protocol/observation.ts';
import { Progress } from '../sandbox/progress.ts';
import { ActionFailure } from './actions.ts';
import { classifyNavError, classifyResponse, normalizeUrl } from './classify.ts';
import type { Prepared } from './context.ts';
import type { PageEvents } from './page-events.ts';
import { pageTitle } from './tab-title.ts';
import { firstLine, PROBE_MS, type SandboxState } from './sandbox-state.ts';
import { newPageWithin } from './new-page.ts';
import { NetworkTracker } from './settle.ts';
import { errMessage, quietly } from './util.ts';
import { navigationAllowed, schemeOf } from './url-policy.ts';
import { isBlankUrl, watchPage } from './watchdogs.ts';

export type NavKind = 'goto' | 'back' | 'forward' | 'reload';

export class Tabs {
  /** Set by the recovery part: a probe whether a page still answers (a navigation error may be a crash). */
  probe: (pg: Page, d: Progress) => Promise<boolean> = async () => true;

  constructor(
    private readonly s: SandboxState,
    private readonly events: PageEvents,
  ) {}

  /** Takes over a prepared context: listeners, tab list, network tracking. */
  adopt(p: Prepared): void {
    const s = this.s;
    s.pooled = p.pooled;
    s.context = p.pooled.context;
    s.contextLost = false;
    s.tabs = [];
    s.cdp.clear();
    s.context.setDefaultTimeout(s.T);
    s.context.setDefaultNavigationTimeout(s.T);
    s.net = new NetworkTracker();
    s.net.attach(s.context);
    const ctx = s.context;
    ctx.on('page', (pg) => this.onNewPage(pg));
    ctx.on('close', () => {
      if (ctx === s.context && !s.closed && !s.replacingContext) {
        s.contextLost = true;
        s.log.warn({ sandbox: s.id }, 'browser context closed unexpectedly');
      }
    });
    for (const pg of ctx.pages()) this.register(pg);
    s.page = p.page;
    if (!s.tabs.includes(p.page)) this.register(p.page);
  }

  register(pg: Page): void {
    if (this.s.tabs.includes(pg)) return;
    this.s.tabs.push(pg);
    pg.setDefaultTimeout(this.s.T);
    watchPage(pg, this.events);
    const s = this.s;
    this.events.watchDownloadBytes(pg).catch((err: unknown) => {
      // A page closed at once, or a renderer too busy to answer: the size is still checked when the download ends.
      if (!pg.isClosed()) s.log.debug({ err: errMessage(err), sandbox: s.id }, 'download byte watch not set up');
    });
  }

  private onNewPage(pg: Page): void {
    const s = this.s;
    const known = s.tabs.includes(pg);
    if (!known && s.ownPageOps === 0 && s.tabs.length >= s.limits.maxTabs) {
      // A popup storm: the page gets no more tabs than the limit; the new one is closed before it is followed.
      s.selfClosing.add(pg);
      s.track(quietly(Progress.after(PROBE_MS, 'close popup over the tab limit').race(pg.close({ runBeforeUnload: false }))));
      s.reportLimit('tabs', s.limits.maxTabs, `The page opened more than ${s.limits.maxTabs} tabs; the extra popup was closed.`);
      return;
    }
    this.register(pg);
    if (known || s.ownPageOps > 0) return;
    // A page opened by the page (window.open, target=_blank): follow it, as a user would see it.
    s.page = pg;
    const index = s.tabs.indexOf(pg);
    s.track(
      (async () => {
        // The popup's URL is known once its first navigation commits (it starts as about:blank).
        if (isBlankUrl(pg.url())) await quietly(pg.waitForURL((u) => !isBlankUrl(u.href), { waitUntil: 'commit', timeout: 2000 }));
        s.emit({ type: 'popup', url: pg.url(), tab_index: index, switched: true });
      })(),
    );
  }

  async navigate(kind: NavKind, url: string | undefined, d: Progress): Promise<void> {
    const s = this.s;
    const pg = s.page;
    const started = Date.now();
    const target = url === undefined ? undefined : normalizeUrl(url);
    if (target !== undefined && !navigationAllowed(target)) {
      throw new ActionFailure('navigation_blocked', `${schemeOf(target)} URLs are not allowed in a sandbox: only http, https, data:, blob: and about:blank.`);
    }
    // Leave a little of the action budget so Playwright's own (classifiable) error wins the race.
    const opts = { waitUntil: 'domcontentloaded' as const, timeout: Math.max(100, d.remaining() - 300) };
    // A navigation given up on is stopped, not left loading: Playwright's timeout only ends the wait, and a page
    // that commits later would change under the next step (and keep its request open).
    const off = d.cleanupWhenAborted(() => this.stopLoading(pg));
    let resp;
    try {
      if (kind === 'goto') resp = await pg.goto(target ?? 'about:blank', opts);
      else if (kind === 'back') resp = await pg.goBack(opts);
      else if (kind === 'forward') resp = await pg.goForward(opts);
      else resp = await pg.reload(opts);
      off();
    } catch (e) {
      off();
      if (e instanceof Error && e.name === 'TimeoutError') await this.stopLoading(pg);
      const msg = firstLine(errMessage(e));
      // The URL is a file: Chromium downloads it instead of navigating. Not a failure — the page stays, and the
      // download watchdog reports the file as a `download` event.
      if (/Download is starting/i.test(msg)) return;
      let code = classifyNavError(msg);
      // The URL-scheme guard (url-policy.ts) refused a local URL somewhere along the way (a redirect, a wrapper).
      if (/ERR_ACCESS_DENIED/.test(msg)) code = 'navigation_blocked';
      // A blocked HTTPS target shows up as a failed tunnel: the gate's callback tells us why.
      if (s.episode.lastBlocked && s.episode.lastBlocked.at >= started - 50) code = 'network_blocked';
      else if (/ERR_TUNNEL_CONNECTION_FAILED/.test(msg) && s.episode.lastUpstream && s.episode.lastUpstream.at >= started - 50) {
        code = s.episode.lastUpstream.error;
      }
      // A navigation that killed the renderer (chrome://crash, OOM) can report ERR_ABORTED before the crash
      // event: a probe settles which it was.
      if (code === 'navigation_failed' && !s.crashed.has(pg)) await this.probe(pg, d);
      if (s.crashed.has(pg)) throw e;
      throw new ActionFailure(code, `${kind} ${target ?? ''} failed: ${msg}`.replace(/\s+/g, ' '));
    }
    if (resp) {
      const c = classifyResponse(resp.status(), resp.headers(), resp.url());
      if (c) throw new ActionFailure(c.code, c.message);
    }
  }

  async newTab(url: string | undefined, d: Progress): Promise<void> {
    const s = this.s;
    // Checked before the tab exists: a refused URL leaves no empty tab behind.
    if (url && !navigationAllowed(normalizeUrl(url))) {
      throw new ActionFailure('navigation_blocked', `${schemeOf(url)} URLs are not allowed in a sandbox: only http, https, data:, blob: and about:blank.`);
    }
    if (s.tabs.length >= s.limits.maxTabs) {
      s.reportLimit('tabs', s.limits.maxTabs, `A sandbox has at most ${s.limits.maxTabs} tabs.`);
      throw new ActionFailure('limit_reached', `A sandbox has at most ${s.limits.maxTabs} tabs: close one first.`);
    }
    s.ownPageOps++;
    let pg: Page;
    try {
      pg = await d.race(newPageWithin(s.context, d.remaining(), 'new tab'), 'new tab', { dispose: (late) => late.close({ runBeforeUnload: false }) });
    } finally {
      s.ownPageOps--;
    }
    this.register(pg);
    s.page = pg;
    await quietly(d.within(PROBE_MS).race(pg.bringToFront(), 'bring to front'));
    if (url) await this.navigate('goto', url, d);
  }

  async switchTab(index: number, d: Progress): Promise<void> {
    const pg = this.s.tabs[index];
    if (!pg) throw new ActionFailure('no_such_tab', `No tab ${index}; there are ${this.s.tabs.length} tab(s).`);
    this.s.page = pg;
    await quietly(d.within(PROBE_MS).race(pg.bringToFront(), 'bring to front'));
  }

  async closeTab(index: number | undefined, d: Progress): Promise<void> {
    const s = this.s;
    const i = index ?? s.tabs.indexOf(s.page);
    const pg = s.tabs[i];
    if (!pg) throw new ActionFailure('no_such_tab', `No tab ${index}; there are ${s.tabs.length} tab(s).`);
    s.selfClosing.add(pg);
    await quietly(d.race(pg.close({ runBeforeUnload: false }), 'close tab'));
    this.events.onPageClosed(pg);
    if (!s.tabs.length) await this.newTab(undefined, d);
    else if (pg === s.page || !s.tabs.includes(s.page)) s.page = s.tabs[Math.min(i, s.tabs.length - 1)];
  }

  /** A page's title (tab-title.ts), bounded by `d`. Never Playwright's page.title(): it costs ~7 % of the steps/s
   * at 16 sessions on this 2-core machine (its utility world and API wrappers), has no timeout, and never settles on
   * a page whose browser died (the soak's heap snapshots found such calls still running, each keeping the dead
   * browser alive with all its contexts). */
  /** Stops the page's pending navigation (CDP Page.stopLoading, the browser's Stop button), within PROBE_MS. */
  async stopLoading(pg: Page): Promise<void> {
    if (pg.isClosed()) return;
    await quietly(Progress.after(PROBE_MS, 'stop loading').race(this.s.session(pg).then((c) => c.send('Page.stopLoading'))));
  }

  private titleWithin(pg: Page, d: Progress, after?: Promise<unknown>): Promise<string> {
    // One call can hang with its renderer (it then ends with the page): the race bounds the wait for it.
    return d.race(pageTitle(() => this.s.session(pg), () => pg.isClosed(), d, after, () => this.s.titles.get(pg)), 'title');
  }

  /**
   * Every tab with its URL and title. The active page has been probed by now: its title gets `activeMs` (time on a
   * loaded machine); background tabs get less. `after`: the observation's capture (see tab-title.ts).
   */
  list(d?: Progress, activeMs = Math.min(this.s.T, 5000), after?: Promise<unknown>): Promise<Tab[]> {
    const s = this.s;
    const settled = s.episode.settledTitle;
    s.episode.settledTitle = null;
    return Promise.all(
      s.tabs.map(async (pg, index) => ({
        index,
        url: pg.url(),
        title: settled?.page === pg ? settled.text : ((await quietly(this.titleWithin(pg, (d ?? Progress.after(5000, 'titles')).within(pg === s.page ? activeMs : 1500), after))) ?? ''),
        active: pg === s.page,
      })),
    );
  }
}
