// Per-sandbox resource limits (issue 8): a long run meets popup storms and endless downloads. Each limit is
// configurable (GroveConfig → BrowserEnvironmentConfig) and reported to the policy as a `limit` event when hit.
export interface SandboxLimits {
  /** Open tabs; a page's popups beyond it are closed at once, a `new_tab` beyond it fails (limit_reached). */
  maxTabs: number;
  /** Downloads kept per episode (a reset removes the last episode's and counts again); later ones are cancelled. */
  maxDownloads: number;
  /** Bytes per download; a larger file is deleted and reported as failed. */
  maxDownloadBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { maxTabs: 20, maxDownloads: 50, maxDownloadBytes: 256 * 1024 * 1024 };

export type LimitName = 'tabs' | 'downloads' | 'download_bytes';
