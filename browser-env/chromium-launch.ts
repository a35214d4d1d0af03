// How a pool's Chromium processes are started: the flags, the environment (TMPDIR = the process's artifacts folder)
// and the launch options. Which process to start, and when, is the pool's business (pool.ts, pool-process.ts).
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { childProcessEnv } from '../sandbox/config.ts';
import type { Logger } from '../sandbox/log.ts';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  // WebRTC sends STUN/TURN/ICE over UDP, which the network gate (an HTTP proxy) never sees: UDP is allowed only
  // through a proxy, and there is no UDP proxy, so a page gathers no UDP candidate and sends no datagram
  // (test/browser-env/webrtc.slow.test.ts).
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/**
 * Chromium's singleton socket lives at `$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket`, and a Unix socket path
 * has at most 107 bytes: Chromium aborts at start ("Socket path too long") when TMPDIR is longer than this.
 */
export const MAX_CHROMIUM_TMPDIR = 107 - '/org.chromium.Chromium.XXXXXX/SingletonSocket'.length;

/** What a process's artifacts folder adds to the root: `/<12-hex token>.<n>`. */
const ARTIFACTS_NAME_MAX = '/0123456789ab.999'.length;

export interface ChromiumLaunchConfig {
  executablePath: string;
  /** Holds `artifacts/` (each process's download staging folder and TMPDIR). */
  dataDir: string;
  headless: boolean;
  extraArgs: string[];
  /** Launch timeout per process (ms). */
  launchTimeoutMs?: number;
  /** Environment of the Chromium processes (default: the server's, from the config module); TMPDIR is replaced. */
  env?: Record<string, string>;
}

/** Starts the Chromium processes of one pool (one launcher per pool: it warns once about a too-deep dataDir). */
export class ChromiumLauncher {
  private tmpdirWarned = false;

  constructor(
    private readonly cfg: ChromiumLaunchConfig,
    private readonly log: Logger,
  ) {}

  /**
   * Where the pool's processes keep their artifacts folders (`<token>.<n>`, each also its Chromium's TMPDIR):
   * `<dataDir>/artifacts`, or, when that is too deep for Chromium's socket path, a folder in the server's TMPDIR named
   * after the data folder. Either way Chromium's own temporary folders land where the restart cleanup and the
   * watchdog (which remove the folders of dead pools' tokens) look: left in the bare TMPDIR, a folder Chromium's exit
   * had already unlinked from its profile stayed behind after a SIGKILL.
   */
  artifactsRoot(): string {
    const root = join(this.cfg.dataDir, 'artifacts');
    if (root.length + ARTIFACTS_NAME_MAX <= MAX_CHROMIUM_TMPDIR) return root;
    // Short: the TMPDIR's own length counts against the same limit.
    return join(tmpdir(), `grove-a-${createHash('sha256').update(resolve(root)).digest('hex').slice(0, 10)}`);
  }

  /** Launches one Chromium; `marker` is the flag that finds its root process, `artifactsDir` must exist. */
  launch(marker: string, artifactsDir: string): Promise<Browser> {
    return chromium.launch({
      env: this.chromiumEnv(artifactsDir),
      artifactsDir,
      downloadsPath: artifactsDir,
      executablePath: this.cfg.executablePath,
      headless: this.cfg.headless,
      args: [...CHROMIUM_FLAGS, ...this.cfg.extraArgs, marker],
      // Signals belong to the server's graceful shutdown, not to Playwright.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: this.cfg.launchTimeoutMs ?? 30_000,
    });
  }

  /**
   * Chromium's environment: TMPDIR is the process's own artifacts folder, so the temporary folders Chromium makes
   * (its singleton socket folder, which a killed browser leaves behind) go where crash and restart cleanup look.
   * An artifacts folder still too deep for a socket path (the server's TMPDIR is deep too, see artifactsRoot) keeps
   * the inherited TMPDIR (and says so once).
   */
  private chromiumEnv(artifactsDir: string): Record<string, string> {
    const env = this.cfg.env ?? childProcessEnv();
    if (artifactsDir.length <= MAX_CHROMIUM_TMPDIR) return { ...env, TMPDIR: artifactsDir };
    if (!this.tmpdirWarned) {
      this.tmpdirWarned = true;
      this.log.warn(
        { artifactsDir, max: MAX_CHROMIUM_TMPDIR },
        'dataDir is too deep for Chromium socket paths: Chromium keeps the inherited TMPDIR, where a killed browser may leave a folder',
      );
    }
    return env;
  }
}
