// The soak's flags, defaults and constants, and its own temporary folder (made when this module loads).
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const flag = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
export const CI = argv.includes('--ci');
export const MINUTES = Number(flag('minutes') ?? (CI ? 2 : 60));
export const CONC = Number(flag('concurrency') ?? (CI ? 4 : 16));
export const SNAPSHOTS = flag('heap-snapshots');
/** A diagnostic run: every server writes a CPU profile (10 ms samples) here when it exits (bench/soak/README.md). */
export const CPU_PROF = flag('server-cpu-prof');
export const OUT = flag('json') ?? path.join(ROOT, 'bench/results', CI ? 'soak-ci.json' : 'soak.json');
/** Renderer and browser kills alternate on this period (60 min / 50 s: 36 of each). */
export const KILL_PERIOD_MS = Number(flag('kill-period-ms') ?? (CI ? 10_000 : 50_000));
/** Server SIGKILL + restarts, evenly spread over the first RESTART_WINDOW of the run. */
export const RESTARTS = Number(flag('restarts') ?? (CI ? 2 : 24));
// A fresh server compiles code for minutes (soak at 3c0d5a3: the live code space grew 4.0 → 5.4 MB over the 38
// minutes after the last restart at 23 min, slowing all the while): restarts end at 15 min, so the process whose
// heap the second half judges is 15 minutes into its warm-up when that half starts.
export const RESTART_WINDOW = 0.25;
/** Injections of each fault a full run must reach. */
export const TARGET_INJECTIONS = CI ? 1 : 20;
export const STEPS_PER_EPISODE = 8;
export const KEY = 'soak-key-' + Math.random().toString(36).slice(2);
export const SB_OPTIONS = { action_timeout_ms: 5000, settle_max_ms: 3000 };
/** Client-side slack over the step's own deadline (HTTP and JSON on a loaded machine). */
export const DEADLINE_SLACK_MS = 3000;

export type PageFault = 'busy_loop' | 'dialog_storm' | 'popup_storm' | 'never_loads' | 'large_download';
export type ProcFault = 'kill_renderer' | 'kill_browser' | 'server_restart';
export const PAGE_FAULTS: PageFault[] = ['busy_loop', 'dialog_storm', 'popup_storm', 'never_loads', 'large_download'];
export const ALL_FAULTS: string[] = ['kill_renderer', 'kill_browser', 'server_restart', ...PAGE_FAULTS];

export const soakDir = mkdtempSync(path.join(os.tmpdir(), 'grove-soak-'));
export const dataDir = path.join(soakDir, 'data');
/** The server's TMPDIR: every temporary folder it (or Playwright) makes is found here, apart from other users'. */
export const serverTmp = path.join(soakDir, 'tmp');
mkdirSync(serverTmp, { recursive: true });
/** Every server's log (pino JSON lines, warn and up): its errors are summarised at the end. */
export const serverLog = path.join(soakDir, 'server.log');

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}
