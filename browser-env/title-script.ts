// The title feed inside the page: an init script, run in the top frame's main world before page scripts, that
// reports the document's title to the sandbox through a CDP binding whenever it changes, so an observation reads
// the title the page last reported instead of asking the renderer on every step (one Playwright call and one
// renderer round trip less per step: bench/core/profile.ts showed it as the largest Grove-only cost of a step).
//
// What is watched, so a busy page pays nothing for it: while the document is loading and has no <title>, the
// document's child list (the parser's insertions); then only the <head>'s child list (a title added, removed or
// replaced) and the <title> element's own subtree (what `document.title = …` changes). A report is also sent at
// the start of every document (its URL, title ''), at DOMContentLoaded and at load.
//
// Each report carries `location.href` and the document's `performance.timeOrigin` (when its navigation started:
// a later document of the same page has a later one): the sandbox uses a reported title only while the page's URL
// is the one it was reported for, and never one from a document older than a navigation it has seen
// (browser-env/title-feed.ts).

/** The binding's name in the pages' main world (a page may call it: it can set its own title anyway). */
export const TITLE_BINDING = '__groveTitleFeed';

export const TITLE_INIT_SCRIPT = `(() => {
  const W = window;
  if (W !== W.top || W.__groveTitleWatch) return;
  const D = document;
  let last = null, lastHref = null, watchedTitle = null, watchedHead = null;
  const origin = performance.timeOrigin;
  const report = (force) => {
    let t, href;
    try { t = D.title; href = W.location.href; } catch { return; }
    if (!force && t === last && href === lastHref) return;
    const send = W[${JSON.stringify(TITLE_BINDING)}];
    if (typeof send !== 'function') return;
    last = t;
    lastHref = href;
    try { void Promise.resolve(send(href, t, origin)).catch(() => {}); } catch {}
  };
  const mo = new MutationObserver(() => { report(false); rewire(); });
  function rewire() {
    const title = D.querySelector('title');
    const head = D.head;
    const loading = D.readyState === 'loading' && !title;
    if (!loading && title === watchedTitle && head === watchedHead) return;
    mo.disconnect();
    watchedTitle = title;
    watchedHead = head;
    if (loading) { mo.observe(D, { childList: true, subtree: true }); return; }
    if (head) mo.observe(head, { childList: true });
    if (title) mo.observe(title, { childList: true, characterData: true, subtree: true });
  }
  Object.defineProperty(W, '__groveTitleWatch', { value: () => report(true), enumerable: false, configurable: false });
  const on = EventTarget.prototype.addEventListener;
  on.call(D, 'DOMContentLoaded', () => { report(false); rewire(); }, { capture: true });
  on.call(W, 'load', () => { report(false); rewire(); }, { capture: true });
  report(true);
  rewire();
})();`;
