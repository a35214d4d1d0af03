// Which registry entries are past their TTL or idle deadline (the reaper closes them), and the Retry-After hint
// of a full registry.
import { expiresAt, statusOf, type CloseReason, type Entry } from './registry-entry.ts';

/**
 * The entries to close now, with the reason. With shared state only failed ones: shared sandboxes expire by the
 * shared state (its leader), which knows every server's heartbeats.
 */
export function expiredEntries(entries: Iterable<Entry>, now: number, shared: boolean): Array<{ entry: Entry; reason: CloseReason }> {
  const out: Array<{ entry: Entry; reason: CloseReason }> = [];
  for (const e of entries) {
    if (e.closing || (shared && e.phase !== 'error')) continue;
    let reason: CloseReason | null = null;
    if (e.createdAt + e.ttlMs <= now) reason = 'expired_ttl';
    // A step in progress counts as use: do not pull the sandbox from under it. Idle time counts from ready (a
    // creation slower than the idle timeout, on a loaded host, is not idleness).
    else if (e.lastUsedAt + e.idleMs <= now && statusOf(e) !== 'busy' && e.phase !== 'creating') reason = 'expired_idle';
    if (reason) out.push({ entry: e, reason });
  }
  return out;
}

/** Seconds until the earliest live sandbox expires (a hint for 503 Retry-After), 1..300. */
export function retryAfterSeconds(entries: Iterable<Entry>, now: number): number {
  let earliest = Infinity;
  for (const e of entries) if (!e.closing) earliest = Math.min(earliest, expiresAt(e));
  if (!Number.isFinite(earliest)) return 1;
  return Math.min(300, Math.max(1, Math.ceil((earliest - now) / 1000)));
}
