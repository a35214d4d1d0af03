// Sandboxes placed beside a claw sandbox, on its pod (the backend's "placed beside" part): a browser paired with it
// joins its pod (its apps are on that pod's loopback), its record written there so every replica serves it and the
// pod is not emptied under it; a paired shell runs its own worker in an ephemeral container of that pod
// (k8s/paired-shell.ts), recorded there too. Neither is its pod's owner: closing one never deletes the pod under the
// claw sandbox.
import type { V1Pod } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { K8sConfig } from './config.ts';
import type { KubeApi } from './kube.ts';
import { addPairedShell, checkPairedShellRoom, endPairedShell, waitPairedShell, type PairedShell } from './paired-shell.ts';
import type { PodCache } from './pod-cache.ts';
import { updatePod } from './pod-writer.ts';
import { encodeRecord, isLive, podRecords, recordKey, type SandboxRecord } from './records.ts';
import type { Placement } from './remote-placement.ts';
import type { RemoteSandbox } from './remote-sandbox.ts';
import { placementOf } from './shared.ts';

export interface ClawPairingDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  tokenSecret: string;
  now(): number;
  /** The sandboxes this replica holds, by id. */
  held: ReadonlyMap<string, RemoteSandbox>;
}

export class ClawPairing {
  /** Browsers paired with a claw sandbox, placed on its pod: never their pod's owner. */
  private readonly guests = new Set<string>();

  constructor(private readonly d: ClawPairingDeps) {}

  /** The claw sandbox a browser or shell pairs with (`claw_sandbox`), if any. */
  static pairedWith(spec: RemoteSandbox['spec']): string | undefined {
    return spec.type === 'browser' || spec.type === 'shell' ? spec.claw_sandbox : undefined;
  }

  /** At admission: a paired shell takes one of its claw pod's few ephemeral containers (400 when none is left). */
  checkRoom(clawId: string): void {
    checkPairedShellRoom(this.d.cache.get(this.liveClawPod(clawId)));
  }

  /** The pod of a live claw sandbox this replica holds (400 otherwise). */
  liveClawPod(clawId: string): string {
    const claw = this.d.held.get(clawId);
    const name = claw?.type === 'claw' ? claw.pod : null;
    if (!claw || !name || claw.status === 'closed') {
      throw new GroveError('invalid_request', `claw_sandbox: Sandbox ${clawId.slice(0, 200)} is not a live claw sandbox of this server.`);
    }
    return name;
  }

  /** A paired shell's worker: an ephemeral container added to the claw pod, recorded in `rec` (before placing). */
  async addShell(rec: SandboxRecord, clawId: string): Promise<PairedShell> {
    return addPairedShell(this.pairing, this.liveClawPod(clawId), rec, clawId);
  }

  /** A paired shell's worker answers (after its pod is ready). */
  waitShell(placement: Placement, shell: PairedShell, deadline: number, signal: AbortSignal): Promise<void> {
    return waitPairedShell(this.pairing, placement, shell, deadline, signal);
  }

  /** A sandbox paired with a claw sandbox joins it on its pod (its record written there, so every replica serves
   * it and the pod is not emptied under it). */
  async placeBeside(rec: SandboxRecord, clawId: string): Promise<string> {
    const name = this.liveClawPod(clawId);
    this.guests.add(rec.id);
    const pod = await updatePod(this.d.api, this.d.cache, name, (p) => {
      const host = podRecords(p).get(clawId);
      return host && isLive(host) ? { annotations: { [recordKey(rec.id)]: encodeRecord(rec) } } : null;
    });
    if (!pod || !podRecords(pod).has(rec.id)) throw new GroveError('invalid_request', `claw_sandbox: Sandbox ${clawId.slice(0, 200)} was closed.`);
    return name;
  }

  /** At release: whether the sandbox was a guest of its pod (the pod stays). A paired shell (its record says so,
   * whichever replica created it) has its worker ended (the ephemeral container stops), unless `elsewhere`. */
  async release(id: string, pod: V1Pod | undefined, elsewhere: boolean, waitMs: number): Promise<boolean> {
    const paired = pod ? podRecords(pod).get(id)?.paired : undefined;
    const guest = this.guests.delete(id) || paired !== undefined;
    if (paired && pod && !elsewhere) {
      const at = placementOf(pod, this.d.cfg, this.d.tokenSecret, { paired });
      if (at) await endPairedShell(at, waitMs);
    }
    return guest;
  }

  private get pairing() {
    return { cfg: this.d.cfg, api: this.d.api, cache: this.d.cache, tokenSecret: this.d.tokenSecret, now: this.d.now };
  }
}
