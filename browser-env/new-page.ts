// Opening a page with a bound Playwright itself enforces.
//
// BrowserContext.newPage() takes no timeout, and in playwright-core 1.65 a page whose initialization fails while
// its context is closing never settles the call (the server-side Page skips resolving its "initialized" promise
// when the context is closing or closed). The call's progress then stays registered in Playwright's dispatcher
// for good and keeps the closed context, its pages and CDP sessions and its browser reachable: in the soak
// (injected renderer and browser kills, pages that never load) the server's live heap grew ~1.7 MB a minute
// from it, 61 such calls pending after 15 minutes (heap snapshots, bench/heap-diff.ts). Racing the promise on
// our side does not end the call; a timeout given to the call does: Playwright ends its progress and forgets it.
import { Progress } from '../sandbox/progress.ts';
import type { BrowserContext, Page } from 'playwright-core';
import { TimeoutError } from './util.ts';

/** The channel method behind context.newPage(), which takes a call timeout (playwright-core's client internals). */
type NewPageChannel = { newPage?: (params: object, options: { timeout: number }) => Promise<{ page: { _object?: Page } }> };

/** Slack for the backstop race: Playwright's own timeout should end the call first. */
const BACKSTOP_MS = 1000;

/** context.newPage() that ends within `ms` (TimeoutError), its Playwright call included. */
export async function newPageWithin(context: BrowserContext, ms: number, what = 'new page'): Promise<Page> {
  const timeout = Math.max(1, Math.round(ms));
  const channel = (context as unknown as { _channel?: NewPageChannel })._channel;
  // Another playwright-core without this channel method: the public call, bounded on our side only.
  // A page that comes after the caller gave up is closed, not left open as a tab nobody knows.
  if (typeof channel?.newPage !== 'function') return Progress.after(timeout, what).race(context.newPage(), what, { dispose: closePage });
  let page: Page | undefined;
  try {
    const made = channel.newPage({}, { timeout });
    page = (await Progress.after(timeout + BACKSTOP_MS, what).race(made, what, { dispose: (late) => late.page._object && closePage(late.page._object) })).page._object;
  } catch (e) {
    // Playwright's own timeout error is ours to the callers (they map it to browser_start_timeout, retry, ...).
    if (e instanceof Error && e.name === 'TimeoutError' && !(e instanceof TimeoutError)) throw new TimeoutError(what, timeout);
    throw e;
  }
  if (!page) throw new Error(`${what}: playwright-core answered without a page`);
  return page;
}

function closePage(pg: Page): Promise<void> {
  return pg.close({ runBeforeUnload: false });
}
