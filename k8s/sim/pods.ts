// The simulated API server's v1 Pods: create (schema-validated, 409 on a taken name), get, list (label selectors),
// watch (from a resourceVersion, 410 Gone as an ERROR event for a compacted one, timeoutSeconds expiry), delete
// (graceful: deletionTimestamp, then DELETED once the kubelet stopped it; resourceVersion preconditions) and patch
// of labels and annotations (merge, strategic-merge and JSON patch; 409 on a stale metadata.resourceVersion).
// Every watch event is validated against the Kubernetes schema. The kubelet runs what is created.
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { validateK8sObject, validateWatchEvent } from './schema.ts';
import { parseSelector, type Selector } from './selector.ts';
import { applyPatch, PATCH_TYPES } from './patch.ts';
import { ephemeralStatus, patchedEphemeralContainers } from './ephemeral.ts';
import { exitedStatus, startedStatus, type Kubelet, type KubeletResult } from './pod-status.ts';
import { failure, k8sTime, StatusError, type Answer, type Obj, type SimWire } from './wire.ts';

interface Watcher {
  res: http.ServerResponse;
  selector: Selector;
}

export class SimPods {
  private readonly pods = new Map<string, Obj>(); // ns/name
  /** Pod events by resourceVersion; events at or below `compactedRv` are gone (410). */
  private history: Array<{ rv: number; type: string; pod: Obj }> = [];
  private compactedRv = 0;
  private readonly watchers = new Set<Watcher>();

  constructor(
    private readonly wire: SimWire,
    private readonly kubelet: () => Kubelet,
    /** Collects watch events that fail the schema (undefined: not validated). */
    private readonly invalid?: string[],
  ) {}

  all(): Obj[] {
    return [...this.pods.values()];
  }

  get watchCount(): number {
    return this.watchers.size;
  }

  list(ns: string, labelSelector: string | undefined): Answer {
    this.wire.note('LIST pods');
    const sel = parseSelector(labelSelector ?? null);
    const items = this.all().filter((p) => p.metadata.namespace === ns && sel(p.metadata.labels)).map((p) => structuredClone(p));
    return { code: 200, body: { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: this.wire.currentRv() }, items } };
  }

  create(ns: string, pod: Obj): Answer {
    this.wire.note('CREATE pods');
    try {
      validateK8sObject(pod);
    } catch (err) {
      throw new StatusError(422, 'Invalid', `Pod is invalid: ${(err as Error).message}`);
    }
    const k = `${ns}/${pod.metadata.name}`;
    if (this.pods.has(k)) throw new StatusError(409, 'AlreadyExists', `pods "${pod.metadata.name}" already exists`, { name: pod.metadata.name, kind: 'pods' });
    pod.metadata = { ...pod.metadata, namespace: ns, uid: randomUUID(), creationTimestamp: k8sTime() };
    pod.status = { phase: 'Pending', qosClass: 'Burstable' };
    this.pods.set(k, pod);
    this.bump(pod, 'ADDED');
    void this.schedule(k);
    return { code: 201, body: pod };
  }

  get(ns: string, name: string): Answer {
    this.wire.note('GET pods');
    return { code: 200, body: this.find(ns, name) };
  }

  /** DeleteOptions.preconditions: the real server refuses (409) when the object is not at that version. */
  remove(ns: string, name: string, options: Obj | undefined): Answer {
    this.wire.note('DELETE pods');
    const pod = this.find(ns, name);
    const want = options?.preconditions?.resourceVersion;
    if (want !== undefined && want !== pod.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": Precondition failed: ResourceVersion in precondition: ${want}, ResourceVersion in object meta: ${pod.metadata.resourceVersion}`, { name, kind: 'pods' });
    }
    if (!pod.metadata.deletionTimestamp) {
      pod.metadata.deletionTimestamp = k8sTime();
      pod.metadata.deletionGracePeriodSeconds = 10;
      this.bump(pod, 'MODIFIED');
      const key = `${ns}/${name}`;
      void this.kubelet().stop(pod).catch(() => undefined).finally(() => {
        if (this.pods.get(key) !== pod) return;
        this.pods.delete(key);
        this.bump(pod, 'DELETED');
      });
    }
    return { code: 200, body: pod };
  }

  patch(ns: string, name: string, contentType: string, patch: unknown): Answer {
    this.wire.note('PATCH pods');
    if (!PATCH_TYPES.has(contentType)) throw unsupportedMediaType();
    const pod = this.find(ns, name);
    let next: Obj;
    try {
      next = applyPatch(contentType, pod, patch);
    } catch (err) {
      throw new StatusError(422, 'Invalid', String(err));
    }
    const wanted = contentType === 'application/json-patch+json' ? undefined : (patch as Obj | null)?.metadata?.resourceVersion;
    if (wanted !== undefined && wanted !== pod.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'pods' });
    }
    pod.metadata.labels = next.metadata?.labels;
    pod.metadata.annotations = next.metadata?.annotations;
    this.bump(pod, 'MODIFIED');
    return { code: 200, body: pod };
  }

  /** PATCH of the ephemeralcontainers subresource: new ephemeral containers are added and started by the kubelet. */
  patchEphemeral(ns: string, name: string, contentType: string, patch: unknown): Answer {
    this.wire.note('PATCH pods/ephemeralcontainers');
    if (!PATCH_TYPES.has(contentType)) throw unsupportedMediaType();
    const pod = this.find(ns, name);
    const wanted = contentType === 'application/json-patch+json' ? undefined : (patch as Obj | null)?.metadata?.resourceVersion;
    if (wanted !== undefined && wanted !== pod.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'pods' });
    }
    const after = patchedEphemeralContainers(pod, contentType, patch);
    const added = after.slice((pod.spec.ephemeralContainers ?? []).length);
    if (added.length === 0) return { code: 200, body: pod };
    pod.spec.ephemeralContainers = after;
    pod.status.ephemeralContainerStatuses = [...(pod.status.ephemeralContainerStatuses ?? []), ...added.map((c) => ephemeralStatus(c, 'waiting'))];
    this.bump(pod, 'MODIFIED');
    const kubelet = this.kubelet();
    for (const c of added) {
      if (!kubelet.startEphemeral || pod.status.phase !== 'Running') continue;
      const set = (state: Parameters<typeof ephemeralStatus>[1]) => {
        if (this.pods.get(`${ns}/${name}`) !== pod || pod.metadata.deletionTimestamp) return;
        pod.status.ephemeralContainerStatuses = pod.status.ephemeralContainerStatuses.map((s: Obj) => (s.name === c.name ? ephemeralStatus(c, state) : s));
        this.bump(pod, 'MODIFIED');
      };
      kubelet.startEphemeral(structuredClone(pod), c, (exitCode) => set({ exitCode })).then(() => set('running'), () => set({ exitCode: 128 }));
    }
    return { code: 200, body: pod };
  }

  /** A watch on a response the server handed over (hijacked): newline-delimited events until closed or timed out. */
  watch(res: http.ServerResponse, ns: string, q: { labelSelector?: string; resourceVersion?: string; timeoutSeconds?: number }): void {
    this.wire.note('WATCH pods');
    const sel = parseSelector(q.labelSelector ?? null);
    const from = Number(q.resourceVersion || '0');
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const w: Watcher = { res, selector: sel };
    if (from !== 0 && from <= this.compactedRv) {
      // The real server answers 200 and then one ERROR event carrying a 410 Status.
      this.emit(w, 'ERROR', failure(410, 'Expired', `too old resource version: ${from} (${this.compactedRv})`));
      res.end();
      return;
    }
    if (from === 0) {
      for (const p of this.pods.values()) if (p.metadata.namespace === ns && sel(p.metadata.labels)) this.emit(w, 'ADDED', structuredClone(p));
    } else {
      for (const e of this.history) if (e.rv > from && sel(e.pod.metadata.labels)) this.emit(w, e.type, e.pod);
    }
    this.watchers.add(w);
    const timer = q.timeoutSeconds ? setTimeout(() => res.end(), q.timeoutSeconds * 1000) : null;
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      this.watchers.delete(w);
    });
  }

  /** Cuts every open watch connection. */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Compacts through the current revision: a watch resumed from it or anything older gets 410 Gone. */
  compact(): void {
    this.compactedRv = Number(this.wire.currentRv());
    this.history = [];
  }

  /** Kubelet side: updates a pod's status. */
  updateStatus(ns: string, name: string, status: Obj): void {
    const pod = this.pods.get(`${ns}/${name}`);
    if (!pod) return;
    pod.status = { ...pod.status, ...status };
    this.bump(pod, 'MODIFIED');
  }

  /** Kubelet side: the worker of a pod exited on its own (killed). */
  workerExited(ns: string, name: string, exitCode: number, signal: string | null): void {
    const pod = this.pods.get(`${ns}/${name}`);
    if (!pod || pod.metadata.deletionTimestamp) return;
    this.updateStatus(ns, name, exitedStatus(pod, exitCode, signal));
  }

  private find(ns: string, name: string): Obj {
    const pod = this.pods.get(`${ns}/${name}`);
    if (!pod) throw new StatusError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    return pod;
  }

  private bump(pod: Obj, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    pod.metadata.resourceVersion = this.wire.nextRv();
    const rv = Number(pod.metadata.resourceVersion);
    const snap = structuredClone(pod);
    this.history.push({ rv, type, pod: snap });
    if (this.history.length > 5000) {
      this.compactedRv = this.history[999]!.rv - 1;
      this.history = this.history.slice(1000);
    }
    for (const w of this.watchers) if (w.selector(snap.metadata.labels)) this.emit(w, type, snap);
  }

  private emit(w: Watcher, type: string, object: Obj): void {
    const ev = { type, object };
    if (this.invalid) {
      try {
        validateWatchEvent(ev);
      } catch (err) {
        this.invalid.push(`watch event ${type}: ${(err as Error).message}`);
      }
    }
    w.res.write(JSON.stringify(ev) + '\n');
  }

  private async schedule(key: string): Promise<void> {
    const pod = this.pods.get(key)!;
    let r: KubeletResult;
    try {
      r = await this.kubelet().start(pod);
    } catch {
      r = { fail: 'never_ready' };
    }
    if (this.pods.get(key) !== pod || pod.metadata.deletionTimestamp) return;
    this.updateStatus(pod.metadata.namespace, pod.metadata.name, startedStatus(pod, r));
  }
}

/** The real server's answer to a body in a media type it does not take. */
export function unsupportedMediaType(): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${[...PATCH_TYPES].join(', ')}, application/apply-patch+yaml`);
}
