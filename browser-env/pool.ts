// A small pool of Chromium processes handing out BrowserContexts (one per browser sandbox).
// Processes are recycled after `recycleAfter` contexts and replaced when they crash; nothing outlives
// the server (see reaper.ts for the watchdog and the restart cleanup). This module does the accounting (which
// process serves the next context, when to launch, recycle or replace one); a process's own launch, close and
// clean-up are pool-process.ts, the Chromium flags and environment chromium-launch.ts.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { GroveError } from '../protocol/errors.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { ChromiumLauncher, type ChromiumLaunchConfig } from './chromium-launch.ts';
import { closeOrphanedContexts, learnFrom, watch } from './playwright-orphans.ts';
import type { CaptureGate } from './capture-gate.ts';
import { PoolProcess, type ProcessHost } from './pool-process.ts';
import { liveTokens, PidFile, reapStale, removeStaleArtifacts, Watchdog } from './reaper.ts';

export { CHROMIUM_FLAGS, MAX_CHROMIUM_TMPDIR } from './chromium-launch.ts';

/** After a browser died, when to look once more for contexts Playwright left open in it (creations settle by then). */
const ORPHAN_SWEEP_DELAY_MS = 5_000;

export interface ChromiumPoolConfig extends ChromiumLaunchConfig {
  processes: number;
  /** Contexts a process serves before it is recycled; 0 = never. */
  recycleAfter: number;
  /** Holds `chromium-pids/` (pidfiles for the watchdog and restart cleanup) and `artifacts/`. */
  dataDir: string;
  log?: Logger;
}

export interface PooledContext {
  readonly context: BrowserContext;
  readonly browserPid: number;
  /** The process's capture gate: its screenshots are served a few at a time, in order. */
  readonly captures: CaptureGate;
  /** Closes the context and returns its slot to the pool. Idempotent. */
  release(): Promise<void>;
}

export class ChromiumPool {
  private readonly cfg: ChromiumPoolConfig;
  private readonly log: Logger;
  private readonly token = randomBytes(6).toString('hex');
  private readonly launcher: ChromiumLauncher;
  private readonly host: ProcessHost;
  private readonly procs: PoolProcess[] = [];
  private launches = 0;
  private startPromise?: Promise<void>;
  private shutdownPromise?: Promise<void>;
  private shuttingDown = false;
  private pidFile?: PidFile;
  private watchdog?: Watchdog;
  private counters = { contexts_open: 0, contexts_created_total: 0, browser_restarts_total: 0, browser_crashes_total: 0, captures_queued_total: 0 };

  constructor(cfg: ChromiumPoolConfig) {
    if (!Number.isInteger(cfg.processes) || cfg.processes < 1) throw new Error('ChromiumPool: processes must be >= 1');
    this.cfg = cfg;
    this.log = cfg.log ?? silentLogger;
    this.launcher = new ChromiumLauncher(cfg, this.log);
    this.host = {
      token: this.token,
      launcher: this.launcher,
      log: this.log,
      pidFile: () => this.pidFile,
      shuttingDown: () => this.shuttingDown,
      forget: (proc) => this.remove(proc),
      disconnected: (proc) => this.onDisconnected(proc),
    };
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
    const stale = removeStaleArtifacts(this.launcher.artifactsRoot(), liveTokens(dir));
    if (stale.length) this.log.warn({ folders: stale.length }, 'removed artifact folders left by a dead server');
    this.watchdog = Watchdog.start(this.pidFile, this.token, this.launcher.artifactsRoot(), this.log);
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
        watch(proc.browser);
        context = await proc.browser.newContext(options);
      } catch (err) {
        proc.load--;
        this.retireIfIdle(proc);
        lastError = err;
        if (proc.state === 'ready' && proc.browser?.isConnected()) throw err; // a bad option, not a dead browser
        // The browser died under this creation: Playwright may keep the half-made context forever (playwright-orphans.ts).
        if (proc.browser) this.closeOrphans(proc.browser);
        continue;
      }
      return this.track(proc, context);
    }
    throw new GroveError('browser_crashed', 'Could not create a browser context: the browser kept failing.', { cause: lastError });
  }

  private track(proc: PoolProcess, context: BrowserContext): PooledContext {
    learnFrom(context);
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
      captures: proc.captures,
      release: () => {
        released ??= context
          .close()
          .catch((err: unknown) => this.log.debug({ err }, 'context close failed (browser gone?)'))
          .then(onGone);
        return released;
      },
    };
  }

  private pick(): PoolProcess {
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
    const proc = new PoolProcess(n, this.host);
    proc.captures.onWait = () => this.counters.captures_queued_total++;
    proc.ready = proc.launch();
    // Waiters see the error through proc.ready; this handler only keeps an unawaited failure from being unhandled.
    proc.ready.catch((err: unknown) => this.log.error({ err, n }, 'chromium launch failed'));
    this.procs.push(proc);
  }

  private onDisconnected(proc: PoolProcess): void {
    if (proc.state === 'closing' || proc.state === 'dead') return;
    proc.state = 'dead';
    proc.accepting = false;
    this.counters.browser_crashes_total++;
    this.log.warn({ pid: proc.pid, n: proc.n, contexts: proc.load }, 'chromium disconnected unexpectedly; replacing it');
    proc.reap();
    this.remove(proc);
    this.ensureCapacity();
    // Creations in flight settle after this; each sweeps as it fails, and this late pass catches any that a caller
    // stopped waiting for.
    const browser = proc.browser;
    if (browser) setTimeout(() => this.closeOrphans(browser), ORPHAN_SWEEP_DELAY_MS).unref();
  }

  private closeOrphans(browser: Browser): void {
    const closed = closeOrphanedContexts(browser);
    if (closed) this.log.info({ closed }, 'closed contexts Playwright left open in a dead browser');
  }

  private retireIfIdle(proc: PoolProcess): void {
    if (proc.accepting || proc.load > 0 || proc.state !== 'ready') return;
    proc.close().catch((err: unknown) => this.log.error({ err, pid: proc.pid }, 'closing a recycled chromium failed'));
  }

  private remove(proc: PoolProcess): void {
    const i = this.procs.indexOf(proc);
    if (i >= 0) this.procs.splice(i, 1);
  }

  stats(): Record<string, number> {
    const running = this.procs.filter((p) => p.state === 'ready' || p.state === 'closing');
    const gates = running.map((p) => p.captures.stats());
    const out: Record<string, number> = { chromium_processes: running.length, ...this.counters, captures_waiting: gates.reduce((n, g) => n + g.queued, 0) };
    // Browser sandboxes whose screenshots the processes serve within a burst's time (capture-gate.ts), once every
    // running process has measured it: admission control refuses creates beyond it.
    if (gates.length && gates.every((g) => g.capacity !== undefined)) out.capture_capacity = gates.reduce((n, g) => n + g.capacity!, 0);
    return out;
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
    await Promise.allSettled([...this.procs].map((p) => p.close()));
    await this.watchdog?.stop();
    this.pidFile?.delete();
  }
}
