// The Kubernetes backend: sandboxes on worker pods. The orchestrator (this process) places a sandbox (placement.ts:
// a shared worker with room, a claimed warm pod, or a new pod), waits for readiness through one shared watch
// (PodCache), then talks to the worker over the pod IP with the pod's token (RemoteSandbox). Every fact needed to
// serve a sandbox is its record on the pod (records.ts), so any replica serves any sandbox (shared.ts); Leases say
// which replicas are alive and which one reconciles and expires (reconciler.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { CreateSandboxBody } from '../protocol/sandbox.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { systemClock, type Backend, type Clock, type Sandbox, type SharedSandboxes } from '../sandbox/types.ts';
import { templateFor, type K8sConfig } from './config.ts';
import { KubeApi, KubeError } from './kube.ts';
import { L, workerSelector } from './labels.ts';
import { PodCache } from './pod-cache.ts';
import { updatePod } from './pod-writer.ts';
import { Placer } from './placement.ts';
import { closedRecord, encodeRecord, isLive, liveCount, podRecords, pruneTombstones, recordKey, type SandboxRecord } from './records.ts';
import { Reconciler } from './reconciler.ts';
import type { RemoteHar } from './remote-files.ts';
import type { Attach, Placement, PlacementDriver } from './remote-placement.ts';
import { RemoteSandbox } from './remote-sandbox.ts';
import { RemoteShellSandbox } from './remote-shell.ts';
import { RemoteClawSandbox } from './remote-claw.ts';
import { RemoteClawEvalSandbox, type ClawEvalOnOrchestrator } from './remote-claw-eval.ts';
import { placementOf, SharedState } from './shared.ts';
import type { PairedShell } from './paired-shell.ts';
import { ClawPairing } from './claw-pairing.ts';
import { attachToolsShell, dropToolsShells, openToolsShell, type ToolsShell } from './claw-eval-tools.ts';
import type { ShellCreateOptions } from '../protocol/sandbox.ts';
import { ClaimWrites } from './claim-writes.ts';
import { WarmShare } from './warm-share.ts';

export interface KubernetesBackendOptions {
  config: K8sConfig;
  kubeConfig: KubeConfig;
  /** This replica's identity (its pod name in a cluster): the owner label of the pods it claims. */
  replicaId: string;
  /** Secret shared by every replica; worker tokens are derived from it. */
  tokenSecret: string;
  /** TTL written on pods as the hard expiry the reconciler enforces (the registry's default when a sandbox has none). */
  defaultTtlSeconds: number;
  /** Idle timeout of sandboxes that ask for none (the registry's default), written in their records. */
  defaultIdleSeconds?: number;
  log?: Logger;
  clock?: Clock;
}

export class KubernetesBackend implements Backend, PlacementDriver {
  readonly name = 'kubernetes';
  readonly api: KubeApi;
  readonly cache: PodCache;
  readonly reconciler: Reconciler;
  readonly placer: Placer;
  readonly share: WarmShare;
  private readonly writes: ClaimWrites;
  private readonly state: SharedState;
  private readonly cfg: K8sConfig;
  private readonly log: Logger;
  private readonly clock: Clock;
  /** Sandboxes this replica holds (created here or adopted), by id. */
  private readonly sandboxes = new Map<string, RemoteSandbox>();
  private readonly deadlines = new Map<string, number>();
  /** The pod each placed sandbox runs on. */
  private readonly podOf = new Map<string, string>();
  /** Browsers and shells placed beside a claw sandbox, on its pod (claw-pairing.ts). */
  private readonly pairing: ClawPairing;
  /** Tools shells being created here, by id: the Claw-Eval episode each runs the sandbox tools of (claw-eval-tools.ts). */
  private readonly toolsFor = new Map<string, string>();
  private stopped = false;
  private abandoned = false;
  private startup: Promise<void> | null = null;
  readonly counters = { podsDeleted: 0, lost: 0, adopted: 0 };

  constructor(private readonly opts: KubernetesBackendOptions) {
    this.cfg = opts.config;
    this.log = opts.log ?? silentLogger;
    this.clock = opts.clock ?? systemClock;
    this.api = new KubeApi(opts.kubeConfig, this.cfg.namespace, this.cfg.api);
    this.cache = new PodCache(this.api, workerSelector(this.cfg.instance), this.log);
    const common = { cfg: this.cfg, api: this.api, cache: this.cache, replicaId: opts.replicaId, tokenSecret: opts.tokenSecret, clock: this.clock, log: this.log };
    this.writes = new ClaimWrites(this.api, this.cache);
    this.pairing = new ClawPairing({ cfg: this.cfg, api: this.api, cache: this.cache, tokenSecret: opts.tokenSecret, now: () => this.clock.now(), held: this.sandboxes });
    this.share = new WarmShare({ ...common, liveReplicas: () => this.reconciler.liveReplicas });
    this.placer = new Placer({
      ...common,
      claimed: () => this.reconciler.poke(),
      share: this.share,
      writes: this.writes,
      claimFailed: (id, pod, why) => this.claimFailed(id, pod, why),
    });
    this.state = new SharedState({
      ...common,
      held: this.sandboxes,
      adopted: (rec, spec, attach) => this.adoptedSandbox(rec, spec, attach),
      lost: () => this.counters.lost++,
      leading: () => this.reconciler.isLeader,
    });
    this.reconciler = new Reconciler(this.cfg, this.api, this.cache, opts.replicaId, this.clock, this.log, {
      createWarm: (template) => this.placer.createWarmPod(template),
      tokenSecret: opts.tokenSecret,
      harPath: (id) => this.state.harPath(id),
      serversChecked: (alive) => this.state.serversChecked(alive),
    });
  }

  /** Lists and watches the worker pods, takes the replica's Lease, starts reconciling. Idempotent. */
  start(): Promise<void> {
    return (this.startup ??= (async () => {
      await this.cache.start();
      await this.reconciler.start();
      await this.share.start();
    })());
  }

  /** The claim of a pod taken from this replica's share could not be written: its sandbox is lost, the pod deleted
   * (a sandbox may have started on it). */
  private claimFailed(id: string, pod: string, why: string): void {
    if (this.abandoned) return;
    this.log.warn({ sandbox_id: id, pod, why }, 'a claim from the warm pool could not be recorded');
    const sb = this.sandboxes.get(id);
    if (sb?.markLost(why)) this.counters.lost++;
    this.api.deletePod(pod, true).catch((err: unknown) => this.log.warn({ err: String(err), pod }, 'deleting an unrecorded claimed pod failed'));
  }

  /** The backend's settings (read-only). */
  get config(): K8sConfig {
    return this.cfg;
  }

  get replicaId(): string {
    return this.opts.replicaId;
  }

  /** The records of every replica: sandboxes created elsewhere are served here too. */
  get shared(): SharedSandboxes {
    return this.state;
  }

  /** The orchestrator's Claw-Eval checkout, judge and user model, for episodes on claw-eval pods (set before serving). */
  clawEval?: ClawEvalOnOrchestrator;

  supports(type: CreateSandboxBody['type']): boolean {
    return templateFor(this.cfg, type, undefined) !== null;
  }

  /** Back-pressure before a sandbox is accepted: 503 + Retry-After when the API or the cluster is saturated. */
  admit(spec: CreateSandboxBody): void {
    if (this.stopped) throw new GroveError('shutting_down');
    const t = templateFor(this.cfg, spec.type, spec.labels, isClawEval(spec));
    if (!t) throw new GroveError('invalid_request', `No kubernetes template "${spec.labels?.template}" for ${spec.type} sandboxes (templates: ${Object.keys(this.cfg.templates).join(', ')}).`);
    const queued = this.api.throttle.queued;
    if (queued >= this.cfg.api.maxQueue) {
      throw new GroveError('capacity_exhausted', `The Kubernetes API is saturated (${queued} calls queued); retry shortly.`, {
        retryAfter: Math.min(60, 1 + Math.ceil(queued / this.cfg.api.concurrency / 10)),
      });
    }
    // A paired shell takes no pod (an ephemeral container of its claw sandbox's), one of the pod's few.
    const paired = spec.type === 'shell' && spec.claw_sandbox !== undefined;
    if (paired) this.pairing.checkRoom(spec.claw_sandbox!);
    if (!paired && this.placer.starting >= this.cfg.maxStartingPods && !this.placer.hasRoom(t[0])) {
      throw new GroveError('capacity_exhausted', `${this.placer.starting} sandbox pods are still starting; retry shortly.`, { retryAfter: 5 });
    }
  }

  async create(id: string, spec: CreateSandboxBody, extras: { har?: RemoteHar } = {}): Promise<Sandbox> {
    if (this.stopped) throw new GroveError('shutting_down');
    await this.start();
    const t = templateFor(this.cfg, spec.type, spec.labels, isClawEval(spec));
    if (!t) throw new GroveError('unsupported_sandbox_type', `No kubernetes template for ${spec.type} sandboxes.`);
    this.deadlines.set(id, this.clock.now() + this.cfg.readyTimeoutSeconds * 1000);
    const more = { ...extras, log: this.log };
    const sb = this.remoteOf(id, spec, t[0], more);
    this.sandboxes.set(id, sb);
    return sb;
  }

  private remoteOf(id: string, spec: CreateSandboxBody, template: string, extras: ConstructorParameters<typeof RemoteSandbox>[4]): RemoteSandbox {
    if (spec.type === 'shell') return new RemoteShellSandbox(id, spec, template, this, extras);
    if (spec.type === 'claw' && this.cfg.templates[template]?.type === 'claw-eval') return new RemoteClawEvalSandbox(id, spec, template, this, extras ?? {}, this.clawEval, (ep, create) => this.clawEvalTools(ep, create));
    if (spec.type === 'claw') return new RemoteClawSandbox(id, spec, template, this, extras);
    return new RemoteSandbox(id, spec, template, this, extras);
  }

  private adoptedSandbox(rec: SandboxRecord, spec: CreateSandboxBody, attach: Attach): RemoteSandbox {
    this.counters.adopted++;
    return this.remoteOf(rec.id, spec, rec.template, { attach, log: this.log });
  }

  readyDeadline(): number {
    return this.cfg.readyTimeoutSeconds * 1000;
  }

  // --- placement --------------------------------------------------------------------------------------

  async place(sb: RemoteSandbox): Promise<Placement> {
    const deadline = this.deadlines.get(sb.id) ?? this.clock.now() + this.cfg.readyTimeoutSeconds * 1000;
    const now = new Date(this.clock.now()).toISOString();
    const ttl = sb.spec.ttl_seconds ?? this.opts.defaultTtlSeconds;
    const rec: SandboxRecord = {
      v: 1,
      id: sb.id,
      type: sb.type,
      template: sb.templateName,
      owner: this.opts.replicaId,
      state: 'creating',
      worker: null,
      created: now,
      ttl,
      idle: sb.spec.idle_timeout_seconds ?? this.opts.defaultIdleSeconds ?? ttl,
      seen: now,
      labels: sb.spec.labels ?? {},
      ...(sb.spec.type === 'shell' && sb.spec.image ? { image: sb.spec.image } : {}),
      ...(sb.spec.type === 'browser' && sb.spec.record ? { recorded: true as const } : {}),
      ...(sb.spec.type === 'browser' && sb.spec.record_har ? { har: true as const } : {}),
    };
    const of = this.toolsFor.get(sb.id);
    if (of !== undefined) rec.of = of;
    const paired = ClawPairing.pairedWith(sb.spec);
    // A paired shell: its own worker in an ephemeral container of the claw sandbox's pod (k8s/paired-shell.ts).
    const shell: PairedShell | undefined = paired !== undefined && sb.spec.type === 'shell' ? await this.pairing.addShell(rec, paired) : undefined;
    const name = paired !== undefined ? await this.pairing.placeBeside(rec, paired) : await this.placer.place(rec, new Date(this.clock.now() + ttl * 1000).toISOString());
    this.podOf.set(sb.id, name);
    await this.placer.waitReady(name, deadline, sb.aborted.signal);
    const placement = placementOf(this.cache.get(name)!, this.cfg, this.opts.tokenSecret, rec);
    if (!placement) throw new GroveError('worker_lost', `Worker pod ${name} went away as it became ready.`);
    if (shell) await this.pairing.waitShell(placement, shell, deadline, sb.aborted.signal);
    return placement;
  }

  /** The shell pod of a Claw-Eval episode's sandbox tools (claw-eval-tools.ts): a new one (`create`, by the replica
   * creating the episode), else the one its record names (another replica serving the episode). */
  async clawEvalTools(episode: RemoteSandbox, create: boolean): Promise<ToolsShell> {
    const d = {
      cfg: this.cfg,
      api: this.api,
      cache: this.cache,
      tokenSecret: this.opts.tokenSecret,
      shared: this.state,
      create: (id: string, spec: ShellCreateOptions, of: string) => {
        this.toolsFor.set(id, of);
        return this.remoteOf(id, spec, spec.labels!.template!, { log: this.log }) as RemoteShellSandbox;
      },
    };
    if (!create) return attachToolsShell(d, episode);
    return openToolsShell(d, episode, episode.spec.ttl_seconds ?? this.opts.defaultTtlSeconds);
  }

  /** What a paired shell's worker may be told about its network: the install's (its pod's NetworkPolicy). */
  get podNetwork(): K8sConfig['network'] {
    return this.cfg.network;
  }

  /** The worker created the sandbox: its record turns `ready` (with the worker's id) before anyone is told. */
  async started(sb: RemoteSandbox, workerId: string): Promise<void> {
    const name = this.podOf.get(sb.id);
    if (!name) throw new GroveError('sandbox_closed', `Sandbox ${sb.id} was closed while starting.`);
    if (this.placer.claimedLocally.has(sb.id)) {
      // Claimed from memory: the record turns ready in the write after the claim (merged with it when that one is
      // still queued); other replicas wait for it (SharedSandboxes.appear), this one answers now.
      void this.writes
        .write(name, (p) => {
          const r = podRecords(p).get(sb.id);
          return r && r.state === 'creating' ? { annotations: { [recordKey(sb.id)]: encodeRecord({ ...r, state: 'ready', worker: workerId }) } } : null;
        })
        .catch(() => undefined);
      return;
    }
    let closed = false;
    const pod = await updatePod(this.api, this.cache, name, (p) => {
      const r = podRecords(p).get(sb.id);
      if (r && isLive(r)) return { annotations: { [recordKey(sb.id)]: encodeRecord({ ...r, state: 'ready', worker: workerId }) } };
      closed = true;
      return null;
    });
    if (!pod || closed) throw new GroveError('sandbox_closed', `Sandbox ${sb.id} was closed while starting.`);
  }

  async release(sb: RemoteSandbox, placement: Placement | null): Promise<void> {
    if (this.abandoned) return;
    const id = sb.id;
    this.sandboxes.delete(id);
    this.deadlines.delete(id);
    const reason = this.state.reasons.get(id) ?? 'deleted';
    this.state.forget(id);
    const elsewhere = this.state.closedElsewhere.delete(id);
    const name = placement?.pod ?? this.podOf.get(id) ?? this.state.record(id)?.pod;
    this.podOf.delete(id);
    this.toolsFor.delete(id);
    // A sandbox placed beside a claw sandbox is a guest of its pod (a paired shell's worker is ended), the pod stays.
    const guest = await this.pairing.release(id, name ? this.cache.get(name) : undefined, elsewhere, this.cfg.leaseDurationSeconds * 1000);
    // A Claw-Eval episode's tools shell goes with it, whichever replica created it (claw-eval-tools.ts).
    if (sb instanceof RemoteClawEvalSandbox) {
      await dropToolsShells(this, id).catch((err: unknown) => this.log.warn({ err: String(err), sandbox_id: id }, 'deleting the sandbox tools\' shell pod failed'));
    }
    this.placer.claimedLocally.delete(id);
    if (!name || elsewhere) return;
    // The claim and ready writes of a claim from memory land before the record is closed.
    await this.writes.flushed(name);
    try {
      const t = this.cfg.templates[sb.templateName];
      if (t?.placement === 'pod' && !guest) {
        if (await this.api.deletePod(name)) this.counters.podsDeleted++;
        return;
      }
      // The record becomes a tombstone (others answer 410 with the reason); an emptied worker is deleted, unless
      // another replica placed a sandbox on it meanwhile (the delete's resourceVersion precondition).
      const now = this.clock.now();
      const pod = await updatePod(this.api, this.cache, name, (p) => {
        const r = podRecords(p).get(id);
        if (!r || !isLive(r)) return null;
        return { annotations: { ...pruneTombstones(p, now, id), [recordKey(id)]: encodeRecord(closedRecord(r, reason, now)) } };
      });
      if (pod && liveCount(pod) === 0 && !pod.metadata?.deletionTimestamp) {
        if (await this.api.deletePod(name, false, pod.metadata!.resourceVersion)) this.counters.podsDeleted++;
      }
    } catch (err) {
      if (err instanceof KubeError && err.status === 409) return;
      // The reconciler deletes what is left (claimed pods without live records).
      this.log.warn({ err: String(err), sandbox_id: id, pod: name }, 'releasing a sandbox on its worker pod failed');
    }
  }

  /** Graceful: gives the Leases up and stops watching; the pods stay with their records for the other replicas. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.share.stop();
    await this.share.giveBack();
    await this.reconciler.stop(true);
    this.state.stop();
    this.cache.stop();
  }

  /** Stops all background work and leaves every pod and Lease as it is (a crash, for tests of the reconciler):
   * the registry's shutdown then closes nothing on the workers either. */
  async abandon(): Promise<void> {
    this.stopped = true;
    this.abandoned = true;
    this.state.abandoned = true;
    this.writes.stop();
    this.share.stop();
    await this.reconciler.stop(false);
    this.state.stop();
    this.cache.stop();
  }

  stats(): Record<string, number> {
    const workers = this.cache.all().filter((p) => p.metadata?.labels?.[L.state] === 'claimed').length;
    return {
      k8s_warm_hits: this.placer.counters.warmHits,
      k8s_warm_misses: this.placer.counters.warmMisses,
      k8s_warm_local_claims: this.share.counters.localClaims,
      k8s_warm_reserved: this.share.counters.reserved,
      k8s_warm_reserve_conflicts: this.share.counters.reserveConflicts,
      k8s_pods_created: this.placer.counters.podsCreated,
      k8s_pods_deleted: this.counters.podsDeleted,
      k8s_pods_starting: this.placer.starting,
      k8s_workers: workers,
      k8s_sandboxes_held: this.sandboxes.size,
      k8s_sandboxes_adopted: this.counters.adopted,
      k8s_sandboxes_lost: this.counters.lost,
      k8s_api_calls: this.api.throttle.calls,
      k8s_api_retries: this.api.throttle.retried,
      k8s_api_queued: this.api.throttle.queued,
      k8s_watch_relists: this.cache.relists,
      k8s_leader: this.reconciler.isLeader ? 1 : 0,
      k8s_orphans_deleted: this.reconciler.orphansDeleted,
      k8s_sandboxes_expired: this.reconciler.sandboxesExpired,
    };
  }
}

/** A claw sandbox of a Claw-Eval task: placed on a claw-eval template's pod. */
function isClawEval(spec: CreateSandboxBody): boolean {
  return spec.type === 'claw' && (spec as { claw_eval_task?: unknown }).claw_eval_task !== undefined;
}
