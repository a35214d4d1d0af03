// This replica's share of the warm pool, so that a claim answers without waiting on the API server. The leader
// keeps `warmPool` warm pods per template (reconciler.ts); each replica reserves up to warmPool / live replicas of
// them ahead of time by a guarded patch that adds its owner label (409: another replica reserved it first). A warm
// pod carrying a replica's owner label is that replica's alone: nobody else claims it, so the replica hands it to a
// sandbox from memory and writes the claim afterwards (claim-writes.ts). The pod's labels stay the source of truth
// for everyone else: a reserved pod is still `warm`, and the leader deletes the reserved pods of a replica whose
// Lease lapsed (it may have died mid-claim, with a sandbox already started on the worker).
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../sandbox/log.ts';
import type { K8sConfig } from './config.ts';
import { KubeError, type KubeApi } from './kube.ts';
import { L } from './labels.ts';
import type { PodCache } from './pod-cache.ts';
import { podCondition } from './pods.ts';

export interface WarmShareDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  replicaId: string;
  log: Logger;
  /** Replicas whose owner Lease is current (this one included), as the reconciler last read them. */
  liveReplicas(): number;
}

/** A warm pod reserved by a replica (its owner label): nobody else may claim it. */
export function reservedBy(pod: V1Pod): string | undefined {
  const l = pod.metadata?.labels ?? {};
  return l[L.state] === 'warm' ? l[L.owner] : undefined;
}

export class WarmShare {
  /** Own reserved pods handed to a sandbox whose claim is not written yet. */
  private readonly taken = new Set<string>();
  private readonly reserving = new Set<string>();
  private unsubscribe: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private poll: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  readonly counters = { reserved: 0, reserveConflicts: 0, localClaims: 0 };

  constructor(private readonly d: WarmShareDeps) {}

  /** Reserves on every pod change (debounced); the pods a previous life of this replica reserved are deleted. */
  async start(): Promise<void> {
    // A replica restarted under the same name may have died mid-claim: its old reservations may host a sandbox.
    const stale = this.d.cache.all().filter((p) => reservedBy(p) === this.d.replicaId && !p.metadata?.deletionTimestamp);
    await Promise.all(stale.map((p) => this.d.api.deletePod(p.metadata!.name!, true).catch(() => false)));
    this.unsubscribe = this.d.cache.subscribe(() => this.schedule());
    // The number of live replicas changes without a pod changing: the share is looked at every second too.
    this.poll = setInterval(() => this.schedule(), 1000);
    this.poll.unref();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.poll) clearInterval(this.poll);
  }

  /** Graceful shutdown: the reservations nobody took go back to the pool (guarded: a pod that changed is left to
   * the leader, which deletes the reservations of a replica that is gone). */
  async giveBack(): Promise<void> {
    const own = Object.keys(this.d.cfg.templates).flatMap((t) => this.mine(t));
    await Promise.all(own.map((p) => this.unreserve(p).catch(() => undefined)));
  }

  /** How many warm pods of the template this replica keeps reserved. */
  share(template: string): number {
    const pool = this.d.cfg.templates[template]?.warmPool ?? 0;
    return pool === 0 ? 0 : Math.ceil(pool / Math.max(1, this.d.liveReplicas()));
  }

  /** Own reserved pods of the template not handed out (ready or starting). */
  mine(template: string): V1Pod[] {
    return this.d.cache.all().filter((p) => {
      if (reservedBy(p) !== this.d.replicaId || p.metadata?.labels?.[L.template] !== template || this.taken.has(p.metadata!.name!)) return false;
      const s = podCondition(p).state;
      return s === 'ready' || s === 'pending';
    });
  }

  /** A ready pod of this replica's share, handed out at once (no API call); null when none is ready. */
  take(template: string): string | null {
    const pod = this.mine(template).find((p) => podCondition(p).state === 'ready');
    if (!pod) return null;
    const name = pod.metadata!.name!;
    this.taken.add(name);
    this.counters.localClaims++;
    this.schedule();
    return name;
  }

  /** The claim on a taken pod was written (or the pod is gone): it no longer needs remembering. */
  settled(name: string): void {
    this.taken.delete(name);
  }

  isTaken(name: string): boolean {
    return this.taken.has(name);
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.topUp();
    }, 10);
    this.timer.unref();
  }

  /** Reserves unowned warm pods until every template's share is full. One pass at a time. */
  private topUp(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    return (this.running = (async () => {
      try {
        for (const template of Object.keys(this.d.cfg.templates)) await this.topUpTemplate(template);
      } catch (err) {
        this.d.log.warn({ err: String(err) }, 'reserving warm pods failed');
      } finally {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.schedule();
        }
      }
    })());
  }

  private async topUpTemplate(template: string): Promise<void> {
    const have = this.mine(template);
    const surplus = have.length - this.share(template);
    if (surplus > 0) {
      // More replicas now: the surplus goes back to the pool (starting pods first) for the others to reserve.
      const back = have.sort((a, b) => (podCondition(a).state === 'ready' ? 1 : 0) - (podCondition(b).state === 'ready' ? 1 : 0)).slice(0, surplus);
      await Promise.all(back.map((p) => this.unreserve(p)));
      return;
    }
    const inFlight = [...this.reserving].filter((n) => this.d.cache.get(n)?.metadata?.labels?.[L.template] === template).length;
    const need = this.share(template) - this.mine(template).length - inFlight;
    if (need <= 0) return;
    const free = this.d.cache
      .all()
      .filter((p) => {
        const l = p.metadata?.labels ?? {};
        const s = podCondition(p).state;
        return l[L.template] === template && l[L.state] === 'warm' && !l[L.owner] && !this.reserving.has(p.metadata!.name!) && (s === 'ready' || s === 'pending');
      })
      // Ready pods first: they can be handed out at once.
      .sort((a, b) => (podCondition(a).state === 'ready' ? 0 : 1) - (podCondition(b).state === 'ready' ? 0 : 1))
      .slice(0, need);
    await Promise.all(free.map((p) => this.reserve(p)));
  }

  private async unreserve(pod: V1Pod): Promise<void> {
    try {
      this.d.cache.remember(await this.d.api.patchPodMeta(pod.metadata!.name!, { resourceVersion: pod.metadata!.resourceVersion, labels: { [L.owner]: null } }, true));
    } catch (err) {
      if (!(err instanceof KubeError && (err.status === 409 || err.status === 404))) throw err;
      this.again = true;
    }
  }

  private async reserve(pod: V1Pod): Promise<void> {
    const name = pod.metadata!.name!;
    this.reserving.add(name);
    try {
      this.d.cache.remember(await this.d.api.patchPodMeta(name, { resourceVersion: pod.metadata!.resourceVersion, labels: { [L.owner]: this.d.replicaId } }, true));
      this.counters.reserved++;
    } catch (err) {
      // 409: another replica reserved or claimed it first (or its status changed): the next pass looks again.
      if (!(err instanceof KubeError && (err.status === 409 || err.status === 404))) throw err;
      this.counters.reserveConflicts++;
      this.again = true;
    } finally {
      this.reserving.delete(name);
    }
  }
}
