// The sandbox records of every replica, as this replica's registry sees them (SharedSandboxes): an index sandbox
// id → pod kept from the one pod watch (no API call per lookup), adoption of sandboxes other replicas created,
// heartbeats written to the record (coalesced) and forwarded to the worker, and the transitions other replicas or
// the leader write (closed, pod gone, pod failed) turned into the registry's closes.
import type { V1Pod } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { CreateSandboxBody } from '../protocol/sandbox.ts';
import type { Logger } from '../sandbox/log.ts';
import type { AdoptedSandbox, ClosedUnheld, CloseReason, Clock, SharedSandboxes } from '../sandbox/types.ts';
import type { K8sConfig } from './config.ts';
import type { KubeApi } from './kube.ts';
import { L } from './labels.ts';
import { LEASE_KIND_LABEL, leaseExpired } from './leases.ts';
import type { PodCache } from './pod-cache.ts';
import { fresh, updatePod } from './pod-writer.ts';
import { podCondition } from './pods.ts';
import { encodeRecord, isLive, podRecords, recordKey, type SandboxRecord } from './records.ts';
import type { Attach, Attached, Placement } from './remote-placement.ts';
import type { RemoteSandbox } from './remote-sandbox.ts';
import { workerToken } from './token.ts';

export interface SharedDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  replicaId: string;
  tokenSecret: string;
  clock: Clock;
  log: Logger;
  /** The sandboxes this replica holds (created or adopted), by id. */
  held: Map<string, RemoteSandbox>;
  /** Builds the sandbox object of an adopted record. */
  adopted(rec: SandboxRecord, spec: CreateSandboxBody, attach: Attach): RemoteSandbox;
  /** A sandbox held here lost its pod (failed under it). */
  lost(): void;
  /** This replica is the leader (it expires records and deletes pods). */
  leading(): boolean;
}

/** Where a worker pod is reached: its IP, the container's `http` port, the token derived from its name; a paired
 * shell's record names its own worker (an ephemeral container's port and token, k8s/paired-shell.ts). */
export function placementOf(pod: V1Pod, cfg: K8sConfig, secret: string, rec?: Pick<SandboxRecord, 'paired'>): Placement | null {
  const c = podCondition(pod);
  if (c.state !== 'ready') return null;
  const port = rec?.paired?.port ?? pod.spec?.containers?.[0]?.ports?.find((p) => p.name === 'http')?.containerPort ?? cfg.workerPort;
  const host = c.ip.includes(':') ? `[${c.ip}]` : c.ip;
  const name = pod.metadata!.name!;
  return { pod: name, url: `http://${host}:${port}`, token: workerToken(secret, rec?.paired ? `${name}/${rec.paired.container}` : name) };
}

export class SharedState implements SharedSandboxes {
  private readonly podOf = new Map<string, string>();
  private readonly byPod = new Map<string, Map<string, SandboxRecord>>();
  private readonly listeners: Array<(id: string, reason: CloseReason) => void> = [];
  private readonly unheld: Array<(id: string, c: ClosedUnheld) => void> = [];
  private readonly checked: Array<(alive: (server: string) => boolean, recorded: string[]) => Promise<void>> = [];
  private harTo?: (id: string) => string | undefined;
  private aliveBefore?: Set<string>;
  /** Why the registry is closing a sandbox (the reason its tombstone records). */
  readonly reasons = new Map<string, CloseReason>();
  /** Sandboxes closed by someone else: their release writes nothing. */
  readonly closedElsewhere = new Set<string>();
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly seen = new Map<string, { at: number; written: number; timer: NodeJS.Timeout | null }>();
  /** Set by KubernetesBackend.abandon() (a simulated crash): nothing is closed at shutdown. */
  abandoned = false;

  constructor(private readonly d: SharedDeps) {
    d.cache.subscribe((pod, type) => this.onPod(pod, type));
  }

  /** The record of a sandbox, as last seen. */
  record(id: string): { pod: string; rec: SandboxRecord } | null {
    const pod = this.podOf.get(id);
    const rec = pod ? this.byPod.get(pod)?.get(id) : undefined;
    return pod && rec ? { pod, rec } : null;
  }

  /** The shell pod running the sandbox tools of Claw-Eval episode `episode` (its record's `of`), when live. */
  toolsOf(episode: string): { pod: string; rec: SandboxRecord } | null {
    for (const [pod, recs] of this.byPod) for (const r of recs.values()) if (r.of === episode && isLive(r)) return { pod, rec: r };
    return null;
  }

  adopt(id: string): AdoptedSandbox | null {
    const found = this.record(id);
    // An episode's tools shell (`of`) is no sandbox of the API: never served by its id.
    if (!found || found.rec.of !== undefined || !isLive(found.rec) || this.d.held.has(id)) return null;
    const { rec, pod } = found;
    const recording = rec.recorded ? { record: true, ...(rec.har ? { record_har: true } : {}) } : {};
    const spec = { type: rec.type, labels: rec.labels, ttl_seconds: rec.ttl, idle_timeout_seconds: rec.idle, ...recording } as CreateSandboxBody;
    const now = this.attachNow(id);
    const sb = this.d.adopted(rec, spec, now ?? ((signal) => this.attachLater(id, signal)));
    this.d.held.set(id, sb);
    const c = podCondition(this.d.cache.get(pod) ?? {});
    if (rec.state === 'ready' && !now) sb.markLost(c.state === 'failed' ? c.message : `worker pod ${pod} is gone`);
    return {
      sandbox: sb,
      type: rec.type,
      labels: rec.labels,
      createdAt: Date.parse(rec.created),
      lastUsedAt: Date.parse(rec.seen),
      ttlMs: rec.ttl * 1000,
      idleMs: rec.idle * 1000,
      creating: rec.state === 'creating',
      recorded: rec.recorded === true,
    };
  }

  private attachNow(id: string): Attached | null {
    const found = this.record(id);
    if (!found || found.rec.state !== 'ready' || !found.rec.worker) return null;
    const pod = this.d.cache.get(found.pod);
    const placement = pod ? placementOf(pod, this.d.cfg, this.d.tokenSecret, found.rec) : null;
    return placement ? { placement, workerId: found.rec.worker } : null;
  }

  /** A record still `creating` on another replica: ready when that replica records it ready. */
  private attachLater(id: string, signal: AbortSignal): Promise<Attached> {
    return new Promise<Attached>((resolve, reject) => {
      const waiters = this.waiting.get(id) ?? new Set<() => void>();
      this.waiting.set(id, waiters);
      const done = (err: GroveError | null, a?: Attached) => {
        waiters.delete(check);
        if (waiters.size === 0) this.waiting.delete(id);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(a!);
      };
      const check = () => {
        const a = this.attachNow(id);
        if (a) return done(null, a);
        const found = this.record(id);
        if (!found || !isLive(found.rec)) done(new GroveError('sandbox_closed', `Sandbox ${id} was closed while another replica created it.`));
      };
      const onAbort = () => done(new GroveError('sandbox_closed', `Sandbox ${id} was closed while starting.`));
      const timer = setTimeout(
        () => done(new GroveError('pod_start_timeout', `Sandbox ${id} was not ready after ${this.d.cfg.readyTimeoutSeconds} s.`)),
        this.d.cfg.readyTimeoutSeconds * 1000,
      );
      waiters.add(check);
      signal.addEventListener('abort', onAbort);
      check();
    });
  }

  /** A consistent read for an id this replica does not know yet, or knows only as `creating` (its cache may lag
   * the replica that wrote it): a GET of its pod, or a shared, rate-limited LIST (PodCache.sync). */
  async refresh(id: string): Promise<void> {
    const known = this.record(id);
    try {
      if (known) await fresh(this.d.api, this.d.cache, known.pod);
      else await this.d.cache.sync();
    } catch (err) {
      this.d.log.warn({ err: String(err), sandbox_id: id }, 'reading the sandbox records failed');
    }
    // An adopted sandbox whose record the read settled (ready with its placement, or closed) was told by the
    // waiters run on the update (attachLater); its ready() settles in microtasks, before this returns.
    const held = this.d.held.get(id);
    const found = this.record(id);
    if (held && (this.attachNow(id) || !found || !isLive(found.rec))) await held.ready().catch(() => undefined);
  }

  /** Waits for the record of a sandbox another replica just accepted (its placement is written right after). */
  appear(id: string, ms: number): Promise<boolean> {
    if (this.record(id)?.rec.of !== undefined) return Promise.resolve(false);
    if (this.record(id)) return Promise.resolve(true);
    const limit = Math.min(ms, this.d.cfg.leaseDurationSeconds * 1000);
    return new Promise<boolean>((resolve) => {
      const waiters = this.waiting.get(id) ?? new Set<() => void>();
      this.waiting.set(id, waiters);
      const done = (found: boolean) => {
        waiters.delete(check);
        if (waiters.size === 0) this.waiting.delete(id);
        clearTimeout(timer);
        resolve(found);
      };
      const check = () => void (this.record(id) && done(this.record(id)!.rec.of === undefined));
      const timer = setTimeout(() => done(false), limit);
      waiters.add(check);
    });
  }

  ids(): string[] {
    const out: string[] = [];
    for (const recs of this.byPod.values()) for (const r of recs.values()) if (isLive(r) && r.of === undefined) out.push(r.id);
    return out;
  }

  lastUsed(id: string): number | undefined {
    const r = this.record(id)?.rec;
    return r ? Date.parse(r.seen) : undefined;
  }

  closing(id: string, reason: CloseReason): void {
    if (this.d.held.has(id)) this.reasons.set(id, reason);
  }

  onClosed(fn: (id: string, reason: CloseReason) => void): void {
    this.listeners.push(fn);
  }

  onClosedUnheld(fn: (id: string, c: ClosedUnheld) => void): void {
    this.unheld.push(fn);
  }

  get serverId(): string {
    return this.d.replicaId;
  }

  onServersChecked(fn: (alive: (server: string) => boolean, recorded: string[]) => Promise<void>): void {
    this.checked.push(fn);
  }

  /** The leader's pass found these replicas alive (their Lease current, or lapsed only recently). The recordings are
   * looked at when this replica starts leading and when a replica was lost since the last look. */
  async serversChecked(alive: Set<string>): Promise<void> {
    const before = this.aliveBefore;
    this.aliveBefore = alive;
    if (!this.checked.length || (before && [...before].every((s) => alive.has(s)))) return;
    const recorded = [...this.byPod.values()].flatMap((recs) => [...recs.values()].filter((r) => isLive(r) && r.recorded).map((r) => r.id));
    for (const fn of this.checked) await fn((s) => alive.has(s), recorded);
  }

  harDestination(fn: (id: string) => string | undefined): void {
    this.harTo = fn;
  }

  /** Where the leader puts the recorded HAR of a sandbox it closes (undefined: nowhere, it stays on the worker). */
  harPath(id: string): string | undefined {
    return this.harTo?.(id);
  }

  /** The leader closed (expired) a recorded sandbox no replica alive may hold, or its pod went: told here once. A
   * close by `DELETE` is the deleting replica's, which holds it. */
  private closedUnheld(id: string, was: SandboxRecord | undefined, now: SandboxRecord | undefined, gone: boolean): void {
    if (!was || !isLive(was) || !was.recorded || !this.d.leading()) return;
    if (!gone && (!now || isLive(now) || now.reason === 'deleted')) return;
    for (const fn of this.unheld) fn(id, { reason: now?.reason ?? 'deleted', recorded: true });
  }

  /** Written to the record at most every min(30 s, idle / 10) per sandbox; forwarded to the worker at once. */
  heartbeat(id: string, at: number): void {
    const sb = this.d.held.get(id);
    if (sb && sb.status !== 'creating' && !sb.lostReason) {
      sb.heartbeatWorker().catch((err: unknown) => this.d.log.warn({ err: String(err), sandbox_id: id }, 'forwarding a heartbeat to the worker failed'));
    }
    const rec = this.record(id)?.rec;
    if (!rec) return;
    const s = this.seen.get(id) ?? { at: 0, written: 0, timer: null };
    this.seen.set(id, s);
    s.at = Math.max(s.at, at);
    if (s.timer) return;
    const every = Math.min(30_000, Math.max(1000, (rec.idle * 1000) / 10));
    s.timer = setTimeout(() => void this.writeSeen(id), Math.max(0, s.written + every - this.d.clock.now()));
    s.timer.unref();
  }

  private async writeSeen(id: string): Promise<void> {
    const s = this.seen.get(id);
    const pod = this.podOf.get(id);
    if (!s || !pod) return void this.seen.delete(id);
    s.timer = null;
    s.written = this.d.clock.now();
    const at = s.at;
    try {
      await updatePod(this.d.api, this.d.cache, pod, (p) => {
        const r = podRecords(p).get(id);
        if (!r || !isLive(r) || Date.parse(r.seen) >= at) return null;
        return { annotations: { [recordKey(id)]: encodeRecord({ ...r, seen: new Date(at).toISOString() }) } };
      });
    } catch (err) {
      this.d.log.warn({ err: String(err), sandbox_id: id }, 'recording a heartbeat failed');
    }
  }

  /** At shutdown: are other replicas alive (their owner Leases current) to serve the sandboxes on? */
  async handOver(): Promise<boolean> {
    if (this.abandoned) return true;
    const leases = await this.d.api.listLeases(`${LEASE_KIND_LABEL}=owner,${L.instance}=${this.d.cfg.instance}`);
    const now = this.d.clock.now();
    return leases.some((l) => l.spec?.holderIdentity !== this.d.replicaId && !leaseExpired(l, now));
  }

  /** The sandbox is no longer held here: a pending heartbeat write is dropped. */
  forget(id: string): void {
    const s = this.seen.get(id);
    if (s?.timer) clearTimeout(s.timer);
    this.seen.delete(id);
    this.reasons.delete(id);
  }

  stop(): void {
    for (const s of this.seen.values()) if (s.timer) clearTimeout(s.timer);
    this.seen.clear();
  }

  private onPod(pod: V1Pod, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    const name = pod.metadata!.name!;
    const gone = type === 'DELETED' || !!pod.metadata?.deletionTimestamp;
    const before = this.byPod.get(name) ?? new Map<string, SandboxRecord>();
    const after = type === 'DELETED' ? new Map<string, SandboxRecord>() : podRecords(pod);
    for (const id of before.keys()) if (!after.has(id) && this.podOf.get(id) === name) this.podOf.delete(id);
    for (const id of after.keys()) this.podOf.set(id, name);
    if (type === 'DELETED') this.byPod.delete(name);
    else this.byPod.set(name, after);
    const c = podCondition(pod);
    const failed = c.state === 'failed' && c.code !== 'pod_unschedulable';
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      for (const w of this.waiting.get(id) ?? []) w();
      const sb = this.d.held.get(id);
      const was = before.get(id);
      const now = after.get(id);
      if (!sb) {
        this.closedUnheld(id, was, now, gone);
        continue;
      }
      if (!gone && now && isLive(now)) {
        if (failed && sb.status !== 'creating' && sb.markLost(c.message)) this.d.lost();
        continue;
      }
      // Closed by another replica or the leader, or its pod went away: closed here too.
      if (!was || !isLive(was) || this.closedElsewhere.has(id)) continue;
      const reason: CloseReason = now?.reason ?? 'deleted';
      this.closedElsewhere.add(id);
      sb.markLost(gone && !now?.reason ? `worker pod ${name} was deleted` : `closed (${reason})`);
      for (const fn of this.listeners) fn(id, reason);
    }
  }
}
