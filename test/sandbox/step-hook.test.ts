// The step-hook contract (sandbox/step-hook.ts) and the registry running it: at ready (a failure fails the
// creation), after each reported step (failures reported, never thrown), at close (once, then forgotten).
import { describe, expect, it } from 'vitest';
import type { Observation } from '../../protocol/observation.ts';
import { SandboxRegistry } from '../../sandbox/registry.ts';
import { StepHooks, type StepContext, type StepHook } from '../../sandbox/step-hook.ts';
import { MemoryBackend } from './memory-backend.ts';

const obs: Observation = { step: 1, url: 'http://a/', title: 't', tabs: [], viewport: { width: 1, height: 1 }, last_action_error: null, events: [], timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 } };
const ctx = (sandboxId: string, n: number): StepContext => ({ sandboxId, actions: [], observation: { ...obs, step: n } });

function tracer(log: string[], name: string, failOn?: string): StepHook {
  return {
    onReady: async () => {
      log.push(`${name}:ready`);
      if (failOn === 'ready') throw new Error(`${name} ready failed`);
    },
    onStep: async (c) => {
      // Recorded synchronously: the order of calls is the order of steps even when nobody waits.
      log.push(`${name}:step${c.observation.step}`);
      await new Promise((r) => setTimeout(r, 5 - c.observation.step));
      if (failOn === 'step') throw new Error(`${name} step failed`);
    },
    onEnd: async (end) => {
      log.push(`${name}:end:${end?.termination.reason ?? '-'}`);
    },
  };
}

describe('StepHooks', () => {
  it('calls every hook of the sandbox in step order, reports failures without throwing, ends once', async () => {
    const hooks = new StepHooks();
    const log: string[] = [];
    hooks.attach('a', tracer(log, 'h1'));
    hooks.attach('a', tracer(log, 'h2', 'step'));
    hooks.attach('b', tracer(log, 'other'));
    const runs = [hooks.afterStep(ctx('a', 1)), hooks.afterStep(ctx('a', 2))];
    expect(log).toEqual(['h1:step1', 'h2:step1', 'h1:step2', 'h2:step2']);
    const failures = await Promise.all(runs);
    expect(failures.map((f) => f.map((e) => (e as Error).message))).toEqual([['h2 step failed'], ['h2 step failed']]);
    expect(await hooks.afterStep(ctx('nobody', 1))).toEqual([]);
    await hooks.end('a', { termination: { reason: 'task_completed' } });
    expect(hooks.has('a')).toBe(false);
    await hooks.end('a');
    expect(log.filter((l) => l.includes(':end'))).toEqual(['h1:end:task_completed', 'h2:end:task_completed']);
    expect(hooks.has('b')).toBe(true);
  });
});

describe('the registry runs the hooks', () => {
  it('at ready, after each reported step and at close', async () => {
    const registry = new SandboxRegistry({ backend: new MemoryBackend(), maxSandboxes: 4, defaultTtlSeconds: 60, idleTimeoutSeconds: 60, reaperIntervalMs: 60_000 });
    const log: string[] = [];
    const created = registry.create({ type: 'shell' } as never);
    registry.hooks.attach(created.sandbox_id, tracer(log, 'rec'));
    expect((await registry.wait(created.sandbox_id, 5000)).status).toBe('ready');
    await registry.stepped(ctx(created.sandbox_id, 1));
    await registry.delete(created.sandbox_id);
    expect(log).toEqual(['rec:ready', 'rec:step1', 'rec:end:-']);
    expect(registry.hooks.has(created.sandbox_id)).toBe(false);
    await registry.shutdown();
  });

  it('a hook failing at ready fails the creation, and its episode still ends', async () => {
    const registry = new SandboxRegistry({ backend: new MemoryBackend(), maxSandboxes: 4, defaultTtlSeconds: 60, idleTimeoutSeconds: 60, reaperIntervalMs: 60_000 });
    const log: string[] = [];
    const created = registry.create({ type: 'shell' } as never);
    registry.hooks.attach(created.sandbox_id, tracer(log, 'rec', 'ready'));
    const info = await registry.wait(created.sandbox_id, 5000);
    expect(info.status).toBe('error');
    expect(info.error?.message).toMatch(/rec ready failed/);
    expect(log).toEqual(['rec:ready', 'rec:end:-']);
    await registry.shutdown();
  });
});
