// A new registry entry and its creation in the background: backend create → ready → the ready hooks → `live`,
// or `error` (the entry stays so clients can read the cause; the sandbox's resources are released).
import { GroveError } from '../protocol/errors.ts';
import type { CreateSandboxBody } from '../protocol/sandbox.ts';
import type { Admission } from './admission.ts';
import type { Logger } from './log.ts';
import type { Entry } from './registry-entry.ts';
import type { RegistryEvent } from './registry-events.ts';
import type { StepHooks } from './step-hook.ts';
import type { Backend, Clock, Sandbox } from './types.ts';

export interface CreationContext {
  backend: Backend;
  hooks: StepHooks;
  clock: Clock;
  log: Logger;
  emit: (e: RegistryEvent) => void;
  /** Browser sandboxes start a few at a time (admission.ts): later ones wait here, still `creating`. */
  admission?: Admission;
  /** The sandboxes the registry holds (creating ones included): admission counts them against capture capacity. */
  live?: () => number;
}

/** A `creating` entry for a spec; TTL and idle timeout default to the registry's. */
export function newEntry(id: string, spec: CreateSandboxBody, now: number, defaults: { ttlSeconds: number; idleTimeoutSeconds: number }): Entry {
  return {
    id,
    type: spec.type,
    labels: spec.labels ?? {},
    createdAt: now,
    lastUsedAt: now,
    ttlMs: (spec.ttl_seconds ?? defaults.ttlSeconds) * 1000,
    idleMs: (spec.idle_timeout_seconds ?? defaults.idleTimeoutSeconds) * 1000,
    phase: 'creating',
    sandbox: null,
    error: null,
    settled: Promise.resolve(),
    backendDone: Promise.resolve(),
    closing: null,
    closeReason: null,
  };
}

/** Starts creating the entry's sandbox; sets `entry.backendDone` and `entry.settled` (which never rejects). */
export function startCreation(ctx: CreationContext, entry: Entry, spec: CreateSandboxBody): void {
  let markBackendDone!: () => void;
  entry.backendDone = new Promise<void>((resolve) => (markBackendDone = resolve));
  entry.settled = runCreation(ctx, entry, spec, markBackendDone);
}

async function runCreation(ctx: CreationContext, entry: Entry, spec: CreateSandboxBody, markBackendDone: () => void): Promise<void> {
  const started = ctx.clock.now();
  let release: (() => void) | undefined;
  try {
    let sb: Sandbox;
    try {
      if (ctx.admission && spec.type === 'browser') release = await ctx.admission.startSlot(undefined, ctx.live);
      // Deleted while it waited for a start slot: nothing was started.
      if (entry.phase !== 'creating') return;
      sb = await ctx.backend.create(entry.id, spec);
      entry.sandbox = sb;
    } finally {
      markBackendDone();
    }
    // Deleted while the backend was still creating: the registry's close waits for us and closes it.
    if (entry.phase !== 'creating') return;
    await sb.ready();
    if (entry.phase !== 'creating') return;
    // Hooks that must see the sandbox before its first step (a recording's frame 0); a failure fails the creation.
    await ctx.hooks.ready(entry.id, sb);
    if (entry.phase !== 'creating') return;
    entry.phase = 'live';
    entry.lastUsedAt = ctx.clock.now();
    ctx.emit({ type: 'ready', id: entry.id, sandboxType: entry.type, ms: ctx.clock.now() - started });
  } catch (err) {
    // The slot goes to the next start at once; the failed sandbox is closed below.
    release?.();
    if (entry.phase !== 'creating') return;
    const code = err instanceof GroveError ? err.code : 'internal_error';
    const message = err instanceof Error ? err.message : String(err);
    ctx.log.warn({ err, sandbox_id: entry.id }, 'sandbox creation failed');
    entry.phase = 'error';
    entry.error = { code, message };
    ctx.emit({ type: 'failed', id: entry.id, sandboxType: entry.type, code });
    // A failed sandbox keeps its entry (so clients can read the error) but not its resources.
    const sb = entry.sandbox as Sandbox | null;
    if (sb) await sb.close().catch((e: unknown) => ctx.log.warn({ err: e, sandbox_id: entry.id }, 'closing failed sandbox'));
    await ctx.hooks.end(entry.id);
  } finally {
    release?.();
  }
}
