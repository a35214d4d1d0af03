// The sandbox registry: ids, lifecycle, TTL and idle (heartbeat) expiry, capacity, reaper, shutdown, and the
// sandboxes' step hooks (step-hook.ts: run at ready, after each reported step, at close).
// Knows nothing of HTTP; the server maps its GroveErrors to responses. Its parts: registry-entry.ts (one entry),
// registry-creation.ts (background creation), registry-expiry.ts (TTL/idle), registry-tombstones.ts (closed ids),
// registry-events.ts (lifecycle events).
import { GroveError } from '../protocol/errors.ts';
import type { CreateSandboxBody, SandboxInfo, SandboxStatus } from '../protocol/sandbox.ts';
import type { Admission } from './admission.ts';
import { silentLogger, type Logger } from './log.ts';
import { newEntry, startCreation, type CreationContext } from './registry-creation.ts';
import { adoptedEntry, countsOf, newSandboxId, toInfo, type CloseReason, type Entry } from './registry-entry.ts';
import { RegistryEvents, type RegistryEvent } from './registry-events.ts';
import { expiredEntries, retryAfterSeconds } from './registry-expiry.ts';
import { Tombstones } from './registry-tombstones.ts';
import { StepHooks, type StepContext } from './step-hook.ts';
import { systemClock, type Backend, type Clock, type Sandbox, type SharedSandboxes } from './types.ts';

export type { CloseReason } from './registry-entry.ts';
export type { RegistryEvent } from './registry-events.ts';

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
  /** Admission control of browser sandboxes (admission.ts): refuses creates beyond capacity, queues starts. */
  admission?: Admission;
}

export class SandboxRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly tombstones: Tombstones;
  private readonly events: RegistryEvents;
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly hooks: StepHooks;
  private readonly creation: CreationContext;
  private timer: NodeJS.Timeout | null = null;
  private reaping: Promise<string[]> | null = null;
  private shuttingDown = false;

  constructor(private readonly opts: RegistryOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    this.hooks = opts.hooks ?? new StepHooks(this.log);
    this.tombstones = new Tombstones(opts.tombstones ?? 1000);
    this.events = new RegistryEvents(this.log);
    this.creation = { backend: opts.backend, hooks: this.hooks, clock: this.clock, log: this.log, emit: (e) => this.events.emit(e), admission: opts.admission, live: () => this.liveCount() };
    // Closed by another server (or expired by the shared state's leader): closed here too, with that reason.
    this.shared?.onClosed((id, reason) => {
      const e = this.entries.get(id);
      if (e) void this.closeEntry(e, reason);
    });
    // Closed by this server as the leader without being held here (its creator gone): its hooks' leftovers end.
    this.shared?.onClosedUnheld?.((id, c) => this.hooks.closedUnheld(id, c));
  }

  private get shared(): SharedSandboxes | undefined {
    return this.opts.backend.shared;
  }

  /** The entry of an id held here (created here, or adopted before); no side effects. */
  private get(id: string): Entry | undefined {
    return this.entries.get(id);
  }

  /**
   * Takes over a sandbox another server created, from the shared state, and holds it from now on (its entry).
   * Nothing for an id held already, closed here, unknown to the shared state, or (unless `closingAll`) during a
   * shutdown.
   */
  adopt(id: string, closingAll = false): Entry | undefined {
    const held = this.entries.get(id);
    if (held || this.tombstones.has(id) || (this.shuttingDown && !closingAll)) return held;
    const a = this.shared?.adopt(id);
    if (!a) return undefined;
    const entry = adoptedEntry(id, a);
    this.entries.set(id, entry);
    this.hooks.adopted(id, a);
    return entry;
  }

  /**
   * Before a request about an id: when a server sharing state may know more than this one (an id not held here,
   * or adopted while still `creating` elsewhere), reads the shared state for it (one read, not per step) and adopts
   * it. The shared state's refresh returns once what it read has reached an adopted sandbox (types.ts), so a
   * sandbox recorded ready elsewhere is `ready` here when this resolves.
   */
  async sync(id: string): Promise<void> {
    const shared = this.shared;
    if (!shared || this.tombstones.has(id)) return;
    const e = this.entries.get(id);
    if (e && !(e.phase === 'creating' && e.adopted)) return;
    await shared.refresh(id);
    // Adopted now as ready: what its sandbox reads before it serves (a remote claw sandbox's tools and details from
    // its worker) is read before the request that adopted it goes on.
    const adopted = this.adopt(id);
    if (adopted?.adopted && adopted.phase === 'live') await adopted.sandbox?.ready().catch(() => undefined);
  }

  /** Adopts every sandbox of the shared state not held here yet (before listing them all, or closing them all). */
  syncAll(closingAll = false): void {
    for (const id of this.shared?.ids() ?? []) this.adopt(id, closingAll);
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

  /** Admission control, when this server has it (the step route reports its steps to it). */
  get admission(): Admission | undefined {
    return this.opts.admission;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  onEvent(fn: (e: RegistryEvent) => void): void {
    this.events.on(fn);
  }

  /** Starts the reaper timer (idempotent). */
  start(): void {
    if (this.timer || this.shuttingDown) return;
    this.opts.admission?.start();
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
      const retryAfter = retryAfterSeconds(this.entries.values(), this.clock.now());
      throw new GroveError(
        'capacity_exhausted',
        `The maximum of ${this.opts.maxSandboxes} live sandboxes is reached; delete one or retry in ${retryAfter} s.`,
        { retryAfter },
      );
    }
    // Beyond what the server can carry now: 503 overloaded, before anything is started.
    if (spec.type === 'browser') this.opts.admission?.admit(this.liveCount());
    this.opts.backend.admit?.(spec);
    const now = this.clock.now();
    let id = opts.id ?? newSandboxId();
    while (this.entries.has(id) || this.tombstones.has(id)) id = newSandboxId();
    const entry = newEntry(id, spec, now, { ttlSeconds: this.opts.defaultTtlSeconds, idleTimeoutSeconds: this.opts.idleTimeoutSeconds });
    this.entries.set(id, entry);
    startCreation(this.creation, entry, spec);
    this.events.emit({ type: 'created', id, sandboxType: spec.type });
    return toInfo(entry);
  }

  private entry(id: string): Entry {
    const e = this.get(id);
    if (e) return e;
    const t = this.tombstones.get(id);
    if (t) throw new GroveError('sandbox_closed', `Sandbox ${id} was closed (${t.close_reason}).`);
    throw new GroveError('sandbox_not_found', `No sandbox with id "${id}" (it may have expired or been deleted).`);
  }

  /** Info for a live or recently closed sandbox; sandbox_not_found otherwise. */
  info(id: string): SandboxInfo {
    const e = this.entries.get(id);
    if (e) return this.view(e);
    const closed = this.tombstones.info(id);
    if (closed) return closed;
    throw new GroveError('sandbox_not_found', `No sandbox with id "${id}" (it may have expired or been deleted).`);
  }

  /** Sandboxes held here and not yet closed, oldest first (syncAll() first to include the shared state's). */
  list(): SandboxInfo[] {
    return [...this.entries.values()].map((e) => this.view(e));
  }

  /** Resolves with the info once the sandbox is ready or failed, or when timeoutMs passes (still `creating`). */
  async wait(id: string, timeoutMs: number): Promise<SandboxInfo> {
    let e = this.entries.get(id);
    // Just accepted by another server sharing state (a create answered there a moment ago): wait for its record.
    if (!e && this.shared && !this.tombstones.has(id) && (await this.shared.appear(id, timeoutMs))) e = this.adopt(id);
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
    const e = this.entries.get(id);
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
      this.tombstones.remember({ ...toInfo(e), close_reason: reason });
      this.log.info({ sandbox_id: e.id, reason }, 'sandbox closed');
      this.events.emit({ type: 'closed', id: e.id, sandboxType: e.type, reason });
    })();
    return e.closing;
  }

  /** Closes every sandbox past its TTL or idle deadline; returns their ids. Runs one pass at a time. */
  reap(): Promise<string[]> {
    if (this.reaping) return this.reaping;
    this.reaping = (async () => {
      const expired = expiredEntries(this.entries.values(), this.clock.now(), !!this.shared);
      const closing: Array<Promise<void>> = [];
      const ids: string[] = [];
      for (const { entry: e, reason } of expired) {
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

  /** First phase of a shutdown: refuse new sandboxes (503 shutting_down) and stop the reaper. */
  beginShutdown(): void {
    this.shuttingDown = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.opts.admission?.stop();
  }

  /** Stops the reaper, refuses new sandboxes and closes every sandbox. Idempotent. */
  async shutdown(): Promise<void> {
    this.beginShutdown();
    // Other servers serve shared sandboxes on: only those still being created here are closed.
    const handOver = this.shared ? await this.shared.handOver().catch(() => false) : false;
    // The last server standing closes the shared sandboxes it never touched too: nobody is left to expire them.
    if (this.shared && !handOver) this.syncAll(true);
    const closing = [...this.entries.values()].filter((e) => !handOver || e.phase !== 'live');
    await Promise.all(closing.map((e) => this.closeEntry(e, 'shutdown')));
  }

  /** Counts by type and status, for /metrics. */
  counts(): Array<{ type: string; status: SandboxStatus; count: number }> {
    return countsOf(this.entries.values());
  }
}
