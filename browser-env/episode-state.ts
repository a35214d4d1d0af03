// What one episode of a browser sandbox knows: its step count, the events queued for the next observation, what the
// last observation left behind (labels, screenshot size, pointer, last good URL) and its downloads. An episode reset
// replaces the whole object (sandbox.ts), so nothing here can leak into the next episode by being forgotten in a list
// of fields to clear. What outlives an episode (the sandbox id, settings, gate registration, the context and its tabs
// until the reset swaps them) stays on SandboxState.
import type { Page } from 'playwright-core';
import type { ActionError, EnvEvent, SomElement } from '../protocol/observation.ts';
import type { UpstreamErrorEvent } from './context.ts';
import type { LimitName } from './limits.ts';
import type { DownloadInfo } from './types.ts';

/** Events kept between two observations; a few more for the ones a policy must not miss (crash, limits). */
const MAX_EVENTS = 200;
const RESERVED_EVENTS = 20;
const PRIORITY_EVENTS: ReadonlySet<EnvEvent['type']> = new Set(['crash', 'limit']);

export interface InternalDownload extends DownloadInfo {
  path: string;
}

export class EpisodeState {
  steps = 0;
  events: EnvEvent[] = [];
  lastSom: SomElement[] | null = null;
  /** The page the labels of `lastSom` were made on, and why they no longer describe it (set on navigation). */
  somPage: Page | null = null;
  somStale: string | null = null;
  /** Where the last pointer action left the mouse (CSS px): a bare click (Anthropic's) clicks there. */
  pointer: { x: number; y: number } | null = null;
  /** Size of the last screenshot returned (image px). */
  lastShotSize: { width: number; height: number } | null = null;
  lastGoodUrl: string | null = null;
  /** The active page's title as the last settle of this step ended (settle.ts); the tab list uses it once. */
  settledTitle: { page: Page; text: string } | null = null;
  pendingError: ActionError | null = null;
  lastBlocked: { url: string; at: number } | null = null;
  lastUpstream: (UpstreamErrorEvent & { at: number }) | null = null;
  /** This episode's downloads, and how many were started (the `maxDownloads` limit counts per episode). */
  readonly dl = new Map<string, InternalDownload>();
  downloadsStarted = 0;
  /** Limits already reported since the last observation (one event each, however often a storm hits them). */
  limitsReported = new Set<LimitName>();

  /**
   * Queues an event for the next observation. A page spamming dialogs or blocked requests cannot grow the queue
   * without bound, nor crowd out a crash report (those have a reserve).
   */
  emit(e: EnvEvent): void {
    if (this.events.length < MAX_EVENTS + (PRIORITY_EVENTS.has(e.type) ? RESERVED_EVENTS : 0)) this.events.push(e);
  }

  /** Whether `limit` is reported for the first time since the last observation (and marks it reported). */
  firstReport(limit: LimitName): boolean {
    if (this.limitsReported.has(limit)) return false;
    this.limitsReported.add(limit);
    return true;
  }
}
