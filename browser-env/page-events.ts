// What pages report between and during steps (watchdogs.ts wires them): dialogs answered, downloads saved under
// the sandbox's own directory, crashes, closed tabs, navigations, forbidden commits, and the network gate's
// blocked requests. Each becomes an event of the next observation or state the step reads.
import { Progress } from '../sandbox/progress.ts';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Dialog, Download, Frame, Page } from 'playwright-core';
import type { EnvEvent } from '../protocol/observation.ts';
import type { UpstreamErrorEvent } from './context.ts';
import type { InternalDownload } from './episode-state.ts';
import { PROBE_MS, type SandboxState } from './sandbox-state.ts';
import { errMessage, quietly } from './util.ts';
import { schemeOf } from './url-policy.ts';
import { isBlankUrl, type WatchdogHost } from './watchdogs.ts';

/** What Chromium reports of a download (CDP Page.downloadWillBegin / Page.downloadProgress). */
interface DownloadBegin {
  guid: string;
  url: string;
}
interface DownloadProgress {
  guid: string;
  receivedBytes: number;
  state: 'inProgress' | 'completed' | 'canceled';
}

export class PageEvents implements WatchdogHost {
  private dlSeq = 0;
  /** Chromium's download guid → URL, while the download runs. */
  private readonly dlUrls = new Map<string, string>();
  /** URLs of downloads cancelled for passing the byte limit (a count each), until saveDownload reports them. */
  private readonly capped = new Map<string, number>();

  constructor(private readonly s: SandboxState) {}

  pushEvent(e: EnvEvent): void {
    this.s.emit(e);
  }

  track(p: Promise<unknown>): void {
    this.s.track(p);
  }

  onCrash(pg: Page): void {
    this.s.crashed.add(pg);
    this.s.log.warn({ sandbox: this.s.id, url: pg.url() }, 'page crashed');
  }

  onPageClosed(pg: Page): void {
    const s = this.s;
    const index = s.tabs.indexOf(pg);
    if (index < 0) return;
    s.tabs.splice(index, 1);
    const cdp = s.cdp.get(pg);
    s.cdp.delete(pg);
    if (cdp) void cdp.then((c) => c.detach()).catch(() => {});
    if (s.selfClosing.has(pg) || s.closed) return;
    s.emit({ type: 'tab_closed', tab_index: index });
    if (pg === s.page && s.tabs.length) s.page = s.tabs[Math.min(index, s.tabs.length - 1)];
  }

  onNavigated(pg: Page, url: string): void {
    const s = this.s;
    if (pg === s.episode.somPage && !s.episode.somStale) s.episode.somStale = `the page navigated to ${url} after they were made`;
    if (pg !== s.page || isBlankUrl(url)) return;
    const last = s.episode.events[s.episode.events.length - 1];
    if (last?.type === 'navigation' && last.url === url) return;
    s.emit({ type: 'navigation', url });
  }

  onForbiddenCommit(pg: Page, frame: Frame): void {
    const s = this.s;
    const url = frame.url();
    s.episode.pendingError ??= { code: 'navigation_blocked', message: `${schemeOf(url)} URLs are not allowed in a sandbox (${url.slice(0, 200)}).` };
    s.emit({ type: 'network_blocked', url: url.slice(0, 2000), reason: `scheme ${schemeOf(url)} is not allowed` });
    s.log.warn({ sandbox: s.id, url: url.slice(0, 200) }, 'a frame committed a forbidden URL; sending it to about:blank');
    // Whatever opened it, the document must not stay: replace it by a blank one (bounded, tracked).
    s.track(quietly(Progress.after(PROBE_MS, 'leave forbidden URL').race(frame.goto('about:blank'))).then(() => undefined));
    if (pg === s.page && frame === pg.mainFrame()) s.episode.lastBlocked = { url, at: Date.now() };
  }

  /**
   * Counts a page's download bytes while they arrive and cancels a download the moment it passes the byte limit, so
   * an endless download never stages more than the limit plus what arrives between two progress reports. Chromium
   * reports progress to every CDP session with the Page domain on (Page.downloadProgress: deprecated in the protocol
   * for the Browser domain's events, which only reach the session that set the download behaviour, Playwright's).
   */
  async watchDownloadBytes(pg: Page): Promise<void> {
    const s = this.s;
    const cdp = await s.session(pg);
    // Browser.cancelDownload looks the guid up in one browser context: the default one unless named.
    const { targetInfo } = await Progress.after(PROBE_MS, 'target info').race(cdp.send('Target.getTargetInfo'));
    const browserContextId = targetInfo.browserContextId;
    cdp.on('Page.downloadWillBegin', (e: DownloadBegin) => this.dlUrls.set(e.guid, e.url));
    cdp.on('Page.downloadProgress', (e: DownloadProgress) => {
      if (e.state !== 'inProgress') {
        this.dlUrls.delete(e.guid);
        return;
      }
      if (e.receivedBytes <= s.limits.maxDownloadBytes || !this.dlUrls.has(e.guid)) return;
      const url = this.dlUrls.get(e.guid)!;
      this.dlUrls.delete(e.guid);
      this.capped.set(url, (this.capped.get(url) ?? 0) + 1);
      s.reportLimit('download_bytes', s.limits.maxDownloadBytes, `A download passed the limit of ${s.limits.maxDownloadBytes} bytes and was cancelled.`);
      s.track(quietly(Progress.after(PROBE_MS, 'cancel download over the byte limit').race(cdp.send('Browser.cancelDownload', { guid: e.guid, browserContextId }))));
    });
    await Progress.after(PROBE_MS, 'Page.enable for download progress').race(cdp.send('Page.enable'));
  }

  /** Whether a download of `url` was cancelled for its size (consumes one). */
  private takeCapped(url: string): boolean {
    const n = this.capped.get(url) ?? 0;
    if (n === 0) return false;
    if (n === 1) this.capped.delete(url);
    else this.capped.set(url, n - 1);
    return true;
  }

  async saveDownload(d: Download): Promise<void> {
    const s = this.s;
    // A download counts, lands and is reported in the episode it started in, even when a reset ends that one first.
    const ep = s.episode;
    if (++ep.downloadsStarted > s.limits.maxDownloads) {
      await quietly(Progress.after(PROBE_MS, 'cancel download').race(d.cancel()));
      s.reportLimit('downloads', s.limits.maxDownloads, `More than ${s.limits.maxDownloads} downloads in this episode; the new one was cancelled.`);
      return;
    }
    const id = `dl${++this.dlSeq}`;
    const filename = safeName(d.suggestedFilename()) || 'download';
    const dir = this.downloadDir();
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${id}-${filename}`);
    const info: InternalDownload = { id, filename, size: 0, url: d.url(), created_at: new Date().toISOString(), path };
    try {
      await Progress.after(120_000, 'download').race(d.saveAs(path));
      info.size = (await stat(path)).size;
      if (info.size > s.limits.maxDownloadBytes) {
        await rm(path, { force: true });
        info.failure = `larger than the sandbox's download limit (${info.size} > ${s.limits.maxDownloadBytes} bytes); deleted`;
        s.reportLimit('download_bytes', s.limits.maxDownloadBytes, `A download of ${info.size} bytes exceeded the limit of ${s.limits.maxDownloadBytes} bytes and was deleted.`);
      }
      // The staged copy (Playwright's artifacts folder) is not needed once saved.
      await quietly(Progress.after(PROBE_MS, 'delete staged download').race(d.delete()));
    } catch (e) {
      const failure = (await quietly(Progress.after(PROBE_MS, 'download failure').race(d.failure()))) ?? errMessage(e);
      info.failure = this.takeCapped(info.url)
        ? `larger than the sandbox's download limit (over ${s.limits.maxDownloadBytes} bytes); cancelled while downloading`
        : failure;
    }
    ep.dl.set(id, info);
    const ev: EnvEvent = { type: 'download', filename, size: info.size, id, url: info.url };
    if (info.failure) ev.failure = info.failure;
    ep.emit(ev);
  }

  async answerDialog(dlg: Dialog): Promise<void> {
    const type = dlg.type() as 'alert' | 'confirm' | 'prompt' | 'beforeunload';
    const ev: EnvEvent = { type: 'dialog', dialog_type: type, message: dlg.message(), handled: 'accepted' };
    if (type === 'prompt') ev.prompt_value = dlg.defaultValue();
    await Progress.after(PROBE_MS * 5, 'dialog answer').race(type === 'prompt' ? dlg.accept(dlg.defaultValue()) : dlg.accept());
    this.s.emit(ev);
  }

  /** The network gate refused a request of this sandbox. */
  onBlocked(e: { url: string; reason: string }): void {
    this.s.episode.lastBlocked = { url: e.url, at: Date.now() };
    this.s.emit({ type: 'network_blocked', url: e.url, reason: e.reason });
  }

  /** The gate's upstream failed (the only trace of a failed HTTPS tunnel). */
  onUpstream(e: UpstreamErrorEvent): void {
    this.s.episode.lastUpstream = { ...e, at: Date.now() };
  }

  downloadDir(): string {
    // Ids come from the server, but a path must never leave the downloads directory.
    return join(this.s.deps.dataDir, 'downloads', safeName(this.s.id).replace(/^$/, '_'));
  }
}

/** A download's suggested name without path parts or leading dots. */
function safeName(name: string): string {
  return name.replace(/[/\\\0]/g, '_').replace(/^\.+/, '').slice(0, 200);
}
