// One sandbox as the registry keeps it (registry.ts), and the public info derived from it.
import { randomBytes } from 'node:crypto';
import { GroveError } from '../protocol/errors.ts';
import type { SandboxInfo, SandboxStatus } from '../protocol/sandbox.ts';
import type { AdoptedSandbox, CloseReason, Sandbox } from './types.ts';

export type { CloseReason } from './types.ts';

type Phase = 'creating' | 'live' | 'error' | 'closing' | 'closed';

export interface Entry {
  id: string;
  type: SandboxInfo['type'];
  labels: Record<string, string>;
  createdAt: number;
  lastUsedAt: number;
  ttlMs: number;
  idleMs: number;
  phase: Phase;
  sandbox: Sandbox | null;
  error: { code: string; message: string } | null;
  /** Settles (never rejects) when creation finished, successfully or not. */
  settled: Promise<void>;
  /** Settles when the backend's create() returned or threw (the sandbox object exists or never will). */
  backendDone: Promise<void>;
  closing: Promise<void> | null;
  closeReason: CloseReason | null;
  /** Created by another server sharing state (Backend.shared), adopted here on first use. */
  adopted?: boolean;
}

export function newSandboxId(): string {
  return 'sb_' + randomBytes(8).toString('hex');
}

/** The entry of a sandbox another server created; one still being created there settles when it is ready or failed. */
export function adoptedEntry(id: string, a: AdoptedSandbox): Entry {
  const entry: Entry = {
    id,
    type: a.type,
    labels: a.labels,
    createdAt: a.createdAt,
    lastUsedAt: a.lastUsedAt,
    ttlMs: a.ttlMs,
    idleMs: a.idleMs,
    phase: a.creating ? 'creating' : 'live',
    sandbox: a.sandbox,
    error: null,
    settled: Promise.resolve(),
    backendDone: Promise.resolve(),
    closing: null,
    closeReason: null,
    adopted: true,
  };
  if (a.creating) {
    entry.settled = a.sandbox.ready().then(
      () => void (entry.phase === 'creating' && (entry.phase = 'live')),
      (err: unknown) => {
        if (entry.phase !== 'creating') return;
        entry.phase = 'error';
        entry.error = { code: err instanceof GroveError ? err.code : 'internal_error', message: err instanceof Error ? err.message : String(err) };
      },
    );
  }
  return entry;
}

export function statusOf(e: Entry): SandboxStatus {
  switch (e.phase) {
    case 'creating':
      return 'creating';
    case 'error':
      return 'error';
    case 'closing':
      return 'closing';
    case 'closed':
      return 'closed';
    case 'live':
      return e.sandbox?.status ?? 'error';
  }
}

export function expiresAt(e: Entry): number {
  return Math.min(e.createdAt + e.ttlMs, e.lastUsedAt + e.idleMs);
}

export function toInfo(e: Entry): SandboxInfo {
  const startError = e.sandbox?.startError ?? null;
  return {
    sandbox_id: e.id,
    type: e.type,
    status: statusOf(e),
    created_at: new Date(e.createdAt).toISOString(),
    last_used_at: new Date(e.lastUsedAt).toISOString(),
    expires_at: e.phase === 'closed' ? null : new Date(expiresAt(e)).toISOString(),
    steps: e.sandbox?.steps ?? 0,
    labels: { ...e.labels },
    error: e.error ?? (startError ? { code: startError.code, message: startError.message } : null),
    ...(e.sandbox?.details?.() ?? {}),
  };
}

/** Counts by type and status, for /metrics. */
export function countsOf(entries: Iterable<Entry>): Array<{ type: string; status: SandboxStatus; count: number }> {
  const m = new Map<string, { type: string; status: SandboxStatus; count: number }>();
  for (const e of entries) {
    const status = statusOf(e);
    const k = `${e.type}/${status}`;
    const c = m.get(k) ?? { type: e.type, status, count: 0 };
    c.count++;
    m.set(k, c);
  }
  return [...m.values()];
}
