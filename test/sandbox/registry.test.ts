// Registry lifecycle with an injectable clock and a plain in-memory Sandbox (a registry test, not a browser).
import { describe, expect, it } from 'vitest';
import { GroveError } from '../../protocol/errors.ts';
import type { CreateSandboxBody } from '../../protocol/sandbox.ts';
import { SandboxRegistry } from '../../sandbox/registry.ts';
import { FakeClock, MemoryBackend } from './memory-backend.ts';

const shell = (extra: Partial<Extract<CreateSandboxBody, { type: 'shell' }>> = {}): CreateSandboxBody => ({
  type: 'shell',
  block_network: true,
  labels: {},
  ...extra,
});

function setup(over: Partial<ConstructorParameters<typeof SandboxRegistry>[0]> = {}) {
  const backend = new MemoryBackend();
  const clock = new FakeClock();
  const registry = new SandboxRegistry({
    backend,
    clock,
    maxSandboxes: 3,
    defaultTtlSeconds: 3600,
    idleTimeoutSeconds: 60,
    reaperIntervalMs: 1000,
    ...over,
  });
  return { backend, clock, registry };
}

describe('SandboxRegistry', () => {
  it('creates in the background and wait() resolves when ready', async () => {
    const { backend, registry } = setup();
    backend.autoReady = false;
    const info = registry.create(shell({ labels: { run: 'r1' } }));
    expect(info.sandbox_id).toMatch(/^sb_[0-9a-f]{16}$/);
    expect(info.status).toBe('creating');
    expect(info.labels).toEqual({ run: 'r1' });
    // Still creating: wait() gives up after its timeout with the current status.
    expect((await registry.wait(info.sandbox_id, 10)).status).toBe('creating');
    const waiting = registry.wait(info.sandbox_id, 5000);
    await Promise.resolve();
    backend.made[0].becomeReady();
    expect((await waiting).status).toBe('ready');
    expect(registry.list().map((s) => s.sandbox_id)).toEqual([info.sandbox_id]);
  });

  it('reports a failed creation as status error with its code, and frees the slot', async () => {
    const { backend, registry } = setup({ maxSandboxes: 1 });
    backend.autoReady = false;
    const info = registry.create(shell());
    backend.made[0].fail(new GroveError('start_url_failed', 'could not open http://x/'));
    const done = await registry.wait(info.sandbox_id, 1000);
    expect(done.status).toBe('error');
    expect(done.error).toEqual({ code: 'start_url_failed', message: 'could not open http://x/' });
    expect(backend.made[0].closeCalls).toBe(1);
    expect(() => registry.use(info.sandbox_id)).toThrow(/failed to start \(start_url_failed/);
    // A failed sandbox does not hold capacity.
    expect(() => registry.create(shell())).not.toThrow();
  });

  it('expires a sandbox at its TTL even with heartbeats', async () => {
    const { backend, clock, registry } = setup({ idleTimeoutSeconds: 60 });
    const { sandbox_id } = registry.create(shell({ ttl_seconds: 100 }));
    await registry.wait(sandbox_id, 1000);
    for (let i = 0; i < 3; i++) {
      clock.advance(30_000);
      registry.heartbeat(sandbox_id);
      expect(await registry.reap()).toEqual([]);
    }
    clock.advance(10_000); // 100 s since creation
    expect(await registry.reap()).toEqual([sandbox_id]);
    expect(backend.made[0].closeCalls).toBe(1);
    expect(registry.info(sandbox_id).status).toBe('closed');
    expect(() => registry.use(sandbox_id)).toThrow(/closed \(expired_ttl\)/);
  });

  it('heartbeat extends the idle deadline; without it the sandbox expires', async () => {
    const { clock, registry } = setup({ idleTimeoutSeconds: 60 });
    const a = registry.create(shell()).sandbox_id;
    const b = registry.create(shell()).sandbox_id;
    await registry.wait(a, 1000);
    await registry.wait(b, 1000);
    const before = registry.info(a).expires_at;
    clock.advance(50_000);
    const after = registry.heartbeat(a).expires_at;
    expect(Date.parse(after!) - Date.parse(before!)).toBe(50_000);
    clock.advance(20_000); // b idle 70 s, a idle 20 s
    expect(await registry.reap()).toEqual([b]);
    expect(registry.info(a).status).toBe('ready');
  });

  it('the reaper timer closes expired sandboxes by itself', async () => {
    const { backend, clock, registry } = setup({ idleTimeoutSeconds: 1, reaperIntervalMs: 20 });
    const closed = new Promise<string>((resolve) =>
      registry.onEvent((e) => {
        if (e.type === 'closed') resolve(`${e.id}:${e.reason}`);
      }),
    );
    const { sandbox_id } = registry.create(shell());
    await registry.wait(sandbox_id, 1000);
    clock.advance(5000);
    registry.start();
    expect(await closed).toBe(`${sandbox_id}:expired_idle`);
    expect(backend.made[0].closeCalls).toBe(1);
    await registry.shutdown();
  });

  it('refuses over capacity with capacity_exhausted and a Retry-After hint', async () => {
    const { clock, registry } = setup({ maxSandboxes: 2, idleTimeoutSeconds: 60 });
    registry.create(shell());
    clock.advance(15_000);
    registry.create(shell());
    let err: unknown;
    try {
      registry.create(shell());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GroveError);
    expect((err as GroveError).code).toBe('capacity_exhausted');
    expect((err as GroveError).status).toBe(503);
    // The first sandbox goes idle 45 s from now.
    expect((err as GroveError).retryAfter).toBe(45);
  });

  it('delete is idempotent and unknown ids are not found', async () => {
    const { backend, registry } = setup();
    const { sandbox_id } = registry.create(shell());
    await registry.wait(sandbox_id, 1000);
    expect(await registry.delete(sandbox_id)).toBe(true);
    expect(await registry.delete(sandbox_id)).toBe(false);
    await Promise.all([registry.delete(sandbox_id), registry.delete(sandbox_id)]);
    expect(backend.made[0].closeCalls).toBe(1);
    await expect(registry.delete('sb_0000000000000000')).rejects.toMatchObject({ code: 'sandbox_not_found', status: 404 });
    expect(() => registry.info('sb_nope')).toThrow(GroveError);
  });

  it('a sandbox deleted while still creating is closed once the backend returns it', async () => {
    const { backend, registry } = setup();
    backend.autoReady = false;
    const { sandbox_id } = registry.create(shell());
    await Promise.resolve();
    await registry.delete(sandbox_id);
    expect(backend.made[0].closeCalls).toBe(1);
    expect(registry.info(sandbox_id).status).toBe('closed');
    expect(registry.liveCount()).toBe(0);
  });

  it('rejects unsupported types', () => {
    const { registry } = setup();
    expect(() => registry.create({ type: 'browser' } as CreateSandboxBody)).toThrow(
      expect.objectContaining({ code: 'unsupported_sandbox_type' }),
    );
  });

  it('shutdown closes every sandbox and refuses new ones', async () => {
    const { backend, registry } = setup();
    backend.autoReady = false;
    const ids = [registry.create(shell()).sandbox_id, registry.create(shell()).sandbox_id];
    await registry.wait(ids[0], 10);
    backend.made[0].becomeReady();
    await registry.shutdown();
    expect(backend.made.map((s) => s.closeCalls)).toEqual([1, 1]);
    expect(registry.list()).toEqual([]);
    expect(() => registry.create(shell())).toThrow(expect.objectContaining({ code: 'shutting_down' }));
  });

  it('takes a caller-chosen id once, and refuses it while live or remembered (409 sandbox_exists)', async () => {
    const { registry } = setup();
    const info = registry.create(shell(), { id: 'my-box-1' });
    expect(info.sandbox_id).toBe('my-box-1');
    expect(() => registry.create(shell(), { id: 'my-box-1' })).toThrow(expect.objectContaining({ code: 'sandbox_exists', status: 409 }));
    await registry.delete('my-box-1');
    expect(() => registry.create(shell(), { id: 'my-box-1' })).toThrow(expect.objectContaining({ code: 'sandbox_exists' }));
  });
});
