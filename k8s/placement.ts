// Where a new sandbox runs. Shared placement: the least-loaded worker of the template with room, load being the
// live records on the pod (records.ts) — so sandboxes placed by every replica count — reserved by a guarded patch
// that adds the sandbox's record (409: someone else wrote first, re-read and choose again; a worker never takes
// more than maxPerWorker). Otherwise, or with one pod per sandbox: a warm pod claimed by a guarded label patch
// (hit), or a new pod created already claimed, record included (miss). Then readiness through the pod watch.
// A hit from this replica's own share of the pool (warm-share.ts) waits on no API call at all: the claim is written
// after (claim-writes.ts), while the sandbox starts on the worker.
import type { V1Pod } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { Logger } from '../sandbox/log.ts';
import type { Clock } from '../sandbox/types.ts';
import type { K8sConfig } from './config.ts';
import { KubeApi, KubeError } from './kube.ts';
import { A, L } from './labels.ts';
import type { PodCache } from './pod-cache.ts';
import { fresh } from './pod-writer.ts';
import { podCondition, workerPod } from './pods.ts';
import { encodeRecord, liveCount, recordKey, safeName, type SandboxRecord } from './records.ts';
import { newPodName, workerToken } from './token.ts';
import type { ClaimWrites } from './claim-writes.ts';
import { reservedBy, type WarmShare } from './warm-share.ts';

export interface PlacerDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  replicaId: string;
  tokenSecret: string;
  clock: Clock;
  log: Logger;
  /** A warm pod was claimed: the leader refills the pool. */
  claimed(): void;
  /** This replica's share of the warm pool, claimed from memory. */
  share: WarmShare;
  writes: ClaimWrites;
  /** The claim written after a claim from memory failed (the pod is gone, or the API refused): the sandbox is lost. */
  claimFailed(sandboxId: string, pod: string, why: string): void;
}

export class Placer {
  readonly counters = { warmHits: 0, warmMisses: 0, podsCreated: 0 };
  /** Sandboxes whose pod was claimed from memory (their writes go through ClaimWrites), by id → pod. */
  readonly claimedLocally = new Map<string, string>();
  /** Warm pods being claimed right now (not to be offered twice). */
  private readonly claiming = new Set<string>();
  /** Pods this replica created and still waits for (count toward maxStartingPods). */
  private readonly cold = new Set<string>();
  /** Shared placement is chosen one at a time per template here, so a burst fills a new worker instead of making one each. */
  private readonly queue = new Map<string, Promise<unknown>>();

  constructor(private readonly d: PlacerDeps) {}

  get starting(): number {
    return this.cold.size;
  }

  /** True when a sandbox of the template can start without a new pod. */
  hasRoom(template: string): boolean {
    const t = this.d.cfg.templates[template]!;
    if (t.placement === 'shared' && this.sharedCandidates(template).length > 0) return true;
    return this.warmCandidates(template).length > 0 || this.d.share.mine(template).some((p) => podCondition(p).state === 'ready');
  }

  /** Reserves a place for the record; resolves with the pod's name (the pod may still be starting). */
  place(rec: SandboxRecord, expiresAt: string): Promise<string> {
    const t = this.d.cfg.templates[rec.template]!;
    // A claw sandbox gets a pod of its own whatever the template says: its apps, and the browsers paired with it,
    // share that pod with nobody else (k8s/remote-claw.ts).
    if (t.placement === 'pod' || rec.type === 'claw') return this.claimOrCreate(rec, true, expiresAt);
    const prev = this.queue.get(rec.template) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.placeShared(rec));
    this.queue.set(rec.template, next);
    void next.finally(() => this.queue.get(rec.template) === next && this.queue.delete(rec.template)).catch(() => undefined);
    return next;
  }

  private sharedCandidates(template: string): V1Pod[] {
    const max = this.d.cfg.templates[template]!.maxPerWorker;
    return this.d.cache.all().filter((p) => {
      const l = p.metadata?.labels ?? {};
      // A pod claimed for one sandbox (a claw sandbox's on a shared template) takes no others.
      if (l[L.template] !== template || l[L.state] !== 'claimed' || l[L.placement] !== 'shared' || l[L.sandbox]) return false;
      const c = podCondition(p);
      return (c.state === 'ready' || c.state === 'pending') && liveCount(p) < max;
    });
  }

  private async placeShared(rec: SandboxRecord): Promise<string> {
    const key = recordKey(rec.id);
    const tried = new Set<string>();
    for (let attempt = 0; attempt < 16; attempt++) {
      // Least loaded first; among equals, a ready worker before a starting one.
      const pick = this.sharedCandidates(rec.template)
        .filter((p) => !tried.has(`${p.metadata!.name}@${p.metadata!.resourceVersion}`))
        .sort((a, b) => liveCount(a) - liveCount(b) || rank(a) - rank(b))[0];
      if (!pick) break;
      const name = pick.metadata!.name!;
      tried.add(`${name}@${pick.metadata!.resourceVersion}`);
      try {
        const pod = await this.d.api.patchPodMeta(name, { resourceVersion: pick.metadata!.resourceVersion, annotations: { [key]: encodeRecord(rec) } });
        this.d.cache.remember(pod);
        return name;
      } catch (err) {
        if (!(err instanceof KubeError && (err.status === 409 || err.status === 404))) throw err;
        // Another replica wrote the pod first: read it again and choose again.
        if (err.status === 409) await fresh(this.d.api, this.d.cache, name);
      }
    }
    return this.claimOrCreate(rec, false);
  }

  private warmCandidates(template: string): V1Pod[] {
    return this.d.cache.all().filter((p) => {
      const l = p.metadata?.labels ?? {};
      // A pod another replica reserved is its own (warm-share.ts); this replica's own are claimed from memory.
      return l[L.template] === template && l[L.state] === 'warm' && !reservedBy(p) && !this.claiming.has(p.metadata!.name!) && podCondition(p).state === 'ready';
    });
  }

  private async claimOrCreate(rec: SandboxRecord, perPod: boolean, expiresAt?: string): Promise<string> {
    const now = new Date(this.d.clock.now()).toISOString();
    const annotations = { [A.claimedAt]: now, [recordKey(rec.id)]: encodeRecord(rec), ...(expiresAt ? { [A.expiresAt]: expiresAt } : {}) };
    const labels = { [L.state]: 'claimed', [L.owner]: this.d.replicaId, ...(perPod ? { [L.sandbox]: safeName(rec.id) } : {}) };
    // A sandbox with its own image never takes a warm pod of the template: its pod runs that image.
    const own = rec.image ? null : this.d.share.take(rec.template);
    if (own) return this.claimFromMemory(own, rec, labels, annotations);
    for (const pod of rec.image ? [] : this.warmCandidates(rec.template)) {
      const name = pod.metadata!.name!;
      this.claiming.add(name);
      try {
        this.d.cache.remember(await this.d.api.patchPodMeta(name, { resourceVersion: pod.metadata!.resourceVersion, labels, annotations }));
        this.counters.warmHits++;
        this.d.claimed();
        return name;
      } catch (err) {
        // 409: another replica claimed it first (or it changed); try the next one.
        if (!(err instanceof KubeError && (err.status === 409 || err.status === 404))) throw err;
      } finally {
        this.claiming.delete(name);
      }
    }
    this.counters.warmMisses++;
    const name = newPodName(rec.template);
    const pod = workerPod(this.d.cfg, rec.template, name, workerToken(this.d.tokenSecret, name), undefined, rec.image);
    Object.assign(pod.metadata!.labels!, labels);
    Object.assign(pod.metadata!.annotations!, annotations);
    this.cold.add(name);
    try {
      this.d.cache.remember(await this.d.api.createPod(pod));
      this.counters.podsCreated++;
    } catch (err) {
      this.cold.delete(name);
      throw new GroveError('internal_error', `Creating worker pod ${name} failed: ${(err as Error).message}`, { cause: err });
    }
    return name;
  }

  /** A pod of this replica's share: nobody else claims it, so the sandbox starts now and the claim is written after. */
  private claimFromMemory(name: string, rec: SandboxRecord, labels: Record<string, string>, annotations: Record<string, string>): string {
    this.counters.warmHits++;
    this.claimedLocally.set(rec.id, name);
    const fail = (why: string) => {
      this.d.share.settled(name);
      this.d.claimFailed(rec.id, name, why);
    };
    this.d.writes
      .write(name, (p) => (reservedBy(p) === this.d.replicaId ? { labels, annotations } : null))
      .then(
        (pod) => {
          if (!pod || pod.metadata?.labels?.[L.state] !== 'claimed') return fail(`worker pod ${name} went away before its claim was written`);
          this.d.share.settled(name);
          this.d.claimed();
        },
        (err: unknown) => fail(`writing the claim of worker pod ${name} failed: ${String(err)}`),
      );
    return name;
  }

  async createWarmPod(template: string): Promise<void> {
    const name = newPodName(template);
    this.d.cache.remember(await this.d.api.createPod(workerPod(this.d.cfg, template, name, workerToken(this.d.tokenSecret, name)), true));
    this.counters.podsCreated++;
  }

  /** Resolves with the pod's IP once it is ready; rejects with a clear status when it cannot start. */
  async waitReady(name: string, deadline: number, signal: AbortSignal): Promise<string> {
    try {
      return await new Promise<string>((resolve, reject) => {
        let unschedulable: string | null = null;
        const finish = (err: GroveError | null, ip?: string) => {
          unsubscribe();
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve(ip!);
        };
        const check = (pod: V1Pod | undefined, deleted = false) => {
          if (!pod || deleted) return finish(new GroveError('worker_lost', `Worker pod ${name} was deleted before it became ready.`));
          const c = podCondition(pod);
          if (c.state === 'ready') return finish(null, c.ip);
          if (c.state === 'gone') return finish(new GroveError('worker_lost', `Worker pod ${name} is being deleted.`));
          if (c.state === 'failed') {
            // The cluster autoscaler may still add a node: unschedulable is reported only at the deadline.
            if (c.code === 'pod_unschedulable') unschedulable = c.message;
            else return finish(new GroveError(c.code, c.message));
          }
        };
        const unsubscribe = this.d.cache.subscribe((pod, type) => {
          if (pod.metadata?.name === name) check(pod, type === 'DELETED');
        });
        const onAbort = () => finish(new GroveError('sandbox_closed', 'Sandbox closed while its pod was starting.'));
        signal.addEventListener('abort', onAbort);
        const timer = setTimeout(
          () =>
            finish(
              unschedulable
                ? new GroveError('pod_unschedulable', unschedulable)
                : new GroveError('pod_start_timeout', `Worker pod ${name} was not ready after ${this.d.cfg.readyTimeoutSeconds} s.`),
            ),
          Math.max(0, deadline - this.d.clock.now()),
        );
        if (signal.aborted) return onAbort();
        check(this.d.cache.get(name));
      });
    } finally {
      this.cold.delete(name);
    }
  }
}

function rank(p: V1Pod): number {
  return podCondition(p).state === 'ready' ? 0 : 1;
}
