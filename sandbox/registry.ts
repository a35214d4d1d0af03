// The sandbox registry: ids, lifecycle, TTL and idle (heartbeat) expiry, capacity, reaper, shutdown, and the
// sandboxes' step hooks (step-hook.ts: run at ready, after each reported step, at close).
// Knows nothing of HTTP; the server maps its GroveErrors to responses.
import { GroveError } from '../protocol/errors.ts';
import type { CreateSandboxBody, SandboxInfo, SandboxStatus } from '../protocol/sandbox.ts';
import { silentLogger, type Logger } from './log.ts';
import { adoptedEntry, countsOf, expiresAt, newSandboxId, statusOf, toInfo, type CloseReason, type Entry } from './registry-entry.ts';
import { StepHooks, type StepContext } from './step-hook.ts';
import { systemClock, type Backend, type Clock, type Sandbox, type SharedSandboxes } from './types.ts';

export type { CloseReason } from './registry-entry.ts';

export type RegistryEvent =
  | { type: 'created'; id: string; sandboxType: SandboxInfo['type'] }
  | { type: 'ready'; id: string; sandboxType: SandboxInfo['type']; ms: number }
  | { type: 'failed'; id: string; sandboxType: SandboxInfo['type']; code: string }
  | { type: 'closed'; id: string; sandboxType: SandboxInfo['type']; reason: CloseReason };

export interface RegistryOptions {
  backend: Backend;
  maxSandboxes: number;
  defaultTtlSeconds: number;
  idleTimeoutSeconds: number;
  /** Reaper period; the timer only runs between start() and shutdown(). */
  reaperIntervalMs: number;
  clock?: Clock;
  log?: Logger;
  /** Closed sandboxes remembered (status `closed`, idempotent delete); oldest forgotten first. */
  tombstones?: number;
  /** The sandboxes' step hooks (recording attaches to them); default: a set of its own. */
  hooks?: StepHooks;
}

export class SandboxRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly tombstones = new Map<string, SandboxInfo & { close_reason: CloseReason }>();
  private readonly listeners: Array<(e: RegistryEvent) => void> = [];
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly hooks: StepHooks;
  private timer: NodeJS.Timeout | null = null;
  private reaping: Promise<string[]> | null = null;
  private shuttingDown = false;

  constructor(private readonly opts: RegistryOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    this.hooks = opts.hooks ?? new StepHooks(this.log);
    // Closed by another server (or expired by the shared state's leader): closed here too, with that reason.
    this.shared?.onClosed((id, reason) => {
      const e = this.entries.get(id);
      if (e) void this.closeEntry(e, reason);
    });
  }

  private get shared(): SharedSandboxes | undefined {
    return this.opts.backend.shared;
  }

  /** The entry of an id: held here, or adopted from the shared state (created by another server). */
  private find(id: string, closingAll = false): Entry | undefined {
    const e = this.entries.get(id);
    if (e || this.tombstones.has(id) || (this.shuttingDown && !closingAll)) return e;
    const a = this.shared?.adopt(id);
    if (!a) return undefined;
    const entry = adoptedEntry(id, a);
    this.entries.set(id, entry);
    return entry;
  }

  /**
   * Before a request about an id: when a server sharing state may know more than this one (an id not known here,
   * or adopted while still `creating` elsewhere), catch up with the shared state first (one read, not per step).
   */
  async resolve(id: string): Promise<void> {
    const shared = this.shared;
    if (!shared || this.tombstones.has(id)) return;
    const e = this.entries.get(id);
    if (e && !(e.phase === 'creating' && e.adopted)) return;
    await shared.refresh(id);
    const found = this.find(id);
    // An adoption that became ready settles in a few microtasks: let them run before the handler looks.
    if (found?.phase === 'creating') await Promise.race([found.settled, new Promise((r) => setImmediate(r))]);
  }

  /** The public info; with shared state, the last use any server recorded counts. */
  private view(e: Entry): SandboxInfo {
    const shared = this.shared?.lastUsed(e.id);
    if (shared !== undefined && shared > e.lastUsedAt) e.lastUsedAt = shared;
    return toInfo(e);
  }

  get backend(): Backend {
    return this.opts.backend;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  onEvent(fn: (e: RegistryEvent) => void): void {
    this.listeners.push(fn);
  }

  private emit(e: RegistryEvent): void {
    for (const fn of this.listeners) {
      try {
        fn(e);
      } catch (err) {
        this.log.error({ err }, 'registry listener failed');
      }
    }
  }

  /** Starts the reaper timer (idempotent). */
  start(): void {
    if (this.timer || this.shuttingDown) return;
    this.timer = setInterval(() => {
      this.reap().catch((err: unknown) => this.log.error({ err }, 'reaper failed'));
    }, this.opts.reaperIntervalMs);
    // The reaper alone must not keep the process alive.
    this.timer.unref();
  }

  /** Sandboxes that hold (or will hold) resources: they count toward maxSandboxes. */
  liveCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.phase === 'creating' || e.phase === 'live' || e.phase === 'closing') n++;
    return n;
  }

  /**
   * Reserves a slot and starts creating the sandbox in the background; returns at once with status
   * `creating`. Use wait() to learn when it is ready.
   */
  create(spec: CreateSandboxBody, opts: { id?: string } = {}): SandboxInfo {
    if (this.shuttingDown) throw new GroveError('shutting_down');
    // A caller-chosen id (Orchard's `sandbox_id`) must be new: live and remembered ids both count.
    if (opts.id !== undefined && (this.entries.has(opts.id) || this.tombstones.has(opts.id))) {
      throw new GroveError('sandbox_exists', `A sandbox with id "${opts.id}" exists already (or was closed recently); choose another id.`);
    }
    if (!this.opts.backend.supports(spec.type)) {
      throw new GroveError(
        'unsupported_sandbox_type',
        `Sandbox type "${spec.type}" is not supported by the ${this.opts.backend.name} backend of this server.`,
      );
    }
    if (this.liveCount() >= this.opts.maxSandboxes) {
      const retryAfter = this.retryAfterSeconds();
      throw new GroveError(
        'capacity_exhausted',
        `The maximum of ${this.opts.maxSandboxes} live sandboxes is reached; delete one or retry in ${retryAfter} s.`,
        { retryAfter },
      );
    }
    this.opts.backend.admit?.(spec);
    const now = this.clock.now();
    let id = opts.id ?? newSandboxId();
    while (this.entries.has(id) || this.tombstones.has(id)) id = newSandboxId();
    const entry: Entry = {
      id,
      type: spec.type,
      labels: spec.labels ?? {},
      createdAt: now,
      lastUsedAt: now,
      ttlMs: (spec.ttl_seconds ?? this.opts.defaultTtlSeconds) * 1000,
      idleMs: (spec.idle_timeout_seconds ?? this.opts.idleTimeoutSeconds) * 1000,
      phase: 'creating',
      sandbox: null,
      error: null,
      settled: Promise.resolve(),
      backendDone: Promise.resolve(),
      closing: null,
      closeReason: null,
    };
    this.entries.set(id, entry);
    let markBackendDone!: () => void;
    entry.backendDone = new Promise<void>((resolve) => (markBackendDone = resolve));
    entry.settled = this.runCreation(entry, spec, markBackendDone);
    this.emit({ type: 'created', id, sandboxType: spec.type });
    return toInfo(entry);
  }

  private async runCreation(entry: Entry, spec: CreateSandboxBody, markBackendDone: () => void): Promise<void> {
    const started = this.clock.now();
    try {
      let sb: Sandbox;
      try {
        sb = await this.opts.backend.create(entry.id, spec);
        entry.sandbox = sb;
      } finally {
        markBackendDone();
      }
      // Deleted while the backend was still creating: closeEntry() waits for us and closes it.
      if (entry.phase !== 'creating') return;
      await sb.ready();
      if (entry.phase !== 'creating') return;
      // Hooks that must see the sandbox before its first step (a recording's frame 0); a failure fails the creation.
      await this.hooks.ready(entry.id, sb);
      if (entry.phase !== 'creating') return;
      entry.phase = 'live';
      entry.lastUsedAt = this.clock.now();
      this.emit({ type: 'ready', id: entry.id, sandboxType: entry.type, ms: this.clock.now() - started });
    } catch (err) {
      if (entry.phase !== 'creating') return;
      const code = err instanceof GroveError ? err.code : 'internal_error';
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn({ err, sandbox_id: entry.id }, 'sandbox creation failed');
      entry.phase = 'error';
      entry.error = { code, message };
      this.emit({ type: 'failed', id: entry.id, sandboxType: entry.type, code });
      // A failed sandbox keeps its entry (so clients can read the error) but not its resources.
      const sb = entry.sandbox as Sandbox | null;
      if (sb) await sb.close().catch((e: unknown) => this.log.warn({ err: e, sandbox_id: entry.id }, 'closing failed sandbox'));
      await this.hooks.end(entry.id);
    }
  }

  private entry(id: string): Entry {
    const e = this.find(id);
    if (e) return e;
    const t = this.tombstones.get(id);
    if (t) throw new GroveError('sandbox_closed', `Sandbox ${id} was closed (${t.close_reason}).`);
    throw new GroveError('sandbox_not_found', `No sandbox with id "${id}" (it may have expired or been deleted).`);
  }

  /** Info for a live or recently closed sandbox; sandbox_not_found otherwise. */
  info(id: string): SandboxInfo {
    const e = this.find(id);
    if (e) return this.view(e);
    const t = this.tombstones.get(id);
    if (t) {
      const { close_reason: _r, ...info } = t;
      return info;
    }
    throw new GroveError('sandbox_not_found', `No sandbox with id "${id}" (it may have expired or been deleted).`);
  }

  /** Sandboxes not yet closed, oldest first. */
  list(): SandboxInfo[] {
    for (const id of this.shared?.ids() ?? []) this.find(id);
    return [...this.entries.values()].map((e) => this.view(e));
  }

  /** Resolves with the info once the sandbox is ready or failed, or when timeoutMs passes (still `creating`). */
  async wait(id: string, timeoutMs: number): Promise<SandboxInfo> {
    let e = this.find(id);
    // Just accepted by another server sharing state (a create answered there a moment ago): wait for its record.
    if (!e && this.shared && !this.tombstones.has(id) && (await this.shared.appear(id, timeoutMs))) e = this.find(id);
    if (!e) return this.info(id);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([e.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, timeoutMs))))]);
    } finally {
      clearTimeout(timer);
    }
    return this.entries.has(id) ? this.view(e) : this.info(id);
  }

  /** Extends the idle deadline (the TTL is a hard limit and is not extended). */
  heartbeat(id: string): SandboxInfo {
    const e = this.entry(id);
    if (e.phase === 'closing') throw new GroveError('sandbox_closed', `Sandbox ${id} is closing (${e.closeReason}).`);
    e.lastUsedAt = this.clock.now();
    this.shared?.heartbeat(id, e.lastUsedAt);
    return this.view(e);
  }

  /**
   * The ready sandbox for an operation; marks it used. Throws sandbox_not_found / sandbox_closed /
   * sandbox_not_ready (also when creation failed, with the cause in the message).
   */
  use(id: string): Sandbox {
    const e = this.entry(id);
    if (e.phase === 'creating') throw new GroveError('sandbox_not_ready');
    if (e.phase === 'error') {
      throw new GroveError('sandbox_not_ready', `Sandbox ${id} failed to start (${e.error?.code}: ${e.error?.message}); delete it and create a new one.`);
    }
    if (e.phase === 'closing' || !e.sandbox) throw new GroveError('sandbox_closed', `Sandbox ${id} is closing (${e.closeReason}).`);
    if (e.sandbox.status === 'closed') throw new GroveError('sandbox_closed', `Sandbox ${id} was closed.`);
    e.lastUsedAt = this.clock.now();
    return e.sandbox;
  }

  /**
   * A step of this sandbox happened (the server's step route reports each): runs its step hooks. Resolves when
   * they are done, with their failures (logged; a failing hook never fails the step).
   */
  stepped(ctx: StepContext): Promise<unknown[]> {
    return this.hooks.afterStep(ctx);
  }

  /** Marks a sandbox used (e.g. at the end of a long step) without other checks. */
  touch(id: string): void {
    const e = this.entries.get(id);
    if (e && (e.phase === 'live' || e.phase === 'creating')) e.lastUsedAt = this.clock.now();
  }

  /**
   * Idempotent delete: closes a live sandbox, or does nothing for one already closed.
   * Returns false when it was already closed; throws sandbox_not_found for an id never seen.
   */
  async delete(id: string): Promise<boolean> {
    const e = this.find(id);
    if (e) {
      const first = e.closing === null;
      await this.closeEntry(e, 'deleted');
      return first;
    }
    if (this.tombstones.has(id)) return false;
    throw new GroveError('sandbox_not_found', `No sandbox with id "${id}".`);
  }

  private closeEntry(e: Entry, reason: CloseReason): Promise<void> {
    if (e.closing) return e.closing;
    e.closeReason = reason;
    this.shared?.closing(e.id, reason);
    const wasCreating = e.phase === 'creating';
    e.phase = 'closing';
    e.closing = (async () => {
      // If the backend is still creating it, let create() return so the sandbox can be closed for real
      // (not ready(): closing is what makes a hung start give up).
      if (wasCreating) await e.backendDone;
      if (e.sandbox) {
        await e.sandbox.close().catch((err: unknown) => this.log.warn({ err, sandbox_id: e.id }, 'sandbox close failed'));
      }
      // After the close (a recording's HAR is flushed by it): the episode's hooks end.
      await this.hooks.end(e.id);
      e.phase = 'closed';
      this.entries.delete(e.id);
      this.remember({ ...toInfo(e), close_reason: reason });
      this.log.info({ sandbox_id: e.id, reason }, 'sandbox closed');
      this.emit({ type: 'closed', id: e.id, sandboxType: e.type, reason });
    })();
    return e.closing;
  }

  private remember(t: SandboxInfo & { close_reason: CloseReason }): void {
    this.tombstones.set(t.sandbox_id, t);
    const max = this.opts.tombstones ?? 1000;
    while (this.tombstones.size > max) {
      const oldest = this.tombstones.keys().next().value as string;
      this.tombstones.delete(oldest);
    }
  }

  /** Closes every sandbox past its TTL or idle deadline; returns their ids. Runs one pass at a time. */
  reap(): Promise<string[]> {
    if (this.reaping) return this.reaping;
    this.reaping = (async () => {
      const now = this.clock.now();
      const closing: Array<Promise<void>> = [];
      const ids: string[] = [];
      for (const e of this.entries.values()) {
        // Shared sandboxes expire by the shared state (its leader), which knows every server's heartbeats.
        if (e.closing || (this.shared && e.phase !== 'error')) continue;
        let reason: CloseReason | null = null;
        if (e.createdAt + e.ttlMs <= now) reason = 'expired_ttl';
        // A step in progress counts as use: do not pull the sandbox from under it.
        else if (e.lastUsedAt + e.idleMs <= now && statusOf(e) !== 'busy') reason = 'expired_idle';
        if (!reason) continue;
        ids.push(e.id);
        this.log.info({ sandbox_id: e.id, reason }, 'sandbox expired');
        closing.push(this.closeEntry(e, reason));
      }
      await Promise.all(closing);
      return ids;
    })().finally(() => {
      this.reaping = null;
    });
    return this.reaping;
  }

  /** Seconds until the earliest live sandbox expires (a hint for 503 Retry-After), 1..300. */
  private retryAfterSeconds(): number {
    const now = this.clock.now();
    let earliest = Infinity;
    for (const e of this.entries.values()) if (!e.closing) earliest = Math.min(earliest, expiresAt(e));
    if (!Number.isFinite(earliest)) return 1;
    return Math.min(300, Math.max(1, Math.ceil((earliest - now) / 1000)));
  }

  /** First phase of a shutdown: refuse new sandboxes (503 shutting_down) and stop the reaper. */
  beginShutdown(): void {
    this.shuttingDown = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stops the reaper, refuses new sandboxes and closes every sandbox. Idempotent. */
  async shutdown(): Promise<void> {
    this.beginShutdown();
    // Other servers serve shared sandboxes on: only those still being created here are closed.
    const handOver = this.shared ? await this.shared.handOver().catch(() => false) : false;
    // The last server standing closes the shared sandboxes it never touched too: nobody is left to expire them.
    if (this.shared && !handOver) for (const id of this.shared.ids()) this.find(id, true);
    const closing = [...this.entries.values()].filter((e) => !handOver || e.phase !== 'live');
    await Promise.all(closing.map((e) => this.closeEntry(e, 'shutdown')));
  }

  /** Counts by type and status, for /metrics. */
  counts(): Array<{ type: string; status: SandboxStatus; count: number }> {
    return countsOf(this.entries.values());
  }
}
