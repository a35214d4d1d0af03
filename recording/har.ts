// Network recording of a live episode as a HAR, and offline replay of a later episode from it.
// Recording is a BrowserContext option (Playwright writes the file when the context closes); replay routes
// every request of a context (or page) to the HAR, so a recorded live-site episode re-runs deterministically
// with no network. With notFound 'abort' a request the HAR does not hold fails instead of leaking out.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';

/** Where an episode keeps its network recording. */
export const HAR_FILE = 'network.har';
export const harPathFor = (episodeDir: string) => join(episodeDir, HAR_FILE);

export interface HarRecordOptions {
  /** 'embed' (default) keeps bodies inside the HAR so one file replays alone. */
  content?: 'embed' | 'attach' | 'omit';
  /** 'minimal' keeps only what replay needs; 'full' (default) keeps timings, sizes and cookies for inspection. */
  mode?: 'full' | 'minimal';
  /** Record only matching requests (glob or RegExp). */
  urlFilter?: string | RegExp;
}

/** Context options that record the context's traffic into `path` (written on context.close()). */
export function harRecordOptions(path: string, opts: HarRecordOptions = {}): Pick<BrowserContextOptions, 'recordHar'> {
  return {
    recordHar: {
      path,
      content: opts.content ?? 'embed',
      mode: opts.mode ?? 'full',
      ...(opts.urlFilter ? { urlFilter: opts.urlFilter } : {}),
    },
  };
}

export interface HarReplayOptions {
  /** 'abort' (default): requests missing from the HAR fail; 'fallback': they go to the network. */
  notFound?: 'abort' | 'fallback';
  /** Serve only matching requests from the HAR (glob or RegExp); others are untouched. */
  url?: string | RegExp;
}

/** Serves requests of `target` from the HAR at `path`; call before the first navigation. */
export async function replayFromHar(target: BrowserContext | Page, path: string, opts: HarReplayOptions = {}): Promise<void> {
  await target.routeFromHAR(path, { notFound: opts.notFound ?? 'abort', ...(opts.url ? { url: opts.url } : {}) });
}

export interface HarSummary {
  entries: number;
  /** Distinct request URLs, in first-seen order. */
  urls: string[];
  /** Responses by status class ("2xx", "3xx", ...). */
  statuses: Record<string, number>;
  bytes: number;
}

/** A short description of a HAR file (for reports and the viewer). */
export async function summariseHar(path: string): Promise<HarSummary> {
  const har = JSON.parse(await readFile(path, 'utf8')) as {
    log?: { entries?: { request?: { url?: string }; response?: { status?: number; bodySize?: number; content?: { size?: number } } }[] };
  };
  const entries = har.log?.entries ?? [];
  const urls: string[] = [];
  const seen = new Set<string>();
  const statuses: Record<string, number> = {};
  let bytes = 0;
  for (const e of entries) {
    const u = e.request?.url ?? '';
    if (!seen.has(u)) {
      seen.add(u);
      urls.push(u);
    }
    const st = e.response?.status ?? 0;
    const k = st > 0 ? `${Math.floor(st / 100)}xx` : 'failed';
    statuses[k] = (statuses[k] ?? 0) + 1;
    bytes += Math.max(0, e.response?.content?.size ?? e.response?.bodySize ?? 0);
  }
  return { entries: entries.length, urls, statuses, bytes };
}
