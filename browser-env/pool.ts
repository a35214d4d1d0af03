// A small pool of Chromium processes handing out BrowserContexts (one per browser sandbox).
// Processes are recycled after `recycleAfter` contexts and replaced when they crash; nothing outlives
// the server (see reaper.ts for the watchdog and the restart cleanup).
//
// PID discovery: playwright-core's launch() Browser has no process() accessor. Every launch carries a
// unique marker flag (`--grove-pool=<token>.<n>`, ignored by Chromium); after launch the root PID is
// the one process whose command line holds it. The Debian /usr/bin/chromium wrapper execs the real
// binary, so the PID Playwright spawned is the browser's root and the leader of its session.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from 'playwright-core';
import { GroveError } from '../protocol/errors.ts';
import { childProcessEnv } from '../sandbox/config.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { guardBrowser } from './url-policy.ts';
import { mkdirSync, rmSync } from 'node:fs';
import {
  findProcessByArg,
  killTree,
  liveTokens,
  MARKER_FLAG,
  PidFile,
  reapStale,
  removeProfileDir,
  removeStaleArtifacts,
  userDataDirOf,
  Watchdog,
} from './reaper.ts';

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

export interface ChromiumPoolConfig {
  executablePath: string;
  processes: number;
  /** Contexts a process serves before it is recycled; 0 = never. */
  recycleAfter: number;
  /** Holds `chromium-pids/` (pidfiles for the watchdog and restart cleanup). */
  dataDir: string;
  headless: boolean;
  extraArgs: string[];
  log?: Logger;
  /** Launch timeout per process (ms). */
  launchTimeoutMs?: number;
  /** Environment of the Chromium processes (default: the server's, from the config module); TMPDIR is replaced. */
  env?: Record<string, string>;
}

/**
 * Chromium's singleton socket lives at `$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket`, and a Unix socket path
 * has at most 107 bytes: Chromium aborts at start ("Socket path too long") when TMPDIR is longer than this.
 */
export const MAX_CHROMIUM_TMPDIR = 107 - '/org.chromium.Chromium.XXXXXX/SingletonSocket'.length;

export interface PooledContext {
  readonly context: BrowserContext;
  readonly browserPid: number;
  /** Closes the context and returns its slot to the pool. Idempotent. */
  release(): Promise<void>;
}

type ProcState = 'launching' | 'ready' | 'closing' | 'dead';

interface Proc {
  n: number;
  state: ProcState;
  /** False once recycling started (or the process is going away): no new contexts. */
  accepting: boolean;
  ready: Promise<void>;
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
  load: number;
  /** Contexts assigned to this process over its life (recycling counter). */
  assigned: number;
  closed?: Promise<void>;
}

export class ChromiumPool {
  private readonly cfg: ChromiumPoolConfig;
  private readonly log: Logger;
  private readonly token = randomBytes(6).toString('hex');
  private readonly procs: Proc[] = [];
  private launches = 0;
  private startPromise?: Promise<void>;
  private shutdownPromise?: Promise<void>;
  private shuttingDown = false;
  private pidFile?: PidFile;
  private watchdog?: Watchdog;
  private tmpdirWarned = false;
  private counters = { contexts_open: 0, contexts_created_total: 0, browser_restarts_total: 0, browser_crashes_total: 0 };

  constructor(cfg: ChromiumPoolConfig) {
    if (!Number.isInteger(cfg.processes) || cfg.processes < 1) throw new Error('ChromiumPool: processes must be >= 1');
    this.cfg = cfg;
    this.log = cfg.log ?? silentLogger;
  }

  /** Reaps what a dead server left, starts the watchdog and launches the processes. Idempotent. */
  start(): Promise<void> {
    this.startPromise ??= this.doStart();
    return this.startPromise;
  }

  private async doStart(): Promise<void> {
    const dir = join(this.cfg.dataDir, 'chromium-pids');
    this.pidFile = new PidFile(dir, this.token);
    reapStale(dir, this.log);
    // Playwright would stage downloads in a /tmp/playwright-artifacts-* folder per launch that a SIGKILLed server
    // leaves behind; ours live under the dataDir, named by the pool's token, and a restart removes dead pools' ones.
    const stale = removeStaleArtifacts(this.artifactsRoot(), liveTokens(dir));
    if (stale.length) this.log.warn({ folders: stale.length }, 'removed artifact folders left by a dead server');
    this.watchdog = Watchdog.start(this.pidFile, this.token, this.artifactsRoot(), this.log);
    this.ensureCapacity();
    const results = await Promise.allSettled(this.procs.map((p) => p.ready));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length === results.length) throw failed[0].reason;
  }

  /** A new context on the least-loaded healthy process (waits for a launch if none is ready). */
  async newContext(options: BrowserContextOptions = {}): Promise<PooledContext> {
    if (this.shuttingDown) throw new GroveError('shutting_down');
    try {
      await this.start();
    } catch (err) {
      // A failed first launch is retried below; only a pool that could not even set up its pidfile is unusable.
      if (!this.pidFile) throw err;
    }
    let lastError: unknown;
    // A process can die between choosing it and creating the context: try another one a few times.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.shuttingDown) throw new GroveError('shutting_down');
      this.ensureCapacity();
      const proc = this.pick();
      proc.load++;
      proc.assigned++;
      if (this.cfg.recycleAfter > 0 && proc.assigned >= this.cfg.recycleAfter) {
        // Stop giving it contexts now, so the replacement launches while this one finishes its work.
        proc.accepting = false;
        this.ensureCapacity();
      }
      let context: BrowserContext;
      try {
        await proc.ready;
        if (proc.state !== 'ready' || !proc.browser) throw new Error('browser is gone');
        context = await proc.browser.newContext(options);
      } catch (err) {
        proc.load--;
        this.retireIfIdle(proc);
        lastError = err;
        if (proc.state === 'ready' && proc.browser?.isConnected()) throw err; // a bad option, not a dead browser
        continue;
      }
      return this.track(proc, context);
    }
    throw new GroveError('browser_crashed', 'Could not create a browser context: the browser kept failing.', { cause: lastError });
  }

  private track(proc: Proc, context: BrowserContext): PooledContext {
    this.counters.contexts_open++;
    this.counters.contexts_created_total++;
    let gone = false;
    const onGone = () => {
      if (gone) return;
      gone = true;
      this.counters.contexts_open--;
      proc.load--;
      this.retireIfIdle(proc);
    };
    // 'close' also fires when the browser dies, so a crashed context frees its slot even without release().
    context.once('close', onGone);
    let released: Promise<void> | undefined;
    return {
      context,
      browserPid: proc.pid ?? 0,
      release: () => {
        released ??= context
          .close()
          .catch((err: unknown) => this.log.debug({ err }, 'context close failed (browser gone?)'))
          .then(onGone);
        return released;
      },
    };
  }

  private pick(): Proc {
    const candidates = this.procs.filter((p) => p.accepting && (p.state === 'ready' || p.state === 'launching'));
    // ensureCapacity() just ran, so there is at least one (launching) candidate.
    candidates.sort((a, b) => a.load - b.load || (a.state === 'ready' ? -1 : 0) - (b.state === 'ready' ? -1 : 0) || a.n - b.n);
    return candidates[0];
  }

  /** Launches processes until `processes` accept contexts. Synchronous bookkeeping: concurrent callers never over-launch. */
  private ensureCapacity(): void {
    if (this.shuttingDown || !this.pidFile) return;
    const active = this.procs.filter((p) => p.accepting && (p.state === 'ready' || p.state === 'launching')).length;
    for (let i = active; i < this.cfg.processes; i++) this.launch();
  }

  private launch(): void {
    const n = ++this.launches;
    if (n > this.cfg.processes) this.counters.browser_restarts_total++;
    const proc: Proc = { n, state: 'launching', accepting: true, load: 0, assigned: 0, ready: Promise.resolve() };
    proc.ready = this.doLaunch(proc);
    // Waiters see the error through proc.ready; this handler only keeps an unawaited failure from being unhandled.
    proc.ready.catch((err: unknown) => this.log.error({ err, n }, 'chromium launch failed'));
    this.procs.push(proc);
  }

  private async doLaunch(proc: Proc): Promise<void> {
    const marker = `${MARKER_FLAG}=${this.token}.${proc.n}`;
    proc.artifactsDir = join(this.artifactsRoot(), `${this.token}.${proc.n}`);
    let browser: Browser;
    try {
      mkdirSync(proc.artifactsDir, { recursive: true });
      browser = await chromium.launch({
        env: this.chromiumEnv(proc.artifactsDir),
        artifactsDir: proc.artifactsDir,
        downloadsPath: proc.artifactsDir,
        executablePath: this.cfg.executablePath,
        headless: this.cfg.headless,
        args: [...CHROMIUM_FLAGS, ...this.cfg.extraArgs, marker],
        // Signals belong to the server's graceful shutdown, not to Playwright.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: this.cfg.launchTimeoutMs ?? 30_000,
      });
    } catch (err) {
      proc.state = 'dead';
      proc.accepting = false;
      this.remove(proc);
      rmSync(proc.artifactsDir, { recursive: true, force: true });
      throw err;
    }
    try {
      // Local URL schemes are refused in Chromium's network stack before any context exists (url-policy.ts).
      await guardBrowser(browser, this.log);
    } catch (err) {
      proc.state = 'dead';
      proc.accepting = false;
      this.remove(proc);
      await browser.close().catch(() => undefined);
      rmSync(proc.artifactsDir, { recursive: true, force: true });
      throw err;
    }
    const root = findProcessByArg(marker);
    if (root) {
      proc.pid = root.pid;
      proc.start = root.start;
      proc.userDataDir = userDataDirOf(root.pid);
      this.pidFile?.add({ pid: root.pid, start: root.start, userDataDir: proc.userDataDir });
    } else {
      this.log.warn({ marker }, 'could not find the Chromium root process; relying on the watchdog marker scan');
    }
    proc.browser = browser;
    browser.on('disconnected', () => this.onDisconnected(proc));
    if (this.shuttingDown) {
      // shutdown() started while we were launching; it waits for `ready` and closes us.
      proc.state = 'ready';
      return;
    }
    proc.state = 'ready';
    this.log.info({ pid: proc.pid, n: proc.n }, 'chromium started');
  }

  private onDisconnected(proc: Proc): void {
    if (proc.state === 'closing' || proc.state === 'dead') return;
    proc.state = 'dead';
    proc.accepting = false;
    this.counters.browser_crashes_total++;
    this.log.warn({ pid: proc.pid, n: proc.n, contexts: proc.load }, 'chromium disconnected unexpectedly; replacing it');
    this.reapProc(proc);
    this.remove(proc);
    this.ensureCapacity();
  }

  private retireIfIdle(proc: Proc): void {
    if (proc.accepting || proc.load > 0 || proc.state !== 'ready') return;
    this.closeProc(proc).catch((err: unknown) => this.log.error({ err, pid: proc.pid }, 'closing a recycled chromium failed'));
  }

  private closeProc(proc: Proc): Promise<void> {
    proc.closed ??= this.doCloseProc(proc);
    return proc.closed;
  }

  private async doCloseProc(proc: Proc): Promise<void> {
    if (proc.state === 'dead') return;
    proc.state = 'closing';
    proc.accepting = false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      proc.browser?.close().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 5000);
      }),
    ]);
    clearTimeout(timer);
    // Whatever did not exit with the browser (or a hung browser) goes the hard way.
    this.reapProc(proc);
    proc.state = 'dead';
    this.remove(proc);
    this.log.info({ pid: proc.pid, n: proc.n }, 'chromium closed');
  }

  private artifactsRoot(): string {
    return join(this.cfg.dataDir, 'artifacts');
  }

  /**
   * Chromium's environment: TMPDIR is the process's own artifacts folder, so the temporary folders Chromium makes
   * (its singleton socket folder, which a killed browser leaves behind) go where crash and restart cleanup look.
   * A dataDir too deep for a socket path keeps the inherited TMPDIR (and says so once).
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

  private reapProc(proc: Proc): void {
    if (proc.artifactsDir) rmSync(proc.artifactsDir, { recursive: true, force: true });
    if (proc.pid === undefined || proc.start === undefined) return;
    killTree({ pid: proc.pid, start: proc.start });
    removeProfileDir(proc.userDataDir);
    this.pidFile?.remove(proc.pid);
  }

  private remove(proc: Proc): void {
    const i = this.procs.indexOf(proc);
    if (i >= 0) this.procs.splice(i, 1);
  }

  stats(): Record<string, number> {
    return {
      chromium_processes: this.procs.filter((p) => p.state === 'ready' || p.state === 'closing').length,
      ...this.counters,
    };
  }

  /** Whether no other live server uses this dataDir (then what a dead one left there is garbage). */
  soleOwner(): boolean {
    const live = liveTokens(join(this.cfg.dataDir, 'chromium-pids'));
    return [...live].every((t) => t === this.token);
  }

  /** Root PIDs of the live Chromium processes. */
  pids(): number[] {
    return this.procs.filter((p) => p.pid !== undefined && (p.state === 'ready' || p.state === 'closing')).map((p) => p.pid!);
  }

  /** Closes every browser, stops the watchdog, removes the pidfile. Idempotent. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.shuttingDown = true;
    await this.startPromise?.catch(() => undefined);
    await Promise.allSettled(this.procs.map((p) => p.ready));
    await Promise.allSettled([...this.procs].map((p) => this.closeProc(p)));
    await this.watchdog?.stop();
    this.pidFile?.delete();
  }
}
