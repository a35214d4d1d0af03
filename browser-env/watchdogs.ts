// Per-page watchdogs: dialogs are answered at once (a pending dialog blocks the page), downloads are
// saved under the sandbox's own directory, crashes and closes are reported to the sandbox.
import type { Dialog, Download, Frame, Page } from 'playwright-core';
import type { EnvEvent } from '../protocol/observation.ts';
import { commitAllowed } from './url-policy.ts';

export interface WatchdogHost {
  pushEvent(e: EnvEvent): void;
  /** Registers async watchdog work so the next observation can wait for it (bounded). */
  track(p: Promise<unknown>): void;
  answerDialog(d: Dialog): Promise<void>;
  saveDownload(d: Download): Promise<void>;
  onCrash(page: Page): void;
  onPageClosed(page: Page): void;
  onNavigated(page: Page, url: string): void;
  /** A frame committed a URL outside the allowed schemes (url-policy.ts layer 3). */
  onForbiddenCommit(page: Page, frame: Frame): void;
}

export function watchPage(page: Page, host: WatchdogHost): void {
  // alert/confirm/beforeunload are accepted, prompt is accepted with its default value.
  page.on('dialog', (d) => host.track(host.answerDialog(d)));
  page.on('download', (d) => host.track(host.saveDownload(d)));
  page.on('crash', () => host.onCrash(page));
  page.on('close', () => host.onPageClosed(page));
  page.on('framenavigated', (f) => {
    if (!commitAllowed(f.url())) host.onForbiddenCommit(page, f);
    else if (f === page.mainFrame()) host.onNavigated(page, f.url());
  });
}

export function isBlankUrl(url: string): boolean {
  return url === '' || url === 'about:blank' || url.startsWith('about:blank#');
}
