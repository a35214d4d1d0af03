// Leases (coordination.k8s.io/v1): each orchestrator replica renews one that says it is alive (the owner label
// on its pods points at it), and one shared Lease elects the replica that reconciles and refills warm pools.
// Acquiring follows client-go's leader election: take a Lease that is absent or expired, renew one we hold,
// and let the server's resourceVersion check decide races (409 = someone else won).
import type { V1Lease } from '@kubernetes/client-node';
import type { Clock } from '../sandbox/types.ts';
import type { KubeApi } from './kube.ts';
import { baseLabels } from './labels.ts';

export const LEASE_KIND_LABEL = 'grove.dev/lease';

export function ownerLeaseName(replicaId: string): string {
  return `grove-owner-${replicaId}`.slice(0, 253);
}

export function leaseExpired(lease: V1Lease, now: number): boolean {
  const renew = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
  return renew + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 <= now;
}

export class LeaseHolder {
  private current: V1Lease | null = null;

  constructor(
    private readonly api: KubeApi,
    private readonly name: string,
    private readonly identity: string,
    private readonly durationSeconds: number,
    private readonly labels: Record<string, string>,
    private readonly clock: Clock,
  ) {}

  /** True while we hold the Lease (as of our last successful write, within its duration). */
  held(): boolean {
    return this.current !== null && this.current.spec?.holderIdentity === this.identity && !leaseExpired(this.current, this.clock.now());
  }

  /** One acquire-or-renew attempt; returns whether we hold the Lease afterwards. */
  async tryAcquire(): Promise<boolean> {
    const now = new Date(this.clock.now());
    const existing = await this.api.getLease(this.name);
    if (!existing) {
      this.current = await this.api.createLease({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.name, namespace: this.api.namespace, labels: this.labels },
        spec: { holderIdentity: this.identity, leaseDurationSeconds: this.durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
      });
      return this.held();
    }
    const mine = existing.spec?.holderIdentity === this.identity;
    if (!mine && !leaseExpired(existing, now.getTime())) {
      this.current = existing;
      return false;
    }
    const spec = {
      ...existing.spec,
      holderIdentity: this.identity,
      leaseDurationSeconds: this.durationSeconds,
      renewTime: now,
      ...(mine ? {} : { acquireTime: now, leaseTransitions: (existing.spec?.leaseTransitions ?? 0) + 1 }),
    };
    this.current = await this.api.replaceLease({ ...existing, spec });
    return this.held();
  }

  /** Gives the Lease up (on shutdown) so another replica need not wait for it to expire. */
  async release(): Promise<void> {
    if (!this.held()) return;
    this.current = null;
    await this.api.deleteLease(this.name);
  }
}

export function ownerLeaseLabels(instance: string): Record<string, string> {
  return { ...baseLabels(instance, 'orchestrator'), [LEASE_KIND_LABEL]: 'owner' };
}

export function leaderLeaseLabels(instance: string): Record<string, string> {
  return { ...baseLabels(instance, 'orchestrator'), [LEASE_KIND_LABEL]: 'leader' };
}
