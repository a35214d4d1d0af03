// A simulated Kubernetes API server for the tests and the k8s bench: the pod and Lease subset of the real REST API,
// in the real wire format. Pods: create, get, list (label selectors), watch (resourceVersion, 410 Gone for a
// compacted one, timeoutSeconds expiry), delete (graceful: deletionTimestamp, then DELETED; resourceVersion
// preconditions), patch (merge,
// strategic-merge and JSON patch; 415 for any other content type; 409 on a stale metadata.resourceVersion).
// Leases: create, get, list, replace (409 on conflict), delete. Failures answer a v1 Status as the real server
// does. Every object it sends — bodies and watch events — is validated against the Kubernetes OpenAPI schema
// (kubernetes-models); violations are collected in `invalid` for the tests to assert empty.
// A "kubelet" (kubelets.ts) schedules pods: it starts a worker and reports its IP, or fails the pod.
// Leases live in leases.ts, label selectors in selector.ts, patch bodies in patch.ts, pod statuses in pod-status.ts.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { validateK8sObject, validateWatchEvent } from './schema.ts';
import { parseSelector, type Selector } from './selector.ts';
import { applyPatch, PATCH_TYPES } from './patch.ts';
import { exitedStatus, startedStatus, type Kubelet, type KubeletResult } from './pod-status.ts';
import { SimLeases } from './leases.ts';
import { failure, k8sTime, readBody, type Obj, type SimWire } from './wire.ts';

export type { Kubelet } from './pod-status.ts';

interface Fault {
  status: number;
  times: number;
  retryAfter?: number;
  match: (method: string, path: string) => boolean;
}

interface Watcher {
  res: http.ServerResponse;
  selector: Selector;
  kind: 'pods';
}

export class KubeSim {
  readonly token = 'sim-token-' + randomUUID();
  private server: http.Server | null = null;
  private rv = 1;
  private readonly pods = new Map<string, Obj>(); // ns/name
  private readonly leases: SimLeases;
  /** Pod events by resourceVersion; events at or below `compactedRv` are gone (410). */
  private history: Array<{ rv: number; type: string; pod: Obj }> = [];
  private compactedRv = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly faults: Fault[] = [];
  /** Schema violations in what the server sent (should stay empty). */
  readonly invalid: string[] = [];
  /** Requests by "VERB kind" (e.g. "PATCH pods", "WATCH pods"). */
  readonly requests = new Map<string, number>();
  /** Most non-watch requests being served at once (the client's concurrency bound shows here). */
  maxInFlight = 0;
  private inFlight = 0;
  url = '';

  constructor(
    public kubelet: Kubelet,
    private readonly opts: { validate?: boolean; /** Added before every non-watch answer, as a real server's latency. */ latencyMs?: number } = {},
  ) {
    const wire: SimWire = {
      send: (res, code, body, headers) => this.send(res, code, body, headers),
      note: (key) => this.note(key),
      check: (obj, what) => this.check(obj, what),
      nextRv: () => String(++this.rv),
      currentRv: () => String(this.rv),
    };
    this.leases = new SimLeases(wire);
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const counted = !(req.url ?? '').includes('watch=true');
      if (counted) this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
      res.on('close', () => counted && this.inFlight--);
      const delay = counted ? (this.opts.latencyMs ?? 0) : 0;
      (delay > 0 ? new Promise((r) => setTimeout(r, delay)) : Promise.resolve())
        .then(() => this.handle(req, res)).catch((err) => this.send(res, 500, failure(500, 'InternalError', String(err))));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    await Promise.allSettled([...this.pods.values()].map((p) => this.kubelet.stop(p)));
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server?.closeAllConnections();
  }

  /** A kubeconfig the real client uses to reach this server (bearer token auth). */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'sim', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'grove', token: this.token }],
      contexts: [{ name: 'sim', cluster: 'sim', user: 'grove', namespace: 'grove' }],
      currentContext: 'sim',
    });
    return kc;
  }

  // --- fault injection -------------------------------------------------------------------------------------

  /** The next `times` requests matching answer `status` (429 with Retry-After when given). */
  failNext(times: number, status: number, opts: { retryAfter?: number; method?: string; path?: RegExp } = {}): void {
    this.faults.push({ status, times, retryAfter: opts.retryAfter, match: (m, p) => (!opts.method || opts.method === m) && (!opts.path || opts.path.test(p)) });
  }

  /** Cuts every open watch connection (as a load balancer or an API server restart would). */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Compacts through the current revision: a watch resumed from it or anything older gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  get watchCount(): number {
    return this.watchers.size;
  }

  listPodObjects(): Obj[] {
    return [...this.pods.values()].map((p) => structuredClone(p));
  }

  count(key: string): number {
    return this.requests.get(key) ?? 0;
  }

  /** Kubelet side: updates a pod's status (e.g. its container was killed). */
  updatePodStatus(ns: string, name: string, status: Obj): void {
    const pod = this.pods.get(`${ns}/${name}`);
    if (!pod) return;
    pod.status = { ...pod.status, ...status };
    this.bump(pod, 'MODIFIED');
  }

  // --- wire ------------------------------------------------------------------------------------------------

  private check(obj: Obj, what: string): void {
    if (this.opts.validate === false) return;
    try {
      validateK8sObject(obj);
    } catch (err) {
      this.invalid.push(`${what}: ${(err as Error).message}`);
    }
  }

  private send(res: http.ServerResponse, code: number, body: Obj, headers: Record<string, string> = {}): void {
    this.check(body, `response ${body.kind}`);
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private note(key: string): void {
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const method = req.method ?? 'GET';
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return this.send(res, 401, failure(401, 'Unauthorized', 'Unauthorized'));
    }
    const fault = this.faults.find((f) => f.times > 0 && f.match(method, url.pathname));
    if (fault) {
      fault.times--;
      const reason = fault.status === 429 ? 'TooManyRequests' : 'InternalError';
      return this.send(res, fault.status, failure(fault.status, reason, `injected ${fault.status}`), fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {});
    }
    let m: RegExpMatchArray | null;
    if ((m = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?$/))) return this.pods_(req, res, method, url, m[1]!, m[2]);
    if ((m = url.pathname.match(/^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/))) return this.leases.handle(req, res, method, url, m[1]!, m[2]);
    return this.send(res, 404, failure(404, 'NotFound', 'the server could not find the requested resource'));
  }

  private bump(pod: Obj, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    pod.metadata.resourceVersion = String(++this.rv);
    const snap = structuredClone(pod);
    this.history.push({ rv: this.rv, type, pod: snap });
    if (this.history.length > 5000) {
      this.compactedRv = this.history[999]!.rv - 1;
      this.history = this.history.slice(1000);
    }
    for (const w of this.watchers) if (w.selector(snap.metadata.labels)) this.emit(w, type, snap);
  }

  private emit(w: Watcher, type: string, object: Obj): void {
    const ev = { type, object };
    if (this.opts.validate !== false) {
      try {
        validateWatchEvent(ev);
      } catch (err) {
        this.invalid.push(`watch event ${type}: ${(err as Error).message}`);
      }
    }
    w.res.write(JSON.stringify(ev) + '\n');
  }

  private async pods_(req: http.IncomingMessage, res: http.ServerResponse, method: string, url: URL, ns: string, name?: string): Promise<void> {
    const key = name ? `${ns}/${name}` : '';
    if (!name && method === 'GET' && url.searchParams.get('watch') === 'true') return this.watch(res, url, ns);
    if (!name && method === 'GET') {
      this.note('LIST pods');
      const sel = parseSelector(url.searchParams.get('labelSelector'));
      const items = [...this.pods.values()].filter((p) => p.metadata.namespace === ns && sel(p.metadata.labels)).map((p) => structuredClone(p));
      return this.send(res, 200, { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(this.rv) }, items });
    }
    if (!name && method === 'POST') {
      this.note('CREATE pods');
      const pod = JSON.parse(await readBody(req)) as Obj;
      try {
        validateK8sObject(pod);
      } catch (err) {
        return this.send(res, 422, failure(422, 'Invalid', `Pod is invalid: ${(err as Error).message}`));
      }
      const k = `${ns}/${pod.metadata?.name}`;
      if (this.pods.has(k)) return this.send(res, 409, failure(409, 'AlreadyExists', `pods "${pod.metadata.name}" already exists`, { name: pod.metadata.name, kind: 'pods' }));
      pod.metadata = { ...pod.metadata, namespace: ns, uid: randomUUID(), creationTimestamp: k8sTime() };
      pod.status = { phase: 'Pending', qosClass: 'Burstable' };
      this.pods.set(k, pod);
      this.bump(pod, 'ADDED');
      this.send(res, 201, pod);
      void this.schedule(k);
      return;
    }
    const pod = this.pods.get(key);
    if (!pod) return this.send(res, 404, failure(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' }));
    if (method === 'GET') {
      this.note('GET pods');
      return this.send(res, 200, pod);
    }
    if (method === 'DELETE') {
      this.note('DELETE pods');
      // DeleteOptions.preconditions: the real server refuses (409) when the object is not at that version.
      const raw = await readBody(req);
      const want = raw ? (JSON.parse(raw) as Obj)?.preconditions?.resourceVersion : undefined;
      if (want !== undefined && want !== pod.metadata.resourceVersion) {
        return this.send(res, 409, failure(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": Precondition failed: ResourceVersion in precondition: ${want}, ResourceVersion in object meta: ${pod.metadata.resourceVersion}`, { name, kind: 'pods' }));
      }
      if (!pod.metadata.deletionTimestamp) {
        pod.metadata.deletionTimestamp = k8sTime();
        pod.metadata.deletionGracePeriodSeconds = 10;
        this.bump(pod, 'MODIFIED');
        void this.kubelet.stop(pod).finally(() => {
          if (this.pods.get(key) !== pod) return;
          this.pods.delete(key);
          this.bump(pod, 'DELETED');
        });
      }
      return this.send(res, 200, pod);
    }
    if (method === 'PATCH') {
      this.note('PATCH pods');
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (!PATCH_TYPES.has(type)) {
        return this.send(res, 415, failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${[...PATCH_TYPES].join(', ')}, application/apply-patch+yaml`));
      }
      const patch = JSON.parse(await readBody(req));
      let next: Obj;
      try {
        next = applyPatch(type, pod, patch);
      } catch (err) {
        return this.send(res, 422, failure(422, 'Invalid', String(err)));
      }
      const wanted = type === 'application/json-patch+json' ? undefined : patch?.metadata?.resourceVersion;
      if (wanted !== undefined && wanted !== pod.metadata.resourceVersion) {
        return this.send(res, 409, failure(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'pods' }));
      }
      pod.metadata.labels = next.metadata.labels;
      pod.metadata.annotations = next.metadata.annotations;
      this.bump(pod, 'MODIFIED');
      return this.send(res, 200, pod);
    }
    return this.send(res, 405, failure(405, 'MethodNotAllowed', `${method} is not supported`));
  }

  private watch(res: http.ServerResponse, url: URL, ns: string): void {
    this.note('WATCH pods');
    const sel = parseSelector(url.searchParams.get('labelSelector'));
    const from = Number(url.searchParams.get('resourceVersion') || '0');
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const w: Watcher = { res, selector: (l) => sel(l), kind: 'pods' };
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
    const timeout = Number(url.searchParams.get('timeoutSeconds') || '0');
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : null;
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      this.watchers.delete(w);
    });
  }

  private async schedule(key: string): Promise<void> {
    const pod = this.pods.get(key)!;
    let r: KubeletResult;
    try {
      r = await this.kubelet.start(pod);
    } catch {
      r = { fail: 'never_ready' };
    }
    if (this.pods.get(key) !== pod || pod.metadata.deletionTimestamp) return;
    this.updatePodStatus(pod.metadata.namespace, pod.metadata.name, startedStatus(pod, r));
  }

  /** Kubelet side: the worker process of a pod exited on its own (killed). */
  workerExited(ns: string, name: string, exitCode: number, signal: string | null): void {
    const pod = this.pods.get(`${ns}/${name}`);
    if (!pod || pod.metadata.deletionTimestamp) return;
    this.updatePodStatus(ns, name, exitedStatus(pod, exitCode, signal));
  }
}
