// A page's title for the observation's tab list, by the cheapest way that is right.
//
// First choice: the title the page told since its document started (title-watch.ts), once the capture is back.
// Otherwise, as follows.
// After the observation's capture, the browser's title of the page: Target.getTargetInfo on the page's own CDP
// session is answered by the browser process, with no work in the page's renderer (on a 2-core machine stepping 16
// sandboxes, a renderer round trip is a share of every step: issue 11's steps/s). The renderer tells the browser a
// new title while it runs the script that set it, so once the capture that followed the action is back, the browser
// has it. Chromium's title of a page without one is its URL, formatted (NavigationEntry::GetTitleForDisplay): such
// a title, and every read without a capture to order it after, asks the page for document.title instead.
import type { CDPSession } from 'playwright-core';
import { domainToUnicode } from 'node:url';
import type { Progress } from '../sandbox/progress.ts';

/** Chromium hands the browser at most this many UTF-16 units of a title (content's kMaxTitleChars): a title this
 * long may be cut, so the page is asked for all of it. */
const BROWSER_TITLE_MAX = 4096;

/** How often a title is asked again while the page has no document to evaluate in. */
const TITLE_RETRY_MS = 50;

/**
 * The title of the page behind `session`, bounded by `d` only through the caller's race (a call can hang with its
 * renderer). `after`: the capture after which the browser's title is the page's; without it the page is asked.
 * While a document is being replaced there is no context to evaluate in: asked again shortly, until `d` runs out
 * ('' then, as for a page without a title). `closed` ends the retries when the page is gone. `told`: the title the
 * page told (title-watch.ts), used once `after` is back; without one the browser is asked.
 */
export async function pageTitle(session: () => Promise<CDPSession>, closed: () => boolean, d: Progress, after?: Promise<unknown>, told?: () => string | undefined): Promise<string> {
  if (after) {
    await after;
    // What the page told since its document started (title-watch.ts): on the pipe before the capture's answer.
    const t = told?.();
    if (t !== undefined) return t;
    const info = await (await session())
      .send('Target.getTargetInfo')
      .then((r) => (r as { targetInfo?: { title?: unknown; url?: unknown } }).targetInfo)
      .catch(() => undefined);
    if (typeof info?.title === 'string' && typeof info.url === 'string' && info.title.length < BROWSER_TITLE_MAX && !mayBeUrlTitle(info.title, info.url)) {
      return info.title;
    }
  }
  for (;;) {
    try {
      const r = (await (await session()).send('Runtime.evaluate', { expression: 'document.title', returnByValue: true })) as {
        result?: { value?: unknown };
      };
      if (typeof r.result?.value === 'string') return r.result.value;
    } catch (e) {
      if (closed()) throw e;
    }
    if (d.remaining() <= TITLE_RETRY_MS) return '';
    await d.sleep(TITLE_RETRY_MS);
  }
}

/**
 * Whether `title` may be the browser's stand-in for a page without a title: empty, a URL of a local or opaque
 * scheme, or text that holds the page's host (Chromium shows the URL without `http://`, decoded, maybe elided).
 * A real title that happens to match costs one question to the page, never a wrong answer.
 */
export function mayBeUrlTitle(title: string, url: string): boolean {
  if (!title) return true;
  if (/^[a-z][a-z0-9+.-]*:/i.test(title) && !/\s/.test(title)) return true;
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    return true;
  }
  if (!host) return true;
  // As Chromium may show it: the host as it is, its Unicode form, either without a leading "www.".
  const port = /:\d+$/.exec(host)?.[0] ?? '';
  const shown = [host, domainToUnicode(host.slice(0, host.length - port.length)) + port];
  return shown.some((h) => title.includes(h) || title.includes(h.replace(/^www\./, '')));
}
