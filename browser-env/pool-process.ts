// One Chromium process of the pool: its launch (artifacts folder, marker flag, URL guard, root PID in the pidfile),
// its graceful close and its hard clean-up, plus the slot counters the pool keeps on it. When to launch, recycle or
// replace a process is the pool's business (pool.ts).
//
// PID discovery: playwright-core's launch() Browser has no process() accessor. Every launch carries a
// unique marker flag (`--grove-pool=<token>.<n>`, ignored by Chromium); after launch the root PID is
// the one process whose command line holds it. The Debian /usr/bin/chromium wrapper execs the real
// binary, so the PID Playwright spawned is the browser's root and the leader of its session.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { Logger } from '../sandbox/log.ts';
import type { ChromiumLauncher } from './chromium-launch.ts';
import { findProcessByArg, killTree, MARKER_FLAG, removeProfileDir, userDataDirOf, type PidFile } from './reaper.ts';
import { CaptureGate } from './capture-gate.ts';
import { guardBrowser } from './url-policy.ts';

export type ProcState = 'launching' | 'ready' | 'closing' | 'dead';

/** What a process needs from its pool. */
export interface ProcessHost {
  readonly token: string;
  readonly launcher: ChromiumLauncher;
  readonly log: Logger;
  /** The pool's pidfile (undefined before the pool started). */
  pidFile(): PidFile | undefined;
  shuttingDown(): boolean;
  /** Takes the process off the pool's list. */
  forget(proc: PoolProcess): void;
  /** The browser disconnected; called in every state (the pool tells a crash from a close). */
  disconnected(proc: PoolProcess): void;
}

export class PoolProcess {
  state: ProcState = 'launching';
  /** False once recycling started (or the process is going away): no new contexts. */
  accepting = true;
  /** Settles when the launch did; set by the pool to `launch()`. */
  ready: Promise<void> = Promise.resolve();
  browser?: Browser;
  pid?: number;
  start?: number;
  userDataDir?: string;
  /**
   * Playwright's artifacts (download staging) folder of this process, inside the pool's dataDir; also Chromium's
   * TMPDIR (its singleton socket folder), so removing it after a crash or a server restart leaves nothing behind.
   */
  artifactsDir?: string;
  /** Contexts open or being created on this process. */
  load = 0;
  /** Contexts assigned to this process over its life (recycling counter). */
  assigned = 0;
  /** Its screenshots are taken a few at a time, in order (capture-gate.ts). */
  readonly captures = new CaptureGate();
  private closed?: Promise<void>;

  constructor(
    readonly n: number,
    private readonly host: ProcessHost,
  ) {}

  /** Launches the browser, guards it, finds its root process; on failure the process is dead and forgotten. */
  async launch(): Promise<void> {
    const host = this.host;
    const marker = `${MARKER_FLAG}=${host.token}.${this.n}`;
    this.artifactsDir = join(host.launcher.artifactsRoot(), `${host.token}.${this.n}`);
    let browser: Browser;
    // Until the browser is in the pidfile, a kill of the server could leave Playwright's profile folder unnamed.
    const launching = host.pidFile()?.beginLaunch();
    try {
      try {
        mkdirSync(this.artifactsDir, { recursive: true });
        browser = await host.launcher.launch(marker, this.artifactsDir);
      } catch (err) {
        await this.abandon();
        throw err;
      }
      try {
        // Local URL schemes are refused in Chromium's network stack before any context exists (url-policy.ts).
        await guardBrowser(browser, host.log);
      } catch (err) {
        await this.abandon(browser);
        throw err;
      }
      const root = findProcessByArg(marker);
      if (root) {
        this.pid = root.pid;
        this.start = root.start;
        this.userDataDir = userDataDirOf(root.pid);
        host.pidFile()?.add({ pid: root.pid, start: root.start, userDataDir: this.userDataDir });
      } else {
        host.log.warn({ marker }, 'could not find the Chromium root process; relying on the watchdog marker scan');
      }
    } finally {
      if (launching) host.pidFile()?.endLaunch(launching);
    }
    this.browser = browser;
    browser.on('disconnected', () => host.disconnected(this));
    if (host.shuttingDown()) {
      // shutdown() started while we were launching; it waits for `ready` and closes us.
      this.state = 'ready';
      return;
    }
    this.state = 'ready';
    host.log.info({ pid: this.pid, n: this.n }, 'chromium started');
  }

  /** A launch that failed: the process is dead and off the pool's list, the browser that did start is closed, and
   * then its artifacts folder goes (the browser writes there until it is closed). */
  private async abandon(browser?: Browser): Promise<void> {
    this.state = 'dead';
    this.accepting = false;
    this.host.forget(this);
    await browser?.close().catch(() => undefined);
    if (this.artifactsDir) rmSync(this.artifactsDir, { recursive: true, force: true });
  }

  /** Closes the browser (killing what is left after 5 s) and forgets the process. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.doClose();
    return this.closed;
  }

  private async doClose(): Promise<void> {
    if (this.state === 'dead') return;
    this.state = 'closing';
    this.accepting = false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.browser?.close().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 5000);
      }),
    ]);
    clearTimeout(timer);
    // Whatever did not exit with the browser (or a hung browser) goes the hard way.
    this.reap();
    this.state = 'dead';
    this.host.forget(this);
    this.host.log.info({ pid: this.pid, n: this.n }, 'chromium closed');
  }

  /** The hard way: removes the artifacts folder, kills the process tree, removes its profile and pidfile entry. */
  reap(): void {
    if (this.artifactsDir) rmSync(this.artifactsDir, { recursive: true, force: true });
    if (this.pid === undefined || this.start === undefined) return;
    killTree({ pid: this.pid, start: this.start });
    removeProfileDir(this.userDataDir);
    this.host.pidFile()?.remove(this.pid);
  }
}
