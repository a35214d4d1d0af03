// Recovery: a crashed or hung renderer is replaced by a fresh page on the last good URL, a dead browser process
// or a broken context by a fresh context from the pool; action failures become ActionErrors, recovering first
// when the page crashed or stopped answering. Every wait is a slice of the step's Progress.
import type { Page } from 'playwright-core';
import type { ActionError } from '../protocol/observation.ts';
import type { Progress } from '../sandbox/progress.ts';
import { ActionFailure } from './actions.ts';
import { contextOptions, prepareContext } from './context.ts';
import { newPageWithin } from './new-page.ts';
import type { PageEvents } from './page-events.ts';
import { firstLine, probeMs, type SandboxState } from './sandbox-state.ts';
import { recoveryMs } from './step-budget.ts';
import type { Tabs } from './tabs.ts';
import { errMessage, quietly, TimeoutError } from './util.ts';

export class Recovery {
  /** A reload of the last good URL that ran out of the step's time (reload()), for the next step to verify. */
  private owed: { page: Page; url: string } | null = null;

  constructor(
    private readonly s: SandboxState,
    private readonly tabs: Tabs,
    private readonly events: PageEvents,
  ) {
    tabs.probe = (pg, d) => this.responsive(pg, d);
  }

  /** Replaces the active page by a fresh one on the last good URL (after a crash or a hang). */
  async replacePage(reason: 'crash' | 'unresponsive', deadline: Progress): Promise<boolean> {
    const s = this.s;
    s.throwIfClosed();
    const d = deadline.within(recoveryMs(s.options), 'recovery');
    const old = s.page;
    const index = Math.max(0, s.tabs.indexOf(old));
    s.selfClosing.add(old);
    // Closing through the browser works even when the renderer is stuck in a busy loop.
    await quietly(d.within(3000).race(old.close({ runBeforeUnload: false }), 'close hung page'));
    this.events.onPageClosed(old);
    let recovered = false;
    try {
      s.ownPageOps++;
      let fresh: Page;
      try {
        fresh = await d.race(newPageWithin(s.context, d.remaining()), 'new page', { dispose: (late) => late.close({ runBeforeUnload: false }) });
      } finally {
        s.ownPageOps--;
      }
      s.tabs = s.tabs.filter((p) => p !== fresh);
      s.tabs.splice(index, 0, fresh);
      s.page = fresh;
      if (s.episode.lastGoodUrl) await this.reload(fresh, s.episode.lastGoodUrl, d);
      recovered = true;
    } catch (e) {
      s.log.error({ sandbox: s.id, err: errMessage(e) }, 'page replacement failed; replacing the context');
      recovered = await this.replaceContext('page replacement failed', deadline);
      return recovered;
    }
    s.emit({
      type: 'crash',
      message: reason === 'crash' ? 'The page crashed and was reopened on its last URL.' : 'The page stopped responding; it was closed and reopened on its last URL.',
      recovered,
    });
    return recovered;
  }

  /** After the browser process died (or the context broke): a fresh context from the pool. */
  async replaceContext(why: string, deadline: Progress): Promise<boolean> {
    const s = this.s;
    // A closed sandbox gets no new context (the close frees the one it has; one opened now would be leaked).
    s.throwIfClosed();
    const d = deadline.within(recoveryMs(s.options), 'recovery');
    s.replacingContext = true;
    let recovered = false;
    try {
      const old = s.pooled;
      await quietly(d.within(3000).race(old.release(), 'release dead context'));
      this.tabs.adopt(await prepareContext(s.deps.source, contextOptions(s.options, s.proxy), Math.max(1, d.remaining())));
      if (s.episode.lastGoodUrl) await this.reload(s.page, s.episode.lastGoodUrl, d);
      recovered = true;
    } catch (e) {
      s.log.error({ sandbox: s.id, err: errMessage(e) }, 'context replacement failed');
      // Whatever the old context's state, it is not one to step in: the next step replaces it again.
      s.contextLost = true;
    } finally {
      s.replacingContext = false;
    }
    s.emit({ type: 'crash', message: `The browser was lost (${why}); a fresh one was opened on the last URL.`, recovered });
    return recovered;
  }

  /**
   * Loads the last good URL in a reopened page. A failure leaves the page as it is (the observation shows it) and
   * is logged: the policy sees a blank or error page, the log says why. The sandbox closing stops the load at once
   * (Page.stopLoading; the step answers sandbox_closed). Running out of the step's time does not: a reload stopped
   * then left a blank page where the next step expected the last URL (liveness.slow.test.ts at load ~85). The load
   * is handed on instead, not abandoned: the observation waits for it as watchdog work, and the next step's health
   * check verifies the page and loads the URL again when it never arrived.
   */
  private async reload(pg: Page, url: string, d: Progress): Promise<void> {
    const s = this.s;
    // Playwright's own timeout is the recovery's whole slice (not what is left of it): the load runs on past this
    // step's wait, bounded, for the observation and the next step.
    const load = pg.goto(url, { waitUntil: 'domcontentloaded', timeout: recoveryMs(s.options) });
    try {
      await d.race(load, 'reload last URL', { cancel: () => s.closed && this.tabs.stopLoading(pg) });
      this.owed = null;
    } catch (e) {
      s.throwIfClosed();
      this.owed = { page: pg, url };
      s.track(load.catch(() => {}));
      s.log.warn({ sandbox: s.id, url, err: firstLine(errMessage(e)) }, 'a reopened page could not load its last URL in time');
    }
  }

  /** A reload handed on by an earlier step (reload()): checked, and done again when the page never got there. */
  private async settleOwedReload(d: Progress): Promise<void> {
    const owed = this.owed;
    this.owed = null;
    const s = this.s;
    if (!owed || owed.page !== s.page || owed.page.isClosed()) return;
    if (owed.page.url() !== 'about:blank') return;
    s.log.info({ sandbox: s.id, url: owed.url }, 'the reopened page never reached its last URL; loading it again');
    await this.reload(owed.page, owed.url, d.within(recoveryMs(s.options), 'recovery'));
  }

  /** Repairs crash damage noticed between steps; returns the error to report, if any. */
  async ensureHealthy(d: Progress): Promise<ActionError | null> {
    const s = this.s;
    s.throwIfClosed();
    await this.settleOwedReload(d);
    if (s.contextLost) {
      const ok = await this.replaceContext('browser process exited', d);
      return { code: 'page_crashed', message: `The browser process died; ${ok ? 'a fresh page was opened on the last URL' : 'recovery failed'}.` };
    }
    if (s.page.isClosed() && !s.crashed.has(s.page)) {
      // The active tab went away between steps (closed by its own script): show a neighbour or a blank tab.
      if (s.tabs.length) s.page = s.tabs[s.tabs.length - 1];
      else {
        try {
          await this.tabs.newTab(undefined, d);
        } catch (e) {
          // No tab can be opened: the context itself is gone (its close came during an earlier replacement).
          const ok = await this.replaceContext(`no tab could be opened: ${firstLine(errMessage(e))}`, d);
          return { code: 'page_crashed', message: `The browser context was lost; ${ok ? 'a fresh page was opened on the last URL' : 'recovery failed'}.` };
        }
      }
      return null;
    }
    if (s.crashed.has(s.page)) {
      await this.replacePage('crash', d);
      return { code: 'page_crashed', message: 'The page crashed; it was reopened on its last URL.' };
    }
    return null;
  }

  /** Turns any action failure into an ActionError, recovering the page when it crashed or hung. */
  async classifyFailure(e: unknown, d: Progress): Promise<ActionError> {
    const s = this.s;
    // Cut short by the sandbox's close: not the action's failure, and nothing to recover.
    s.throwIfClosed();
    if (e instanceof ActionFailure) return { code: e.code, message: e.message };
    const msg = firstLine(errMessage(e));
    if (s.contextLost) {
      await this.replaceContext('browser process exited', d);
      return { code: 'page_crashed', message: `The browser process died during the action: ${msg}` };
    }
    if (s.crashed.has(s.page) || /crash/i.test(msg)) {
      await this.replacePage('crash', d);
      return { code: 'page_crashed', message: `The page crashed during the action: ${msg}` };
    }
    const timedOut = e instanceof TimeoutError || (e instanceof Error && e.name === 'TimeoutError');
    if (timedOut) {
      if (!(await this.responsive(s.page, d))) {
        await this.replacePage('unresponsive', d);
        return { code: 'page_unresponsive', message: `The page did not respond within ${s.T} ms (busy script?); it was reopened.` };
      }
      return { code: 'timeout', message: msg };
    }
    return { code: 'action_failed', message: msg };
  }

  async responsive(pg: Page, d: Progress): Promise<boolean> {
    try {
      // Longer than on an idle machine only within half of what is left: a page found hung still needs the time to
      // be reopened.
      const ms = Math.max(probeMs(this.s.T, 1), Math.min(probeMs(this.s.T), d.remaining() / 2));
      await d.within(ms).race(pg.evaluate('1'), 'responsiveness probe');
      return true;
    } catch {
      return false;
    }
  }
}
