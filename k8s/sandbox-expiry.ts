// The leader's pass over the sandbox records (records.ts): a sandbox past its TTL, or idle past its timeout, is
// closed wherever it was created and whoever holds it — its record becomes a tombstone with the reason (every replica
// holding it closes it too, shared.ts), then its worker pod is deleted when nothing else runs there, or the sandbox
// is deleted on the worker. A record still `creating` for a replica that is gone is closed the same way.
// Steps are not written to records (no API call per step): before closing an idle sandbox the leader asks its
// worker when it was last used, and only records that use (one write) when it is more recent.
import type { V1Pod } from '@kubernetes/client-node';
import { GroveClient } from '../client/index.ts';
import type { Logger } from '../sandbox/log.ts';
import type { CloseReason, Clock } from '../sandbox/types.ts';
import type { K8sConfig } from './config.ts';
import { KubeError, type KubeApi } from './kube.ts';
import type { PodCache } from './pod-cache.ts';
import { updatePod } from './pod-writer.ts';
import { closedRecord, encodeRecord, isLive, liveCount, podRecords, pruneTombstones, recordDeadline, recordKey, type SandboxRecord } from './records.ts';
import { fetchRecordedHar } from './remote-files.ts';
import type { Placement } from './remote-placement.ts';
import { placementOf } from './shared.ts';
import { endPairedShell } from './paired-shell.ts';

export interface ExpiryDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  clock: Clock;
  log: Logger;
  tokenSecret: string;
  /** Where a `record_har` sandbox's HAR goes (the shared recordings volume), fetched before its worker goes. */
  harPath?(id: string): string | undefined;
}

/** Closes every expired record; resolves with how many were closed. `live`: replicas whose owner Lease is current
 * or lapsed only recently (a `creating` record of any other replica is closed). */
export async function expireRecords(d: ExpiryDeps, live: Set<string>): Promise<number> {
  const now = d.clock.now();
  const jobs: Array<Promise<boolean>> = [];
  // A Claw-Eval episode's tools shell (`of`, k8s/claw-eval-tools.ts) goes when its episode has no live record left.
  const episodes = new Set<string>();
  for (const pod of d.cache.all()) for (const r of podRecords(pod).values()) if (isLive(r)) episodes.add(r.id);
  const alive = { replicas: live, episodes };
  for (const pod of d.cache.all()) {
    if (pod.metadata?.deletionTimestamp) continue;
    for (const r of podRecords(pod).values()) {
      const reason = dueReason(r, now, alive);
      if (reason) jobs.push(expireOne(d, pod, r, reason, alive).catch((err: unknown) => (d.log.warn({ err: String(err), sandbox_id: r.id }, 'expiring a sandbox failed'), false)));
    }
  }
  return (await Promise.all(jobs)).filter(Boolean).length;
}

interface Alive {
  replicas: Set<string>;
  episodes: Set<string>;
}

function dueReason(r: SandboxRecord, now: number, live: Alive): CloseReason | null {
  if (!isLive(r)) return null;
  if (r.state === 'creating') return live.replicas.has(r.owner) ? null : 'shutdown';
  if (r.of !== undefined && !live.episodes.has(r.of)) return 'deleted';
  const due = recordDeadline(r);
  return due.at <= now ? due.reason : null;
}

async function expireOne(d: ExpiryDeps, pod: V1Pod, r: SandboxRecord, reason: CloseReason, live: Alive): Promise<boolean> {
  const name = pod.metadata!.name!;
  const placement = placementOf(pod, d.cfg, d.tokenSecret, r);
  const worker = placement && r.worker ? new GroveClient({ baseUrl: placement.url, apiKey: placement.token, timeoutMs: d.cfg.leaseDurationSeconds * 1000 }) : null;
  try {
    if (reason === 'expired_idle' && worker) {
      const used = await worker.getSandbox(r.worker!).then((i) => Date.parse(i.last_used_at), () => null);
      if (used !== null && used + r.idle * 1000 > d.clock.now()) {
        await updatePod(d.api, d.cache, name, (p) => {
          const cur = podRecords(p).get(r.id);
          if (!cur || !isLive(cur) || Date.parse(cur.seen) >= used) return null;
          return { annotations: { [recordKey(r.id)]: encodeRecord({ ...cur, seen: new Date(used).toISOString() }) } };
        });
        return false;
      }
    }
    let closed = false;
    const now = d.clock.now();
    const after = await updatePod(d.api, d.cache, name, (p) => {
      const cur = podRecords(p).get(r.id);
      // Re-checked on the pod as written: a heartbeat may have landed since.
      if (!cur || dueReason(cur, now, live) !== reason) return null;
      closed = true;
      return { annotations: { ...pruneTombstones(p, now, r.id), [recordKey(r.id)]: encodeRecord(closedRecord(cur, reason, now)) } };
    });
    if (!closed || !after) return false;
    d.log.info({ sandbox_id: r.id, pod: name, reason }, 'sandbox expired');
    // A `record_har` sandbox's HAR is written by the worker's browser when it closes there: close it on the worker
    // first (also when its pod goes next), then fetch the HAR.
    const har = r.har ? d.harPath?.(r.id) : undefined;
    if (worker && (har || liveCount(after) > 0)) await worker.deleteSandbox(r.worker!).catch(() => undefined);
    // A paired shell's worker (an ephemeral container of the claw pod, which stays) is ended as its sandbox closes.
    if (r.paired && placement) await endPairedShell(placement, d.cfg.leaseDurationSeconds * 1000);
    if (har && worker && placement) await fetchHarOfClosed(d, placement, r, har);
    if (liveCount(after) === 0) {
      await d.api.deletePod(name, true, after.metadata!.resourceVersion).catch((err: unknown) => {
        if (!(err instanceof KubeError && err.status === 409)) throw err;
      });
    }
    return true;
  } finally {
    worker?.close();
  }
}

/**
 * A `record_har` sandbox closed by expiry (and on its worker): its HAR is fetched into the episode directory before
 * the pod goes, as a replica deleting it does (remote-sandbox.ts close). A replica holding it closes it too when it
 * sees the tombstone: whichever deletes first, both fetch (the worker serves the HAR until one fetch took it; the
 * bytes are the same).
 */
async function fetchHarOfClosed(d: ExpiryDeps, placement: Placement, r: SandboxRecord, to: string): Promise<void> {
  await fetchRecordedHar(placement, r.worker!, to).then(
    () => d.log.info({ sandbox_id: r.id, har: to }, 'the HAR of an expired sandbox was fetched from its worker'),
    (err: unknown) => d.log.warn({ err: String(err), sandbox_id: r.id }, 'fetching the HAR of an expired sandbox failed'),
  );
}
