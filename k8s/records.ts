// Sandbox records: what any orchestrator replica needs to serve a sandbox, kept on the worker pod that runs it, one
// annotation per sandbox (`sandbox.grove.dev/<id>` → JSON). With the pod's IP (its status), port (its spec) and the
// worker token (derived from the pod name, token.ts), a record is enough to reach the sandbox on the worker: no
// replica keeps state another one needs, and no database holds it. Secrets are never written here (the create spec,
// which may carry shell `env` values, stays on the creating replica and the worker).
// Writes are resourceVersion-guarded patches (pod-writer.ts), so a shared worker never takes more than maxPerWorker.
import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import type { CloseReason } from '../sandbox/types.ts';

export const RECORD_PREFIX = 'sandbox.grove.dev/';

const CLOSE_REASONS = ['deleted', 'expired_ttl', 'expired_idle', 'shutdown'] as const satisfies readonly CloseReason[];

const Iso = z.string().refine((s) => Number.isFinite(Date.parse(s)), 'an ISO time');

export const SandboxRecordSchema = z.object({
  v: z.literal(1),
  id: z.string().min(1),
  type: z.enum(['browser', 'shell', 'claw']),
  template: z.string().min(1),
  /** The replica that created the sandbox (a `creating` record of a replica that is gone is dropped). */
  owner: z.string().min(1),
  state: z.enum(['creating', 'ready', 'closed']),
  /** The worker's own id of the sandbox (known once the worker created it). */
  worker: z.string().min(1).nullable(),
  created: Iso,
  /** Hard TTL and idle timeout, seconds. */
  ttl: z.number().int().positive(),
  idle: z.number().int().positive(),
  /** Last heartbeat/activity any replica recorded. */
  seen: Iso,
  labels: z.record(z.string(), z.string()),
  /** Recorded (`record: true`): a replica serving its steps appends them to its episode on the shared recordings
   * volume (server/recording.ts), so one recording holds every step whichever replica served it. */
  recorded: z.literal(true).optional(),
  /** With `record_har`: the worker records the HAR; whichever replica deletes the sandbox fetches it into the episode. */
  har: z.literal(true).optional(),
  /** A shell sandbox's own image: its pod runs it (never a warm pod of the template). */
  image: z.string().min(1).max(256).optional(),
  /** A shell paired with a claw sandbox: served by its own worker in an ephemeral container of the claw sandbox's
   * pod (k8s/paired-shell.ts), at this port, with the token derived from `pod/container`. */
  paired: z.object({ container: z.string().min(1).max(63), port: z.number().int().min(1).max(65535) }).optional(),
  /** A shell sandbox that runs the sandbox tools of this Claw-Eval episode (k8s/claw-eval-tools.ts): no sandbox of the
   * API (never listed, adopted or served by id), closed with its episode. */
  of: z.string().min(1).max(200).optional(),
  /** Closed records (tombstones, pruned after a while): why and when. */
  reason: z.enum(CLOSE_REASONS).optional(),
  closed: Iso.optional(),
});
export type SandboxRecord = z.infer<typeof SandboxRecordSchema>;

/** Record JSON beyond which the labels are left out (a pod's annotations may hold 256 KiB in all). */
const MAX_RECORD_BYTES = 4096;
const SAFE_NAME = /^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/;

/** Annotation/label-safe name of a sandbox id: the id itself when it is one, else `x-` + a hash of it. */
export function safeName(id: string): string {
  return SAFE_NAME.test(id) ? id : 'x-' + createHash('sha256').update(id).digest('hex').slice(0, 40);
}

export function recordKey(id: string): string {
  return RECORD_PREFIX + safeName(id);
}

/** The annotation value: only the schema's fields (parsing drops anything else a caller's object carries). */
export function encodeRecord(rec: SandboxRecord): string {
  const clean = SandboxRecordSchema.parse(rec);
  const json = JSON.stringify(clean);
  return json.length <= MAX_RECORD_BYTES ? json : JSON.stringify({ ...clean, labels: {} });
}

/** The record in an annotation value; null when it is not one (foreign or corrupt annotations are ignored). */
export function decodeRecord(value: string | undefined): SandboxRecord | null {
  if (value === undefined) return null;
  try {
    const r = SandboxRecordSchema.safeParse(JSON.parse(value));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Every record on a pod, by sandbox id. */
export function podRecords(pod: V1Pod | undefined): Map<string, SandboxRecord> {
  const out = new Map<string, SandboxRecord>();
  for (const [k, v] of Object.entries(pod?.metadata?.annotations ?? {})) {
    if (!k.startsWith(RECORD_PREFIX)) continue;
    const r = decodeRecord(v);
    if (r && recordKey(r.id) === k) out.set(r.id, r);
  }
  return out;
}

export function isLive(r: SandboxRecord): boolean {
  return r.state !== 'closed';
}

/** Sandboxes a worker hosts (or is starting): its load. */
export function liveCount(pod: V1Pod | undefined): number {
  let n = 0;
  for (const r of podRecords(pod).values()) if (isLive(r)) n++;
  return n;
}

/** When the sandbox expires by its record: the TTL, or the idle timeout after the last recorded use. */
export function recordDeadline(r: SandboxRecord): { at: number; reason: 'expired_ttl' | 'expired_idle' } {
  const ttl = Date.parse(r.created) + r.ttl * 1000;
  const idle = Date.parse(r.seen) + r.idle * 1000;
  return ttl <= idle ? { at: ttl, reason: 'expired_ttl' } : { at: idle, reason: 'expired_idle' };
}

/** The tombstone a closed sandbox leaves (small: no labels, the worker id kept for a late delete). */
export function closedRecord(r: SandboxRecord, reason: CloseReason, now: number): SandboxRecord {
  return { ...r, state: 'closed', labels: {}, reason, closed: new Date(now).toISOString() };
}

/** How long tombstones stay (so other replicas answer 410 with the reason, not 404). */
export const TOMBSTONE_MS = 5 * 60_000;

/** Annotation removals for tombstones older than TOMBSTONE_MS (added to a write that touches the pod anyway). */
export function pruneTombstones(pod: V1Pod | undefined, now: number, keep?: string): Record<string, null> {
  const out: Record<string, null> = {};
  for (const r of podRecords(pod).values()) {
    if (r.state === 'closed' && r.id !== keep && now - Date.parse(r.closed ?? r.seen) > TOMBSTONE_MS) out[recordKey(r.id)] = null;
  }
  return out;
}
