// The registry with a backend whose sandboxes several servers share (Backend.shared, implemented for real by the
// kubernetes backend's pod records): two registries over one in-memory shared state, an injectable clock.
import { describe, expect, it } from 'vitest';
import type { CreateSandboxBody } from '../../protocol/sandbox.ts';
import { SandboxRegistry } from '../../sandbox/registry.ts';
import type { AdoptedSandbox, Backend, CloseReason, Sandbox, SharedSandboxes } from '../../sandbox/types.ts';
import { FakeClock, MemorySandbox } from './memory-backend.ts';

interface Rec {
  id: string;
  createdAt: number;
  seen: number;
  creating: boolean;
}

/** One shared table of records; each server has its own view of it (its own adopted sandbox objects). */
class Table {
  readonly recs = new Map<string, Rec>();
  readonly views: View[] = [];
  close(id: string, reason: CloseReason, by: View): void {
    this.recs.delete(id);
    for (const v of this.views) if (v !== by) for (const fn of v.listeners) fn(id, reason);
  }
}

class View implements SharedSandboxes {
  readonly listeners: Array<(id: string, reason: CloseReason) => void> = [];
  readonly adopted: MemorySandbox[] = [];
  others = true;
  refreshed: string[] = [];
  constructor(readonly table: Table) {
    table.views.push(this);
  }
  adopt(id: string): AdoptedSandbox | null {
    const r = this.table.recs.get(id);
    if (!r) return null;
    const sb = new MemorySandbox(id);
    if (!r.creating) sb.becomeReady();
    this.adopted.push(sb);
    return { sandbox: sb, type: 'shell', labels: { from: 'shared' }, createdAt: r.createdAt, lastUsedAt: r.seen, ttlMs: 3_600_000, idleMs: 60_000, creating: r.creating };
  }
  ids(): string[] {
    return [...this.table.recs.keys()];
  }
  async refresh(id: string): Promise<void> {
    this.refreshed.push(id);
    // The contract (types.ts): an adopted sandbox its replica recorded ready has settled ready() on return.
    const r = this.table.recs.get(id);
    if (r && !r.creating) for (const sb of this.adopted) if (sb.id === id && sb.status === 'creating') sb.becomeReady();
  }
  async appear(id: string): Promise<boolean> {
    return this.table.recs.has(id);
  }
  heartbeat(id: string, at: number): void {
    const r = this.table.recs.get(id);
    if (r) r.seen = Math.max(r.seen, at);
  }
  lastUsed(id: string): number | undefined {
    return this.table.recs.get(id)?.seen;
  }
  closing(id: string, reason: CloseReason): void {
    if (this.table.recs.has(id)) this.table.close(id, reason, this);
  }
  onClosed(fn: (id: string, reason: CloseReason) => void): void {
    this.listeners.push(fn);
  }
  async handOver(): Promise<boolean> {
    return this.others;
  }
}

class SharedBackend implements Backend {
  readonly name = 'shared-memory';
  readonly made: MemorySandbox[] = [];
  constructor(
    readonly shared: View,
    private readonly clock: FakeClock,
  ) {}
  supports(type: CreateSandboxBody['type']): boolean {
    return type === 'shell';
  }
  async create(id: string): Promise<Sandbox> {
    const sb = new MemorySandbox(id);
    this.made.push(sb);
    this.shared.table.recs.set(id, { id, createdAt: this.clock.now(), seen: this.clock.now(), creating: false });
    sb.becomeReady();
    return sb;
  }
  async shutdown(): Promise<void> {}
  stats(): Record<string, number> {
    return {};
  }
}

function twoServers() {
  const table = new Table();
  const clock = new FakeClock();
  const make = () => {
    const backend = new SharedBackend(new View(table), clock);
    const registry = new SandboxRegistry({ backend, clock, maxSandboxes: 10, defaultTtlSeconds: 3600, idleTimeoutSeconds: 60, reaperIntervalMs: 1000 });
    return { backend, registry };
  };
  return { table, clock, a: make(), b: make() };
}

const shell: CreateSandboxBody = { type: 'shell', block_network: true, labels: {} };

describe('SandboxRegistry with shared state', () => {
  it('serves a sandbox another server created: adopted by sync(), listed after syncAll(), deleted for both', async () => {
    const { a, b, table } = twoServers();
    const { sandbox_id: id } = a.registry.create(shell);
    await a.registry.wait(id, 1000);
    // Lookups and listing are reads: nothing is adopted until asked to.
    expect(() => b.registry.use(id)).toThrow(/No sandbox/);
    expect(b.registry.list()).toEqual([]);
    expect(b.backend.shared.adopted).toEqual([]);
    b.registry.syncAll();
    expect(b.registry.list().map((s) => s.sandbox_id)).toEqual([id]);
    expect(b.backend.shared.adopted).toHaveLength(1);
    await b.registry.sync(id);
    expect(b.backend.shared.adopted).toHaveLength(1);
    expect(b.registry.use(id)).toBe(b.backend.shared.adopted[0]);
    expect(b.registry.info(id)).toMatchObject({ status: 'ready', labels: { from: 'shared' } });
    expect(b.registry.list().map((s) => s.sandbox_id)).toEqual([id]);
    expect(await b.registry.delete(id)).toBe(true);
    expect(table.recs.has(id)).toBe(false);
    // A was told and closed its own copy, with B's reason.
    await a.registry.wait(id, 0);
    expect(a.backend.made[0]!.closeCalls).toBe(1);
    expect(() => a.registry.use(id)).toThrow(/closed \(deleted\)/);
    expect(() => b.registry.use('sb_unknown')).toThrow(/No sandbox/);
  });

  it('a heartbeat on one server moves the expiry the other reports; registries leave expiry to the shared state', async () => {
    const { a, b, clock } = twoServers();
    const { sandbox_id: id } = a.registry.create(shell);
    await a.registry.wait(id, 1000);
    const before = Date.parse(a.registry.info(id).expires_at!);
    clock.advance(50_000);
    await b.registry.sync(id);
    b.registry.heartbeat(id);
    expect(Date.parse(a.registry.info(id).expires_at!)).toBe(before + 50_000);
    // Past A's own idle deadline: A's reaper does not close it (the shared state's leader decides).
    clock.advance(70_000);
    expect(await a.registry.reap()).toEqual([]);
    expect(a.registry.info(id).status).toBe('ready');
  });

  it('sync() catches up only for ids it does not hold; wait() waits for a record another server accepted', async () => {
    const { a, b, table, clock } = twoServers();
    const { sandbox_id: id } = a.registry.create(shell);
    await a.registry.wait(id, 1000);
    await a.registry.sync(id);
    expect(a.backend.shared.refreshed).toEqual([]);
    await b.registry.sync(id);
    expect(b.backend.shared.refreshed).toEqual([id]);
    await b.registry.sync(id);
    expect(b.backend.shared.refreshed).toEqual([id]);
    table.recs.set('sb_late', { id: 'sb_late', createdAt: clock.now(), seen: clock.now(), creating: false });
    expect((await b.registry.wait('sb_late', 1000)).status).toBe('ready');
  });

  it('sync() of a sandbox adopted while creating elsewhere answers ready once its replica recorded it ready', async () => {
    const { b, table, clock } = twoServers();
    table.recs.set('sb_slow', { id: 'sb_slow', createdAt: clock.now(), seen: clock.now(), creating: true });
    await b.registry.sync('sb_slow');
    expect(b.registry.info('sb_slow').status).toBe('creating');
    expect(() => b.registry.use('sb_slow')).toThrow(/not ready/i);
    table.recs.get('sb_slow')!.creating = false;
    // No timer, no turn of the event loop: the entry is ready when sync() returns.
    await b.registry.sync('sb_slow');
    expect(b.registry.info('sb_slow').status).toBe('ready');
    expect(b.registry.use('sb_slow')).toBe(b.backend.shared.adopted[0]);
  });

  it('shutdown hands live sandboxes over while others are alive; the last server closes them all', async () => {
    const { a, b, table } = twoServers();
    const one = a.registry.create(shell).sandbox_id;
    const two = a.registry.create(shell).sandbox_id;
    await a.registry.wait(two, 1000);
    await a.registry.shutdown();
    expect(a.backend.made.map((s) => s.closeCalls)).toEqual([0, 0]);
    expect([...table.recs.keys()].sort()).toEqual([one, two].sort());
    b.backend.shared.others = false;
    await b.registry.shutdown();
    // B never touched them, yet closes them: nobody is left to expire them.
    expect(b.backend.shared.adopted.map((s) => s.closeCalls)).toEqual([1, 1]);
    expect(table.recs.size).toBe(0);
  });
});
