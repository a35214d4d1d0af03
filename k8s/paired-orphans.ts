// The leader's sweep of orphaned paired shells: an ephemeral container of a claw pod (k8s/paired-shell.ts) running a
// shell worker that no live record names. Pairing writes the record before it adds the container, so such a
// container exists only when a replica died mid-pairing (or its record was closed while its worker was still
// starting, too early to be told to end): its worker is ended (POST /worker/exit with the token derived from
// `pod/container`), and the container stops. It cannot be removed (the API keeps ephemeral containers until the pod
// goes); once stopped it holds nothing but its slot. Containers Grove did not add (an operator's `kubectl debug`) are
// not touched: only those running `grove worker` with the exit route on a port of their own.
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../sandbox/log.ts';
import type { K8sConfig } from './config.ts';
import { endPairedShell } from './paired-shell.ts';
import type { PodCache } from './pod-cache.ts';
import { isLive, podRecords } from './records.ts';
import { placementOf } from './shared.ts';

export interface OrphanShellDeps {
  cfg: K8sConfig;
  cache: PodCache;
  tokenSecret: string;
  log: Logger;
}

/** The running paired-shell containers of a pod that no live record names, with their worker's port. */
export function orphanShells(pod: V1Pod): Array<{ container: string; port: number }> {
  const named = new Set([...podRecords(pod).values()].filter((r) => r.paired && isLive(r)).map((r) => r.paired!.container));
  const out = [];
  for (const s of pod.status?.ephemeralContainerStatuses ?? []) {
    if (!s.state?.running || named.has(s.name)) continue;
    const c = pod.spec?.ephemeralContainers?.find((e) => e.name === s.name);
    const env = new Map((c?.env ?? []).map((e) => [e.name, e.value]));
    const port = Number(env.get('GROVE_PORT'));
    if (c?.args?.[0] !== 'worker' || env.get('GROVE_WORKER_EXIT_ROUTE') !== '1' || !Number.isInteger(port) || port <= 0) continue;
    out.push({ container: s.name, port });
  }
  return out;
}

/** Ends every orphaned paired shell's worker; resolves with how many were asked to end. */
export async function endOrphanShells(d: OrphanShellDeps): Promise<number> {
  const jobs: Array<Promise<void>> = [];
  for (const pod of d.cache.all()) {
    if (pod.metadata?.deletionTimestamp) continue;
    for (const paired of orphanShells(pod)) {
      const at = placementOf(pod, d.cfg, d.tokenSecret, { paired });
      if (!at) continue;
      d.log.warn({ pod: at.pod, container: paired.container }, 'ending an orphaned paired shell (no live record names it)');
      jobs.push(endPairedShell(at, d.cfg.leaseDurationSeconds * 1000));
    }
  }
  await Promise.all(jobs);
  return jobs.length;
}
