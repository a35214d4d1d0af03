// A simulated Kubernetes API server for the tests and the k8s bench: the pod and Lease subset of the real REST API,
// in the real wire format, on fastify. Routes declare their parameters, query strings and bodies once; failures of
// every kind (a handler's StatusError, a schema violation, a body fastify cannot parse, an unknown route) leave
// through one error handler as the v1 Status the real server sends; every object sent is validated against the
// Kubernetes OpenAPI schema (kubernetes-models) on its way out, violations collected in `invalid` for the tests to
// assert empty. Pods live in pods.ts, Leases in leases.ts, selectors in selector.ts, patch bodies in patch.ts,
// pod statuses in pod-status.ts. A "kubelet" (kubelets.ts, podman-kubelet.ts) runs pods: it starts a worker and
// reports its IP, or fails the pod.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { KubeConfig } from '@kubernetes/client-node';
import { validateK8sObject } from './schema.ts';
import { PATCH_TYPES } from './patch.ts';
import { SimLeases } from './leases.ts';
import { SimPods, unsupportedMediaType } from './pods.ts';
import { reasonOf, StatusError, type Answer, type Obj, type SimWire } from './wire.ts';

export type { Kubelet } from './pod-status.ts';
import type { Kubelet } from './pod-status.ts';

interface Fault {
  status: number;
  times: number;
  retryAfter?: number;
  match: (method: string, path: string) => boolean;
}

/** Names and namespaces as the API server takes them (DNS-1123 subdomains). */
const NAME = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' } as const;
const NS_PARAMS = { type: 'object', required: ['ns'], properties: { ns: NAME } } as const;
const NAME_PARAMS = { type: 'object', required: ['ns', 'name'], properties: { ns: NAME, name: NAME } } as const;
/** The list/watch query the client sends (other parameters, e.g. `limit`, are taken and ignored). */
const LIST_QUERY = {
  type: 'object',
  properties: {
    labelSelector: { type: 'string', maxLength: 4096 },
    watch: { type: 'boolean' },
    resourceVersion: { type: 'string', pattern: '^[0-9]*$' },
    timeoutSeconds: { type: 'integer', minimum: 0 },
    allowWatchBookmarks: { type: 'boolean' },
  },
} as const;
/** An object to store: it must name itself (the kind's full schema is checked by the handler). */
const OBJECT_BODY = { type: 'object', required: ['metadata'], properties: { metadata: { type: 'object', required: ['name'], properties: { name: NAME } } } } as const;
const BODY_TYPES = ['application/json', ...PATCH_TYPES];

type NsReq = FastifyRequest<{ Params: { ns: string } }>;
type NameReq = FastifyRequest<{ Params: { ns: string; name: string } }>;
type ListReq = { Params: { ns: string }; Querystring: { labelSelector?: string; watch?: boolean; resourceVersion?: string; timeoutSeconds?: number } };

export class KubeSim {
  readonly token = 'sim-token-' + randomUUID();
  private app: FastifyInstance | null = null;
  private rv = 1;
  private readonly pods: SimPods;
  private readonly leases: SimLeases;
  private readonly faults: Fault[] = [];
  /** Schema violations in what the server sent (should stay empty). */
  readonly invalid: string[] = [];
  /** Requests by "VERB kind" (e.g. "PATCH pods", "WATCH pods"). */
  readonly requests = new Map<string, number>();
  /** Most non-watch requests being served at once (the client's concurrency bound shows here). */
  maxInFlight = 0;
  private inFlight = 0;
  /** A test's hook on each request, once authenticated and its body received, before it is served: awaited; when it
   * rejects, the request is answered 503 and not served (a test stopping a client between two of its calls). */
  intercept: ((method: string, path: string) => Promise<void> | void) | null = null;
  url = '';

  constructor(
    public kubelet: Kubelet,
    private readonly opts: { validate?: boolean; /** Added before every non-watch answer, as a real server's latency. */ latencyMs?: number } = {},
  ) {
    const wire: SimWire = {
      note: (key) => this.requests.set(key, (this.requests.get(key) ?? 0) + 1),
      check: (obj, what) => this.check(obj, what),
      nextRv: () => String(++this.rv),
      currentRv: () => String(this.rv),
    };
    this.leases = new SimLeases(wire);
    this.pods = new SimPods(wire, () => this.kubelet, opts.validate === false ? undefined : this.invalid);
  }

  async start(): Promise<string> {
    const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024, forceCloseConnections: true });
    this.app = app;
    // JSON in the request media types the server takes (fastify's parser: prototype-poisoning keys are refused);
    // an empty body (a DELETE without options) is none.
    const json = app.getDefaultJsonParser('error', 'error');
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(BODY_TYPES, { parseAs: 'string' }, (req, body, done) => {
      if ((body as string).trim() === '') return done(null, undefined);
      json(req, body as string, done);
    });
    app.addHook('onRequest', (req, reply) => this.admit(req, reply));
    // A test's intercept sees the request whole (its body received), as the server would serve it.
    app.addHook('preHandler', async (req) => {
      if (!this.intercept) return;
      await Promise.resolve(this.intercept(req.method, req.url.split('?')[0]!)).catch((err: unknown) => {
        throw new StatusError(503, 'ServiceUnavailable', `intercepted: ${String(err)}`);
      });
    });
    // Everything sent is checked against the Kubernetes schema on its way out.
    app.addHook('preSerialization', async (_req, _reply, payload: unknown) => {
      this.check(payload as Obj, `response ${(payload as Obj)?.kind}`);
      return payload;
    });
    app.setErrorHandler((err: FastifyError | StatusError, _req, reply) => {
      const e = toStatusError(err);
      return reply.code(e.code).headers(e.headers).send(e.body);
    });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send(new StatusError(404, 'NotFound', 'the server could not find the requested resource').body));
    this.routes(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    this.url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.pods.dropWatches();
    await Promise.allSettled(this.pods.all().map((p) => this.kubelet.stop(p)));
    await this.app?.close();
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

  // --- fault injection and inspection ----------------------------------------------------------------------

  /** The next `times` requests matching answer `status` (429 with Retry-After when given). */
  failNext(times: number, status: number, opts: { retryAfter?: number; method?: string; path?: RegExp } = {}): void {
    this.faults.push({ status, times, retryAfter: opts.retryAfter, match: (m, p) => (!opts.method || opts.method === m) && (!opts.path || opts.path.test(p)) });
  }

  /** Cuts every open watch connection (as a load balancer or an API server restart would). */
  dropWatches(): void {
    this.pods.dropWatches();
  }

  /** Compacts through the current revision: a watch resumed from it or anything older gets 410 Gone. */
  compact(): void {
    this.pods.compact();
  }

  get watchCount(): number {
    return this.pods.watchCount;
  }

  listPodObjects(): Obj[] {
    return this.pods.all().map((p) => structuredClone(p));
  }

  count(key: string): number {
    return this.requests.get(key) ?? 0;
  }

  /** Kubelet side: updates a pod's status (e.g. its container was killed). */
  updatePodStatus(ns: string, name: string, status: Obj): void {
    this.pods.updateStatus(ns, name, status);
  }

  /** Kubelet side: the worker of a pod exited on its own (killed). */
  workerExited(ns: string, name: string, exitCode: number, signal: string | null): void {
    this.pods.workerExited(ns, name, exitCode, signal);
  }

  // --- the HTTP side ---------------------------------------------------------------------------------------

  private routes(app: FastifyInstance): void {
    const answer = (reply: FastifyReply, a: Answer) => reply.code(a.code).send(a.body);
    const pods = '/api/v1/namespaces/:ns/pods';
    app.get<ListReq>(pods, { schema: { params: NS_PARAMS, querystring: LIST_QUERY } }, async (req, reply) => {
      const q = req.query;
      if (q.watch) {
        reply.hijack();
        return this.pods.watch(reply.raw, req.params.ns, q);
      }
      return answer(reply, this.pods.list(req.params.ns, q.labelSelector));
    });
    app.post(pods, { schema: { params: NS_PARAMS, body: OBJECT_BODY } }, async (req: NsReq, reply) => answer(reply, this.pods.create(req.params.ns, req.body as Obj)));
    app.get(`${pods}/:name`, { schema: { params: NAME_PARAMS } }, async (req: NameReq, reply) => answer(reply, this.pods.get(req.params.ns, req.params.name)));
    app.delete(`${pods}/:name`, { schema: { params: NAME_PARAMS } }, async (req: NameReq, reply) => answer(reply, this.pods.remove(req.params.ns, req.params.name, req.body as Obj | undefined)));
    app.patch(`${pods}/:name`, { schema: { params: NAME_PARAMS } }, async (req: NameReq, reply) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      return answer(reply, this.pods.patch(req.params.ns, req.params.name, type, req.body));
    });
    app.patch(`${pods}/:name/ephemeralcontainers`, { schema: { params: NAME_PARAMS } }, async (req: NameReq, reply) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      return answer(reply, this.pods.patchEphemeral(req.params.ns, req.params.name, type, req.body));
    });
    const leases = '/apis/coordination.k8s.io/v1/namespaces/:ns/leases';
    app.get<ListReq>(leases, { schema: { params: NS_PARAMS, querystring: LIST_QUERY } }, async (req, reply) => answer(reply, this.leases.list(req.params.ns, req.query.labelSelector)));
    app.post(leases, { schema: { params: NS_PARAMS, body: OBJECT_BODY } }, async (req: NsReq, reply) => answer(reply, this.leases.create(req.params.ns, req.body as Obj)));
    app.get(`${leases}/:name`, { schema: { params: NAME_PARAMS } }, async (req: NameReq, reply) => answer(reply, this.leases.get(req.params.ns, req.params.name)));
    app.put(`${leases}/:name`, { schema: { params: NAME_PARAMS, body: OBJECT_BODY } }, async (req: NameReq, reply) => answer(reply, this.leases.replace(req.params.ns, req.params.name, req.body as Obj)));
    app.delete(`${leases}/:name`, { schema: { params: NAME_PARAMS } }, async (req: NameReq, reply) => answer(reply, this.leases.remove(req.params.ns, req.params.name)));
    // A verb a resource does not take is a 405, as on the real server.
    const notAllowed = async (req: FastifyRequest) => {
      throw new StatusError(405, 'MethodNotAllowed', `${req.method} is not supported`);
    };
    app.route({ method: ['PUT', 'PATCH', 'DELETE'], url: pods, handler: notAllowed });
    app.route({ method: ['PUT'], url: `${pods}/:name`, handler: notAllowed });
    app.route({ method: ['PUT', 'PATCH', 'DELETE'], url: leases, handler: notAllowed });
    app.route({ method: ['POST', 'PATCH'], url: `${leases}/:name`, handler: notAllowed });
  }

  /** Every request: counted while in flight (watches aside), the simulated latency, the bearer token, injected faults. */
  private async admit(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const counted = !req.url.includes('watch=true');
    if (counted) {
      this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
      reply.raw.once('close', () => this.inFlight--);
      if (this.opts.latencyMs) await new Promise((r) => setTimeout(r, this.opts.latencyMs));
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) throw new StatusError(401, 'Unauthorized', 'Unauthorized');
    const path = req.url.split('?')[0]!;
    const fault = this.faults.find((f) => f.times > 0 && f.match(req.method, path));
    if (fault) {
      fault.times--;
      const headers: Record<string, string> = fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {};
      throw new StatusError(fault.status, fault.status === 429 ? 'TooManyRequests' : 'InternalError', `injected ${fault.status}`, undefined, headers);
    }
  }

  private check(obj: Obj, what: string): void {
    if (this.opts.validate === false) return;
    try {
      validateK8sObject(obj);
    } catch (err) {
      this.invalid.push(`${what}: ${(err as Error).message}`);
    }
  }
}

/** Any failure as the Status the real server would send: a handler's own, fastify's (schema, media type, body). */
function toStatusError(err: FastifyError | StatusError): StatusError {
  if (err instanceof StatusError) return err;
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return unsupportedMediaType();
  // An object that fails its schema is Invalid (422); a bad parameter or query is a BadRequest.
  if (err.validation) {
    const code = err.validationContext === 'body' ? 422 : 400;
    return new StatusError(code, reasonOf(code), `${err.validationContext ?? 'request'} is invalid: ${err.message}`);
  }
  const code = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  return new StatusError(code, reasonOf(code), code === 500 ? 'Internal error occurred' : err.message);
}
