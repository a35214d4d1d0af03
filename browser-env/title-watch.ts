// Page titles told by the page when they change, so that an observation needs no round trip for the title.
//
// Issue 11's steps/s: with the settle off, every observation asked the browser for the page's title
// (Target.getTargetInfo after the capture, tab-title.ts). Measured in one Chromium, 12 contexts per group in
// interleaved blocks (2026-12-03): that call added 0.4–0.8 ms of CPU per step (Playwright's API wrapper, the pipe,
// the browser process) to ~38.5 ms, i.e. 1–2 % of the steps/s at 16 sandboxes.
//
// Now the top frame's init script watches its document's title (a MutationObserver on the whole document: a
// <title> the parser adds, `document.title = …`, a title element's text changed by script) and calls a CDP
// binding with the new title whenever it differs from the last one told. The binding call leaves the renderer
// inside the task that changed the title, so it is on the pipe before the capture that follows the action (the
// same order tab-title.ts relies on for the browser's own title). What a page told is kept per page until its
// main frame's document is replaced; a page that has told nothing since (an error page, where no init script runs, or a
// navigation whose first report has not come in yet) is asked as before, so an unknown title is never a wrong one.
import type { CDPSession, Page } from 'playwright-core';

/** The binding's name; the init script takes it off `window` before any page script runs. */
export const TITLE_BINDING = '__groveTitle';

/** Titles longer than this are not told (the page is asked instead): a page must not flood the server. */
const MAX_TOLD = 65_536;

/**
 * Appended to the page's init script (context.ts). Every frame hides the binding; only the top frame reports.
 * `__grove.tellTitle()` tells the current title again (for a session that added the binding after the document
 * had started: its first report had nowhere to go).
 */
export const TITLE_WATCH_SCRIPT = `(() => {
  const W = window;
  let bound = null;
  const take = () => {
    if (!bound && typeof W.${TITLE_BINDING} === 'function') {
      bound = W.${TITLE_BINDING};
      try { delete W.${TITLE_BINDING}; } catch (e) {}
    }
    return bound;
  };
  take();
  if (W !== W.top) return;
  let told = null;
  // Document's own getter, taken before any page script runs: a page that redefines document.title (to count
  // reads, say) neither sees these reads nor changes what is told.
  const desc = Object.getOwnPropertyDescriptor(Document.prototype, 'title');
  const read = desc && desc.get;
  const tell = (force) => {
    let t = '';
    try { t = read ? read.call(document) : String(document.title); } catch (e) { return; }
    if (t === told && !force) return;
    const f = take();
    if (!f) return;
    told = t;
    try { f(t.length > ${MAX_TOLD} ? '' : '1' + t); } catch (e) { told = null; }
  };
  const MO = W.MutationObserver;
  if (MO) new MO(() => tell(false)).observe(document, { childList: true, subtree: true, characterData: true });
  if (W.__grove) { try { Object.defineProperty(W.__grove, 'tellTitle', { value: () => tell(true) }); } catch (e) {} }
  tell(false);
})();`;

/** What the pages of one sandbox told of their titles. */
export class TitleWatch {
  private readonly told = new WeakMap<Page, string>();

  /**
   * Listens on `cdp` (the sandbox's own session to `pg`) for the page's reports. Runtime must be enabled on the
   * session for binding calls to reach it. Asks the document to tell its title once: the binding may be newer than
   * the document.
   */
  async attach(pg: Page, cdp: CDPSession): Promise<void> {
    cdp.on('Runtime.bindingCalled', (e: { name: string; payload: string }) => {
      if (e.name !== TITLE_BINDING) return;
      // '1' + title, or '' for a title too long to tell (the page is asked then).
      if (e.payload.startsWith('1')) this.told.set(pg, e.payload.slice(1));
      else this.told.delete(pg);
    });
    // The main frame's document was replaced (never for a same-document navigation): what the old one told is
    // void. On the same session as the reports, so the new document's first report comes after it.
    cdp.on('Runtime.executionContextsCleared', () => this.told.delete(pg));
    await cdp.send('Runtime.enable');
    await cdp.send('Runtime.addBinding', { name: TITLE_BINDING });
    await cdp.send('Runtime.evaluate', { expression: 'window.__grove && window.__grove.tellTitle && window.__grove.tellTitle()' }).catch(() => {});
  }

  /** The title `pg` told since its main frame last navigated, if it told one. */
  get(pg: Page): string | undefined {
    return this.told.get(pg);
  }
}
