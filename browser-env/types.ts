// Contract between the browser environment and its users (local backend, server, runner, bench).
import type { Readable } from 'node:stream';
import type { BrowserContext, BrowserContextOptions } from 'playwright-core';
import type { Action } from '../protocol/action.ts';
import type { Observation, SomElement, StepResult, Tab } from '../protocol/observation.ts';
import type { BrowserCreateOptions, NetworkRules } from '../protocol/sandbox.ts';
import type { Sandbox } from '../sandbox/types.ts';
import type { SandboxLimits } from './limits.ts';

export interface StepOptions {
  /** 'base64' (default) embeds the image; 'none' skips capture (e.g. a bare action batch). */
  screenshot?: 'base64' | 'none';
  /** Override the sandbox's SoM / accessibility setting for this observation. */
  som?: boolean;
  accessibility?: boolean;
  /** Override settle for this step (bench uses settle off). */
  settle?: boolean;
  /** Draw the SoM boxes and numbers onto the returned screenshot (needs SoM on). Default: unlabelled. */
  som_overlay?: boolean;
}

/** What an episode reset may change (protocol/api.ts ResetRequest). */
export interface BrowserResetInput {
  start_url?: string;
  network?: NetworkRules;
}

export interface DownloadInfo {
  id: string;
  filename: string;
  size: number;
  url: string;
  created_at: string;
  failure?: string;
}

export interface BrowserSandbox extends Sandbox {
  readonly type: 'browser';
  readonly options: BrowserCreateOptions;
  /** Steps executed so far. */
  readonly steps: number;
  /** Why the start URL failed (the sandbox still works; its first observation carries the same error), or null. */
  readonly startError: { code: string; message: string } | null;
  /** Executes one or more actions in order (stopping at the first error) and returns an observation. */
  step(actions: Action[], opts?: StepOptions): Promise<StepResult>;
  /** Observation of the current state without acting. */
  observe(opts?: StepOptions): Promise<Observation>;
  /** The current screenshot as image bytes in the sandbox's format (after resize). */
  screenshot(): Promise<{ mime: string; bytes: Buffer; width: number; height: number }>;
  downloads(): DownloadInfo[];
  /** Absolute path of a saved download (kept inside the sandbox's own directory). */
  downloadPath(id: string): string | undefined;
  /** What a policy-output parser needs to know about the last observation: its SoM list (if one was
   * collected), the screenshot size (image px) the model saw, the rel1000 divisor and the pointer position. */
  parseContext(): ParseContext;
  /** Where the browser runs elsewhere (a kubernetes worker, stepped through any replica): brings parseContext() up to
   * date with the browser's own (its last SoM list and pointer). Absent: it always is. */
  syncParseContext?(): Promise<void>;
  /** Episode reset: a fresh context with the new start URL and network rules (see ChromiumSandbox.reset). */
  reset(input?: BrowserResetInput): Promise<void>;
  /** URL, title and tabs of the current state, without taking an observation (queued events stay queued). */
  pageState(): Promise<{ url: string; title: string; tabs: Tab[] }>;
  /** Where the browser runs elsewhere (a kubernetes worker): brings downloads() up to date. Absent: it always is. */
  syncDownloads?(): Promise<void>;
  /** Where the bytes live elsewhere: a download as a stream (undefined: no such saved file). Absent: downloadPath(). */
  openDownload?(id: string): Promise<{ stream: Readable; size: number | null } | undefined>;
}

/**
 * Per-sandbox additions to the browser context, supplied by the composer (the server's recording layer):
 * browser-env stays ignorant of what they are for. A sandbox given extras never takes a warm context.
 */
export interface ContextExtras {
  /** Merged into the context options (e.g. `recordHar`). */
  contextOptions?: Partial<BrowserContextOptions>;
  /** Runs on the fresh context before the start URL is opened (e.g. `routeFromHAR`); a failure fails creation. */
  prepare?(context: BrowserContext): Promise<void>;
  /** The same HAR recording/replay by file path, for a backend whose browser is not in this process (kubernetes):
   * it ships the replay file to the worker and brings the recorded one back to recordPath. */
  har?: { recordPath?: string; replayPath?: string };
}

export interface BrowserEnvironmentConfig {
  executablePath: string;
  /** Chromium processes in the pool. */
  processes: number;
  /** A process is recycled after this many contexts. */
  recycleAfter: number;
  /** Ready contexts kept warm (default options only). */
  warmPool: number;
  /** Memory budget of the warm contexts learned from waves of creates, MiB (0: only warmPool; browser-env/warm-demand.ts). */
  warmPoolMaxMb?: number;
  /** Directory for downloads and per-process state; created if missing. */
  dataDir: string;
  headless: boolean;
  extraArgs: string[];
  /** Per-sandbox limits (defaults: browser-env/limits.ts). */
  limits?: Partial<SandboxLimits>;
  /** The frame cache for sandboxes that do not say (`frame_cache`); on when not given (browser-env/frame-cache.ts);
   * the server gives its `frameCache` setting, off by default (sandbox/config.ts). */
  frameCache?: boolean;
}

/** Creates browser sandboxes; owns the Chromium pool and the network proxy. */
export interface BrowserEnvironment {
  create(id: string, options: BrowserCreateOptions, extras?: ContextExtras): Promise<BrowserSandbox>;
  shutdown(): Promise<void>;
  stats(): Record<string, number>;
}

/** See `BrowserSandboxApi.parseContext`; the shape of vlm-client's FormatOptions it feeds. */
export interface ParseContext {
  som?: SomElement[];
  width?: number;
  height?: number;
  rel_divisor?: 1000 | 999;
  /** Where the last pointer action left the mouse. */
  pointer?: { x: number; y: number; space: 'css_px' };
}
