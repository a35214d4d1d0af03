// The Kubernetes backend: sandboxes on worker pods. The orchestrator (this process) claims a warm worker pod or
// creates one, waits for readiness through one shared watch (PodCache), then talks to the worker over the pod IP
// with the pod's token (RemoteSandbox). Two placements per template: `pod` (one pod per sandbox) and `shared`
// (worker pods hosting up to maxPerWorker sandboxes, placed by load). Pod labels/annotations are the only shared
// state; Leases say which replicas are alive and which one reconciles (reconciler.ts).
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { CreateSandboxBody } from '../protocol/sandbox.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { systemClock, type Backend, type Clock, type Sandbox } from '../sandbox/types.ts';
import { templateFor, type K8sConfig } from './config.ts';
import { KubeApi, KubeError } from './kube.ts';
import { A, L, workerSelector } from './labels.ts';
import { PodCache } from './pod-cache.ts';
import { podCondition, workerPod } from './pods.ts';
import { Reconciler } from './reconciler.ts';
import { RemoteSandbox, type Placement, type PlacementDriver, type RemoteHar } from './remote-sandbox.ts';
import { RemoteShellSandbox } from './remote-shell.ts';
import { newPodName, workerToken } from './token.ts';

export interface KubernetesBackendOptions {
  config: K8sConfig;
  kubeConfig: KubeConfig;
  /** This replica's identity (its pod name in a cluster): the owner label of the pods it claims. */
  replicaId: string;
  /** Secret shared by every replica; worker tokens are derived from it. */
  tokenSecret: string;
  /** TTL written on pods as the hard expiry the reconciler enforces (the registry's default when a sandbox has none). */
  defaultTtlSeconds: number;
  log?: Logger;
  clock?: Clock;
}

/** A worker pod this replica owns, with the sandboxes placed on it. */
interface WorkerSlot {
  template: string;
  name: string | null;
  sandboxes: Set<string>;
  ready: Promise<{ name: string; ip: string }>;
  failed: boolean;
  /** A pod this replica created and is still waiting for (counts toward maxStartingPods). */
  cold: boolean;
}

export class KubernetesBackend implements Backend, PlacementDriver {
  readonly name = 'kubernetes';
  readonly api: KubeApi;
  readonly cache: PodCache;
  readonly reconciler: Reconciler;
  private readonly cfg: K8sConfig;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly slots = new Set<WorkerSlot>();
  private readonly slotOf = new Map<string, WorkerSlot>();
  private readonly sandboxes = new Map<string, RemoteSandbox>();
  private readonly deadlines = new Map<string, number>();
  /** Warm pods being claimed right now (not to be offered twice). */
  private readonly claiming = new Set<string>();
  private starting = 0;
  private stopped = false;
  private abandoned = false;
  private started: Promise<void> | null = null;
  readonly counters = { warmHits: 0, warmMisses: 0, podsCreated: 0, podsDeleted: 0, lost: 0 };

  constructor(private readonly opts: KubernetesBackendOptions) {
    this.cfg = opts.config;
    this.log = opts.log ?? silentLogger;
    this.clock = opts.clock ?? systemClock;
    this.api = new KubeApi(opts.kubeConfig, this.cfg.namespace, this.cfg.api);
    this.cache = new PodCache(this.api, workerSelector(this.cfg.instance), this.log);
    this.reconciler = new Reconciler(this.cfg, this.api, this.cache, opts.replicaId, this.clock, this.log, {
      owns: (pod) => this.ownsPod(pod),
      createWarm: (template) => this.createWarmPod(template),
    });
    this.cache.subscribe((pod, type) => this.onPodChange(pod, type));
  }

  /** Lists and watches the worker pods, takes the replica's Lease, starts reconciling. Idempotent. */
  start(): Promise<void> {
    return (this.started ??= (async () => {
      await this.cache.start();
      await this.reconciler.start();
    })());
  }

  /** The backend's settings (read-only). */
  get config(): K8sConfig {
    return this.cfg;
  }

  get replicaId(): string {
    return this.opts.replicaId;
  }

  supports(type: CreateSandboxBody['type']): boolean {
    return templateFor(this.cfg, type, undefined) !== null;
  }

  /** Back-pressure before a sandbox is accepted: 503 + Retry-After when the API or the cluster is saturated. */
  admit(spec: CreateSandboxBody): void {
    if (this.stopped) throw new GroveError('shutting_down');
    const t = templateFor(this.cfg, spec.type, spec.labels);
    if (!t) throw new GroveError('invalid_request', `No kubernetes template "${spec.labels?.template}" for ${spec.type} sandboxes (templates: ${Object.keys(this.cfg.templates).join(', ')}).`);
    const queued = this.api.throttle.queued;
    if (queued >= this.cfg.api.maxQueue) {
      throw new GroveError('capacity_exhausted', `The Kubernetes API is saturated (${queued} calls queued); retry shortly.`, {
        retryAfter: Math.min(60, 1 + Math.ceil(queued / this.cfg.api.concurrency / 10)),
      });
    }
    if (this.starting >= this.cfg.maxStartingPods && !this.hasRoom(t[0])) {
      throw new GroveError('capacity_exhausted', `${this.starting} sandbox pods are still starting; retry shortly.`, { retryAfter: 5 });
    }
  }

  private hasRoom(template: string): boolean {
    const t = this.cfg.templates[template]!;
    if (t.placement === 'shared' && [...this.slots].some((s) => s.template === template && !s.failed && s.sandboxes.size < t.maxPerWorker)) return true;
    return this.warmCandidates(template).length > 0;
  }

  async create(id: string, spec: CreateSandboxBody, extras: { har?: RemoteHar } = {}): Promise<Sandbox> {
    if (this.stopped) throw new GroveError('shutting_down');
    await this.start();
    const t = templateFor(this.cfg, spec.type, spec.labels);
    if (!t) throw new GroveError('unsupported_sandbox_type', `No kubernetes template for ${spec.type} sandboxes.`);
    this.deadlines.set(id, this.clock.now() + this.cfg.readyTimeoutSeconds * 1000);
    const more = { ...extras, log: this.log };
    const sb = spec.type === 'shell' ? new RemoteShellSandbox(id, spec, t[0], this, more) : new RemoteSandbox(id, spec, t[0], this, more);
    this.sandboxes.set(id, sb);
    return sb;
  }

  readyDeadline(): number {
    return this.cfg.readyTimeoutSeconds * 1000;
  }

  // --- placement --------------------------------------------------------------------------------------

  async place(sb: RemoteSandbox): Promise<Placement> {
    const t = this.cfg.templates[sb.templateName]!;
    const deadline = this.deadlines.get(sb.id) ?? this.clock.now() + this.cfg.readyTimeoutSeconds * 1000;
    let slot: WorkerSlot | undefined;
    if (t.placement === 'shared') {
      // Least-loaded worker of the template with room; starting workers count, so a burst fills them.
      for (const s of this.slots) {
        if (s.template !== sb.templateName || s.failed || s.sandboxes.size >= t.maxPerWorker) continue;
        if (!slot || s.sandboxes.size < slot.sandboxes.size) slot = s;
      }
    }
    slot ??= this.acquireWorker(sb);
    slot.sandboxes.add(sb.id);
    this.slotOf.set(sb.id, slot);
    const { name, ip } = await this.waitReady(slot, deadline, sb.aborted.signal);
    if (t.placement === 'shared') await this.writeLoad(slot);
    const host = ip.includes(':') ? `[${ip}]` : ip;
    return { pod: name, url: `http://${host}:${this.cfg.workerPort}`, token: workerToken(this.opts.tokenSecret, name) };
  }

  private expiresAt(sb: RemoteSandbox): string {
    return new Date(this.clock.now() + (sb.spec.ttl_seconds ?? this.opts.defaultTtlSeconds) * 1000).toISOString();
  }

  /** A slot for a new worker: a claimed warm pod (hit) or a new pod (miss). Registered at once. */
  private acquireWorker(sb: RemoteSandbox): WorkerSlot {
    const slot: WorkerSlot = { template: sb.templateName, name: null, sandboxes: new Set(), ready: Promise.resolve({ name: '', ip: '' }), failed: false, cold: false };
    this.slots.add(slot);
    slot.ready = this.claimOrCreate(slot, sb);
    slot.ready.catch(() => (slot.failed = true));
    return slot;
  }

  private warmCandidates(template: string): V1Pod[] {
    return this.cache.all().filter((p) => {
      const l = p.metadata?.labels ?? {};
      return l[L.template] === template && l[L.state] === 'warm' && !this.claiming.has(p.metadata!.name!) && podCondition(p).state === 'ready';
    });
  }

  private async claimOrCreate(slot: WorkerSlot, sb: RemoteSandbox): Promise<{ name: string; ip: string }> {
    const t = this.cfg.templates[slot.template]!;
    const perPod = t.placement === 'pod';
    for (const pod of this.warmCandidates(slot.template)) {
      const name = pod.metadata!.name!;
      this.claiming.add(name);
      try {
        const claimed = await this.api.patchPodMeta(name, {
          resourceVersion: pod.metadata!.resourceVersion,
          labels: { [L.state]: 'claimed', [L.owner]: this.opts.replicaId, ...(perPod ? { [L.sandbox]: sb.id } : {}) },
          annotations: { [A.claimedAt]: new Date(this.clock.now()).toISOString(), ...(perPod ? { [A.expiresAt]: this.expiresAt(sb) } : {}) },
        });
        this.cache.remember(claimed);
        slot.name = name;
        this.counters.warmHits++;
        this.reconciler.poke();
        const c = podCondition(claimed);
        if (c.state === 'ready') return { name, ip: c.ip };
        return { name, ip: '' };
      } catch (err) {
        // 409: another replica claimed it first (or it changed); try the next one.
        if (!(err instanceof KubeError && (err.status === 409 || err.status === 404))) throw err;
      } finally {
        this.claiming.delete(name);
      }
    }
    this.counters.warmMisses++;
    const name = newPodName(slot.template);
    slot.name = name;
    const pod = workerPod(this.cfg, slot.template, name, workerToken(this.opts.tokenSecret, name), {
      owner: this.opts.replicaId,
      ...(perPod ? { sandboxId: sb.id, expiresAt: this.expiresAt(sb) } : { sandboxes: [] }),
    });
    this.starting++;
    slot.cold = true;
    try {
      this.cache.remember(await this.api.createPod(pod));
      this.counters.podsCreated++;
    } catch (err) {
      this.starting--;
      slot.cold = false;
      throw new GroveError('internal_error', `Creating worker pod ${name} failed: ${(err as Error).message}`, { cause: err });
    }
    return { name, ip: '' };
  }

  /** Resolves with the pod's IP once it is ready; rejects with a clear status when it cannot start. */
  private async waitReady(slot: WorkerSlot, deadline: number, signal: AbortSignal): Promise<{ name: string; ip: string }> {
    const got = await slot.ready;
    if (got.ip) return got;
    const name = got.name;
    try {
      return await new Promise<{ name: string; ip: string }>((resolve, reject) => {
        let unschedulable: string | null = null;
        const finish = (err: GroveError | null, ip?: string) => {
          unsubscribe();
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (err) {
            slot.failed = true;
            reject(err);
          } else resolve({ name, ip: ip! });
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
        const unsubscribe = this.cache.subscribe((pod, type) => {
          if (pod.metadata?.name === name) check(pod, type === 'DELETED');
        });
        const onAbort = () => finish(new GroveError('sandbox_closed', 'Sandbox closed while its pod was starting.'));
        signal.addEventListener('abort', onAbort);
        const timer = setTimeout(
          () =>
            finish(
              unschedulable
                ? new GroveError('pod_unschedulable', unschedulable)
                : new GroveError('pod_start_timeout', `Worker pod ${name} was not ready after ${this.cfg.readyTimeoutSeconds} s.`),
            ),
          Math.max(0, deadline - this.clock.now()),
        );
        if (signal.aborted) return onAbort();
        check(this.cache.get(name));
      });
    } finally {
      if (slot.cold) {
        slot.cold = false;
        this.starting--;
      }
    }
  }

  private async writeLoad(slot: WorkerSlot): Promise<void> {
    if (!slot.name) return;
    const pod = await this.api.patchPodMeta(slot.name, { annotations: { [A.sandboxes]: JSON.stringify([...slot.sandboxes]) } });
    this.cache.remember(pod);
  }

  async release(sb: RemoteSandbox, placement: Placement | null): Promise<void> {
    if (this.abandoned) return;
    this.sandboxes.delete(sb.id);
    this.deadlines.delete(sb.id);
    const slot = this.slotOf.get(sb.id);
    this.slotOf.delete(sb.id);
    if (!slot) return;
    slot.sandboxes.delete(sb.id);
    const name = placement?.pod ?? slot.name;
    try {
      if (slot.sandboxes.size === 0) {
        this.slots.delete(slot);
        // A pod whose creation is still in flight is deleted once its name exists.
        const got = name ? { name } : await slot.ready.catch(() => null);
        if (got?.name && (await this.api.deletePod(got.name))) this.counters.podsDeleted++;
      } else {
        await this.writeLoad(slot);
      }
    } catch (err) {
      // The reconciler deletes what is left (the pod keeps our owner label and TTL).
      this.log.warn({ err: String(err), sandbox_id: sb.id, pod: name }, 'releasing worker pod failed');
    }
  }

  private ownsPod(pod: V1Pod): boolean {
    const name = pod.metadata?.name;
    for (const s of this.slots) if (s.name === name) return true;
    return false;
  }

  private async createWarmPod(template: string): Promise<void> {
    const name = newPodName(template);
    this.cache.remember(await this.api.createPod(workerPod(this.cfg, template, name, workerToken(this.opts.tokenSecret, name)), true));
    this.counters.podsCreated++;
  }

  /** A pod of ours went away or failed under live sandboxes: they are lost (sandbox_closed from then on). */
  private onPodChange(pod: V1Pod, type: string): void {
    const name = pod.metadata?.name;
    for (const slot of this.slots) {
      if (slot.name !== name) continue;
      const c = podCondition(pod);
      if (type !== 'DELETED' && c.state !== 'failed' && c.state !== 'gone') return;
      if (c.state === 'failed' && c.code === 'pod_unschedulable') return;
      const reason = type === 'DELETED' || c.state === 'gone' ? `worker pod ${name} was deleted` : (c as { message: string }).message;
      slot.failed = true;
      for (const id of slot.sandboxes) {
        const sb = this.sandboxes.get(id);
        if (sb && sb.status !== 'creating' && sb.markLost(reason)) this.counters.lost++;
      }
    }
  }

  /** Graceful: deletes the pods this replica owns, gives its Leases up, stops watching. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.reconciler.stop(true);
    const names = [...this.slots].map((s) => s.name).filter((n): n is string => n !== null);
    this.slots.clear();
    await Promise.allSettled(names.map((n) => this.api.deletePod(n)));
    this.cache.stop();
  }

  /** Stops all background work and leaves every pod and Lease as it is (a crash, for tests of the reconciler). */
  async abandon(): Promise<void> {
    this.stopped = true;
    this.abandoned = true;
    await this.reconciler.stop(false);
    this.cache.stop();
  }

  stats(): Record<string, number> {
    return {
      k8s_warm_hits: this.counters.warmHits,
      k8s_warm_misses: this.counters.warmMisses,
      k8s_pods_created: this.counters.podsCreated,
      k8s_pods_deleted: this.counters.podsDeleted,
      k8s_pods_starting: this.starting,
      k8s_workers: this.slots.size,
      k8s_sandboxes_lost: this.counters.lost,
      k8s_api_calls: this.api.throttle.calls,
      k8s_api_retries: this.api.throttle.retried,
      k8s_api_queued: this.api.throttle.queued,
      k8s_watch_relists: this.cache.relists,
      k8s_leader: this.reconciler.isLeader ? 1 : 0,
      k8s_orphans_deleted: this.reconciler.orphansDeleted,
    };
  }
}
