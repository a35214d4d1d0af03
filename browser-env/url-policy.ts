// URL-scheme isolation: a sandbox reaches http, https, data:, blob: and about:blank — nothing else (no file://,
// view-source:, chrome://, devtools://, extensions, ftp). Three layers, each enforced without trusting the others:
// 1. Every navigation Grove starts (goto, new_tab, start URL) is checked here first → `navigation_blocked`.
// 2. In Chromium's network stack: one browser-wide CDP session per Chromium process pauses every request for a
//    local scheme (Fetch domain, patterns below) and fails it, whoever asked — a page, a frame, a worker, a
//    redirect, a popup, a view-source: wrapper. Only matching URLs pause, so web requests pay nothing.
//    (chrome:// and devtools:// are WebUI and never reach the Fetch domain; Chromium itself refuses them to web
//    content — "Not allowed to load local resource" — so only layer 1 and layer 3 can open them.)
// 3. A commit watchdog (watchdogs.ts): a frame that commits a forbidden URL anyway is sent to about:blank and
//    the step reports `navigation_blocked`.
// Kubernetes workers add Chromium's managed URLBlocklist policy (docs/security.md).
import type { Browser, CDPSession } from 'playwright-core';
import { GroveError } from '../protocol/errors.ts';
import type { Logger } from '../sandbox/log.ts';
import { normalizeUrl } from './classify.ts';

const WEB_SCHEMES = new Set(['http:', 'https:', 'data:', 'blob:']);

/** Fetch-domain patterns of the local schemes a page could load (Chromium matches `*` wildcards). */
const LOCAL_SCHEME_PATTERNS = ['file:*', 'filesystem:*', 'ftp:*', 'chrome:*', 'chrome-untrusted:*', 'devtools:*', 'chrome-extension:*'];

/** Net error Chromium shows for a request failed by the guard (`net::ERR_ACCESS_DENIED`). */
const GUARD_ERROR_REASON = 'AccessDenied';

/** Whether a sandbox may navigate to `url` (http, https, data:, blob:, about:blank). */
export function navigationAllowed(url: string): boolean {
  const u = url.trim();
  if (u === 'about:blank' || u.startsWith('about:blank#') || u.startsWith('about:blank?')) return true;
  let scheme: string;
  try {
    scheme = new URL(u).protocol.toLowerCase();
  } catch {
    return false;
  }
  return WEB_SCHEMES.has(scheme);
}

/**
 * Refuses a start URL (create or reset) that no sandbox may open, before any work: 400 navigation_blocked, the
 * code a blocked goto reports. An empty or absent start URL means about:blank and passes.
 */
export function checkStartUrl(url: string | undefined): void {
  if (!url || navigationAllowed(normalizeUrl(url))) return;
  throw new GroveError('navigation_blocked', `start_url: ${schemeOf(url)} URLs are not allowed in a sandbox: only http, https, data:, blob: and about:blank.`);
}

/**
 * Whether a frame may show a committed `url`: what navigationAllowed() accepts, plus Chromium's own error page
 * (a failed load) and srcdoc frames.
 */
export function commitAllowed(url: string): boolean {
  if (url === '' || url === 'about:srcdoc' || url.startsWith('chrome-error://chromewebdata')) return true;
  return navigationAllowed(url);
}

/** The scheme of `url` for messages ("file:"), or the start of the text when it does not parse. */
export function schemeOf(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:)/i.exec(url.trim());
  return m ? m[1].toLowerCase() : url.trim().slice(0, 20);
}

/**
 * Installs layer 2 on a freshly launched browser: requests for local schemes fail with ERR_ACCESS_DENIED in
 * every context of this process, present and future. Resolves once the interception is active; the caller
 * must not hand out contexts before that (fail closed).
 */
export async function guardBrowser(browser: Browser, log: Logger): Promise<CDPSession> {
  const s = await browser.newBrowserCDPSession();
  s.on('Fetch.requestPaused', (e: { requestId: string; request: { url: string } }) => {
    log.info({ url: e.request.url.slice(0, 200) }, 'blocked a request for a local URL scheme');
    s.send('Fetch.failRequest', { requestId: e.requestId, errorReason: GUARD_ERROR_REASON }).catch(() => {
      // The target went away meanwhile: nothing left to block.
    });
  });
  await s.send('Fetch.enable', { patterns: LOCAL_SCHEME_PATTERNS.map((urlPattern) => ({ urlPattern })) });
  return s;
}
