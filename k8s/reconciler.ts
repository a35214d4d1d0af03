// Background work of a replica: renew its liveness Lease, compete for the leader Lease, and — as leader only —
// reconcile the pods against the Leases, labels and sandbox records: expire sandboxes (sandbox-expiry.ts), delete
// orphans (claimed pods on which no sandbox lives any more), pods past their TTL and failed pods, and keep every
// template's warm pool full. Nothing but the labels, annotations and Leases is consulted, so a restarted or second
// replica sees the same truth. A replica that is gone leaves its live sandboxes to the others: they are no orphans.
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../sandbox/log.ts';
import type { Clock } from '../sandbox/types.ts';
import type { K8sConfig } from './config.ts';
import { KubeError, type KubeApi } from './kube.ts';
import { A, L } from './labels.ts';
import { LEASE_KIND_LABEL, LeaseHolder, leaderLeaseLabels, leaseExpired, ownerLeaseLabels, ownerLeaseName } from './leases.ts';
import type { PodCache } from './pod-cache.ts';
import { podCondition } from './pods.ts';
import { liveCount, podRecords } from './records.ts';
import { expireRecords } from './sandbox-expiry.ts';
import { endOrphanShells } from './paired-orphans.ts';

export interface ReconcilerHooks {
  /** Creates one warm pod of the template. */
  createWarm(template: string): Promise<void>;
  /** The secret worker tokens derive from (the leader deletes expired sandboxes on their workers). */
  tokenSecret: string;
  /** Where the recorded HAR of a sandbox the leader closes goes (sandbox-expiry.ts). */
  harPath?(id: string): string | undefined;
  /** After each pass: the replicas counted alive (what a gone one was recording is marked: server/shared-recording.ts). */
  serversChecked?(alive: Set<string>): Promise<void>;
}

export class Reconciler {
  private readonly ownerLease: LeaseHolder;
  private readonly leaderLease: LeaseHolder;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastReconcile = 0;
  private pokeTimer: NodeJS.Timeout | null = null;
  private readonly creatingWarm = new Map<string, number>();
  private stopped = false;
  orphansDeleted = 0;
  expiredDeleted = 0;
  sandboxesExpired = 0;
  orphanShellsEnded = 0;
  passes = 0;
  /** Replicas whose owner Lease is current (this one included), as of the last tick: each reserves its share of the
   * warm pool (warm-share.ts). */
  liveReplicas = 1;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly cfg: K8sConfig,
    private readonly api: KubeApi,
    private readonly cache: PodCache,
    private readonly replicaId: string,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly hooks: ReconcilerHooks,
  ) {
    const d = cfg.leaseDurationSeconds;
    this.ownerLease = new LeaseHolder(api, ownerLeaseName(replicaId), replicaId, d, ownerLeaseLabels(cfg.instance), clock);
    this.leaderLease = new LeaseHolder(api, `grove-leader-${cfg.instance}`, replicaId, d, leaderLeaseLabels(cfg.instance), clock);
  }

  get isLeader(): boolean {
    return this.leaderLease.held();
  }

  /** Takes the owner Lease, runs a first tick, then ticks every leaseDuration / 3. */
  async start(): Promise<void> {
    // A claim or a deleted pod (by any replica): the leader refills at once.
    this.unsubscribe = this.cache.subscribe((pod, type) => {
      if (type === 'DELETED' || pod.metadata?.labels?.[L.state] === 'claimed') this.poke();
    });
    await this.tick();
    const every = Math.max(200, Math.min(this.cfg.leaseDurationSeconds * 1000 / 3, this.cfg.reconcileIntervalSeconds * 1000));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  /** Something changed (a warm pod was claimed): the leader refills soon, without waiting for the next tick. */
  poke(): void {
    if (this.pokeTimer || this.stopped) return;
    this.pokeTimer = setTimeout(() => {
      this.pokeTimer = null;
      if (this.isLeader) void this.guard(() => this.replenish());
    }, 50);
    this.pokeTimer.unref();
  }

  private async guard(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.log.warn({ err: String(err) }, 'kubernetes reconciler step failed');
    }
  }

  /** One pass: renew, elect, and (leader, when due) reconcile. Passes never overlap. */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return (this.running ??= (async () => {
      await this.guard(async () => void (await this.ownerLease.tryAcquire()));
      await this.guard(async () => void (await this.leaderLease.tryAcquire()));
      await this.guard(async () => {
        const now = this.clock.now();
        const leases = await this.api.listLeases(`${LEASE_KIND_LABEL}=owner,${L.instance}=${this.cfg.instance}`);
        this.liveReplicas = Math.max(1, new Set(leases.filter((l) => ownerLeaseOf(l) && !leaseExpired(l, now)).map((l) => l.spec?.holderIdentity)).size);
      });
      if (this.isLeader && this.clock.now() - this.lastReconcile >= this.cfg.reconcileIntervalSeconds * 1000) {
        this.lastReconcile = this.clock.now();
        await this.guard(() => this.reconcile());
      }
    })().finally(() => (this.running = null)));
  }

  /** Leader only: expires sandboxes, deletes orphaned, expired and failed pods, then refills the warm pools. */
  async reconcile(): Promise<void> {
    this.passes++;
    const now = this.clock.now();
    const leases = await this.api.listLeases(`${LEASE_KIND_LABEL}=owner,${L.instance}=${this.cfg.instance}`);
    const live = new Set<string>([this.replicaId]);
    // Replicas whose Lease lapsed less than two durations ago may only be slow to renew (a loaded node): the
    // sandboxes they are creating are left alone until then.
    const recent = new Set<string>([this.replicaId]);
    const lapse = 2 * this.cfg.leaseDurationSeconds * 1000;
    for (const l of leases) {
      // A replica is alive by its own Lease only: one named for another replica says nothing of its holder.
      const own = ownerLeaseOf(l);
      if (own && !leaseExpired(l, now)) live.add(l.spec?.holderIdentity ?? '');
      if (own && !leaseExpired(l, now - lapse)) recent.add(l.spec?.holderIdentity ?? '');
      // A Lease nobody renewed for many durations belongs to a replica that is gone for good.
      else if (l.spec?.holderIdentity !== this.replicaId && leaseExpired(l, now - 3 * this.cfg.leaseDurationSeconds * 1000)) {
        await this.api.deleteLease(l.metadata!.name!);
      }
    }
    this.sandboxesExpired += await expireRecords({ cfg: this.cfg, api: this.api, cache: this.cache, clock: this.clock, log: this.log, tokenSecret: this.hooks.tokenSecret, harPath: this.hooks.harPath }, recent);
    await this.guard(async () => this.hooks.serversChecked?.(recent));
    // Paired shells whose record is not live (a replica died mid-pairing): their workers are ended.
    await this.guard(async () => void (this.orphanShellsEnded += await endOrphanShells({ cfg: this.cfg, cache: this.cache, tokenSecret: this.hooks.tokenSecret, log: this.log })));
    const grace = 2 * this.cfg.leaseDurationSeconds * 1000;
    const doomed: Array<{ pod: V1Pod; why: 'orphan' | 'expired' | 'failed' }> = [];
    for (const pod of this.cache.all()) {
      if (pod.metadata?.deletionTimestamp) continue;
      const labels = pod.metadata?.labels ?? {};
      const ann = pod.metadata?.annotations ?? {};
      const cond = podCondition(pod);
      if (cond.state === 'failed' && cond.code !== 'pod_unschedulable') doomed.push({ pod, why: 'failed' });
      // A warm pod reserved by a replica that is gone: it may have died mid-claim, a sandbox started on the worker
      // but its claim never written. Deleted, never handed to anyone else (the pool refills).
      else if (labels[L.state] === 'warm' && labels[L.owner] && !recent.has(labels[L.owner])) doomed.push({ pod, why: 'orphan' });
      else if (labels[L.state] !== 'claimed') continue;
      else if (ann[A.expiresAt] && Date.parse(ann[A.expiresAt]) <= now) doomed.push({ pod, why: 'expired' });
      else if (liveCount(pod) === 0 && (!live.has(labels[L.owner] ?? '') || now - lastChange(pod) > grace)) doomed.push({ pod, why: 'orphan' });
    }
    await Promise.all(
      doomed.map(async ({ pod, why }) => {
        const name = pod.metadata!.name!;
        this.log.info({ pod: name, reason: why }, 'reconciler deleting pod');
        try {
          // An orphan is deleted only as it was read: a replica may be placing a sandbox on it right now.
          if (await this.api.deletePod(name, true, why === 'orphan' ? pod.metadata!.resourceVersion : undefined)) {
            if (why === 'expired') this.expiredDeleted++;
            else this.orphansDeleted++;
          }
        } catch (err) {
          if (!(err instanceof KubeError && err.status === 409)) throw err;
        }
      }),
    );
    await this.replenish();
  }

  /** Leader only: creates the warm pods each template is short of (ready or starting ones count). */
  async replenish(): Promise<void> {
    const jobs: Array<Promise<void>> = [];
    for (const [template, t] of Object.entries(this.cfg.templates)) {
      if (t.warmPool === 0) continue;
      const have = this.cache.all().filter((p) => {
        const l = p.metadata?.labels ?? {};
        const c = podCondition(p);
        return l[L.template] === template && l[L.state] === 'warm' && (c.state === 'ready' || c.state === 'pending');
      }).length;
      const inFlight = this.creatingWarm.get(template) ?? 0;
      for (let i = have + inFlight; i < t.warmPool; i++) {
        this.creatingWarm.set(template, (this.creatingWarm.get(template) ?? 0) + 1);
        jobs.push(
          this.hooks.createWarm(template).finally(() => this.creatingWarm.set(template, (this.creatingWarm.get(template) ?? 1) - 1)),
        );
      }
    }
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Stops ticking; with `release`, gives both Leases up so others need not wait for them to expire. */
  async stop(release: boolean): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    if (this.pokeTimer) clearTimeout(this.pokeTimer);
    await this.running?.catch(() => undefined);
    if (release) {
      await this.guard(() => this.leaderLease.release());
      await this.guard(() => this.ownerLease.release());
    }
  }
}

/** A replica's liveness Lease is named after its holder (leases.ts ownerLeaseName): a Lease of another name holding
 * for a replica (written by mistake or forged) does not keep that replica alive. */
function ownerLeaseOf(l: V1Lease): boolean {
  const holder = l.spec?.holderIdentity;
  return !!holder && l.metadata?.name === ownerLeaseName(holder);
}

/** The last time a claimed pod's occupancy changed: its claim, or a sandbox created or closed on it. */
function lastChange(pod: V1Pod): number {
  let t = Date.parse(pod.metadata?.annotations?.[A.claimedAt] ?? '') || 0;
  for (const r of podRecords(pod).values()) t = Math.max(t, Date.parse(r.created), Date.parse(r.closed ?? r.created));
  return t;
}
