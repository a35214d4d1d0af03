// A simulated Kubernetes API server for the tests and the k8s bench: the pod and Lease subset of the real REST API,
// in the real wire format. Pods: create, get, list (label selectors), watch (resourceVersion, 410 Gone for a
// compacted one, timeoutSeconds expiry), delete (graceful: deletionTimestamp, then DELETED), patch (merge,
// strategic-merge and JSON patch; 415 for any other content type; 409 on a stale metadata.resourceVersion).
// Leases: create, get, list, replace (409 on conflict), delete. Failures answer a v1 Status as the real server
// does. Every object it sends — bodies and watch events — is validated against the Kubernetes OpenAPI schema
// (kubernetes-models); violations are collected in `invalid` for the tests to assert empty.
// A "kubelet" (kubelets.ts) schedules pods: it starts a worker and reports its IP, or fails the pod.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { validateK8sObject, validateWatchEvent } from './schema.ts';

type Obj = Record<string, any>;

export interface Kubelet {
  /** Runs the pod: resolves with its IP, or a failure the pod's status reports. */
  start(pod: Obj): Promise<{ ip: string } | { fail: 'unschedulable' | 'image_pull' | 'never_ready' }>;
  stop(pod: Obj): Promise<void>;
}

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

type Selector = (labels: Record<string, string>) => boolean;

/** Equality-based and set-based label selectors (=, ==, !=, in, notin, exists, !exists). */
export function parseSelector(s: string | null): Selector {
  if (!s) return () => true;
  const reqs: Selector[] = [];
  for (const part of s.match(/([^,(]+(\([^)]*\))?)/g) ?? []) {
    const p = part.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const [, k, op, v] = m;
      reqs.push(op === '!=' ? (l) => l[k!] !== v : (l) => l[k!] === v);
    } else if ((m = p.match(/^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const set = new Set(m[3]!.split(',').map((x) => x.trim()));
      const k = m[1]!;
      reqs.push(m[2] === 'in' ? (l) => set.has(l[k] as string) : (l) => !set.has(l[k] as string));
    } else if (p.startsWith('!')) reqs.push((l) => !(p.slice(1) in l));
    else reqs.push((l) => p in l);
  }
  return (l) => reqs.every((r) => r(l ?? {}));
}

function mergePatch(target: any, patch: any): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function jsonPatch(doc: any, ops: any[]): any {
  const out = structuredClone(doc);
  for (const op of ops) {
    const parts = String(op.path).split('/').slice(1).map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop()!;
    let parent = out;
    for (const p of parts) parent = parent?.[p];
    if (parent === undefined) throw new Error(`path ${op.path} does not exist`);
    if (op.op === 'add' || op.op === 'replace') parent[last] = op.value;
    else if (op.op === 'remove') delete parent[last];
    else if (op.op === 'test') {
      if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw new Error(`test failed at ${op.path}`);
    } else throw new Error(`unsupported op ${op.op}`);
  }
  return out;
}

const PATCH_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json']);

export class KubeSim {
  readonly token = 'sim-token-' + randomUUID();
  private server: http.Server | null = null;
  private rv = 1;
  private readonly pods = new Map<string, Obj>(); // ns/name
  private readonly leases = new Map<string, Obj>();
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
  ) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const counted = !(req.url ?? '').includes('watch=true');
      if (counted) this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
      res.on('close', () => counted && this.inFlight--);
      const delay = counted ? (this.opts.latencyMs ?? 0) : 0;
      (delay > 0 ? new Promise((r) => setTimeout(r, delay)) : Promise.resolve())
        .then(() => this.handle(req, res)).catch((err) => this.send(res, 500, this.status(500, 'InternalError', String(err))));
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

  private status(code: number, reason: string, message: string, details?: Obj): Obj {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
  }

  private note(key: string): void {
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  private async body(req: http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const method = req.method ?? 'GET';
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return this.send(res, 401, this.status(401, 'Unauthorized', 'Unauthorized'));
    }
    const fault = this.faults.find((f) => f.times > 0 && f.match(method, url.pathname));
    if (fault) {
      fault.times--;
      const reason = fault.status === 429 ? 'TooManyRequests' : 'InternalError';
      return this.send(res, fault.status, this.status(fault.status, reason, `injected ${fault.status}`), fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {});
    }
    let m: RegExpMatchArray | null;
    if ((m = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?$/))) return this.pods_(req, res, method, url, m[1]!, m[2]);
    if ((m = url.pathname.match(/^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/))) return this.leases_(req, res, method, url, m[1]!, m[2]);
    return this.send(res, 404, this.status(404, 'NotFound', 'the server could not find the requested resource'));
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
      const pod = JSON.parse(await this.body(req)) as Obj;
      try {
        validateK8sObject(pod);
      } catch (err) {
        return this.send(res, 422, this.status(422, 'Invalid', `Pod is invalid: ${(err as Error).message}`));
      }
      const k = `${ns}/${pod.metadata?.name}`;
      if (this.pods.has(k)) return this.send(res, 409, this.status(409, 'AlreadyExists', `pods "${pod.metadata.name}" already exists`, { name: pod.metadata.name, kind: 'pods' }));
      pod.metadata = { ...pod.metadata, namespace: ns, uid: randomUUID(), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
      pod.status = { phase: 'Pending', qosClass: 'Burstable' };
      this.pods.set(k, pod);
      this.bump(pod, 'ADDED');
      this.send(res, 201, pod);
      void this.schedule(k);
      return;
    }
    const pod = this.pods.get(key);
    if (!pod) return this.send(res, 404, this.status(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' }));
    if (method === 'GET') {
      this.note('GET pods');
      return this.send(res, 200, pod);
    }
    if (method === 'DELETE') {
      this.note('DELETE pods');
      if (!pod.metadata.deletionTimestamp) {
        pod.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
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
        return this.send(res, 415, this.status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${[...PATCH_TYPES].join(', ')}, application/apply-patch+yaml`));
      }
      const patch = JSON.parse(await this.body(req));
      let next: Obj;
      try {
        next = type === 'application/json-patch+json' ? jsonPatch(pod, patch) : mergePatch(pod, patch);
      } catch (err) {
        return this.send(res, 422, this.status(422, 'Invalid', String(err)));
      }
      const wanted = type === 'application/json-patch+json' ? undefined : patch?.metadata?.resourceVersion;
      if (wanted !== undefined && wanted !== pod.metadata.resourceVersion) {
        return this.send(res, 409, this.status(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'pods' }));
      }
      pod.metadata.labels = next.metadata.labels;
      pod.metadata.annotations = next.metadata.annotations;
      this.bump(pod, 'MODIFIED');
      return this.send(res, 200, pod);
    }
    return this.send(res, 405, this.status(405, 'MethodNotAllowed', `${method} is not supported`));
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
      this.emit(w, 'ERROR', this.status(410, 'Expired', `too old resource version: ${from} (${this.compactedRv})`));
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
    const ns = pod.metadata.namespace;
    const name = pod.metadata.name;
    const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const image = pod.spec.containers[0].image;
    let r: Awaited<ReturnType<Kubelet['start']>>;
    try {
      r = await this.kubelet.start(pod);
    } catch {
      r = { fail: 'never_ready' };
    }
    if (this.pods.get(key) !== pod || pod.metadata.deletionTimestamp) return;
    if ('fail' in r) {
      if (r.fail === 'unschedulable') {
        return this.updatePodStatus(ns, name, {
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.', lastTransitionTime: now() }],
        });
      }
      const waiting = r.fail === 'image_pull' ? { reason: 'ErrImagePull', message: `failed to pull image "${image}": not found` } : { reason: 'ContainerCreating' };
      return this.updatePodStatus(ns, name, {
        conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: now() }],
        containerStatuses: [{ name: 'worker', image, imageID: '', ready: false, restartCount: 0, started: false, state: { waiting } }],
      });
    }
    this.updatePodStatus(ns, name, {
      phase: 'Running',
      podIP: r.ip,
      podIPs: [{ ip: r.ip }],
      hostIP: '127.0.0.1',
      startTime: now(),
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now() },
        { type: 'Ready', status: 'True', lastTransitionTime: now() },
      ],
      containerStatuses: [{ name: 'worker', image, imageID: `sha256:${'0'.repeat(64)}`, ready: true, restartCount: 0, started: true, state: { running: { startedAt: now() } } }],
    });
  }

  /** Kubelet side: the worker process of a pod exited on its own (killed). */
  workerExited(ns: string, name: string, exitCode: number, signal: string | null): void {
    const pod = this.pods.get(`${ns}/${name}`);
    if (!pod || pod.metadata.deletionTimestamp) return;
    const image = pod.spec.containers[0].image;
    const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.updatePodStatus(ns, name, {
      phase: 'Failed',
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodFailed', lastTransitionTime: t }],
      containerStatuses: [{ name: 'worker', image, imageID: '', ready: false, restartCount: 0, started: false, state: { terminated: { exitCode, reason: signal ? 'Error' : 'Completed', signal: undefined, finishedAt: t } } }],
    });
  }

  // --- leases ------------------------------------------------------------------------------------------------

  private async leases_(req: http.IncomingMessage, res: http.ServerResponse, method: string, url: URL, ns: string, name?: string): Promise<void> {
    const key = `${ns}/${name}`;
    if (!name && method === 'GET') {
      this.note('LIST leases');
      const sel = parseSelector(url.searchParams.get('labelSelector'));
      const items = [...this.leases.values()].filter((l) => l.metadata.namespace === ns && sel(l.metadata.labels)).map((l) => structuredClone(l));
      return this.send(res, 200, { apiVersion: 'coordination.k8s.io/v1', kind: 'LeaseList', metadata: { resourceVersion: String(this.rv) }, items });
    }
    if (!name && method === 'POST') {
      this.note('CREATE leases');
      const lease = JSON.parse(await this.body(req)) as Obj;
      const k = `${ns}/${lease.metadata?.name}`;
      if (this.leases.has(k)) return this.send(res, 409, this.status(409, 'AlreadyExists', `leases.coordination.k8s.io "${lease.metadata.name}" already exists`));
      lease.metadata = { ...lease.metadata, namespace: ns, uid: randomUUID(), resourceVersion: String(++this.rv), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
      this.check(lease, 'created lease');
      this.leases.set(k, lease);
      return this.send(res, 201, lease);
    }
    const lease = this.leases.get(key);
    if (!lease) return this.send(res, 404, this.status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`, { name, group: 'coordination.k8s.io', kind: 'leases' }));
    if (method === 'GET') {
      this.note('GET leases');
      return this.send(res, 200, lease);
    }
    if (method === 'PUT') {
      this.note('UPDATE leases');
      const next = JSON.parse(await this.body(req)) as Obj;
      if (next.metadata?.resourceVersion !== lease.metadata.resourceVersion) {
        return this.send(res, 409, this.status(409, 'Conflict', `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`));
      }
      next.metadata = { ...lease.metadata, labels: next.metadata.labels, resourceVersion: String(++this.rv) };
      this.check(next, 'replaced lease');
      this.leases.set(key, next);
      return this.send(res, 200, next);
    }
    if (method === 'DELETE') {
      this.note('DELETE leases');
      this.leases.delete(key);
      return this.send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: 'coordination.k8s.io', kind: 'leases' } });
    }
    return this.send(res, 405, this.status(405, 'MethodNotAllowed', `${method} is not supported`));
  }
}
