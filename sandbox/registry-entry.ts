// One sandbox as the registry keeps it (registry.ts), and the public info derived from it.
import { randomBytes } from 'node:crypto';
import type { SandboxInfo, SandboxStatus } from '../protocol/sandbox.ts';
import type { Sandbox } from './types.ts';

export type CloseReason = 'deleted' | 'expired_ttl' | 'expired_idle' | 'shutdown';

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
}

export function newSandboxId(): string {
  return 'sb_' + randomBytes(8).toString('hex');
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
