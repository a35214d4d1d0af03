// The simulated API server's coordination.k8s.io/v1 Leases: create, get, list (label selectors), replace (409 on a
// stale resourceVersion) and delete, in the real wire format.
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseSelector } from './selector.ts';
import { failure, k8sTime, readBody, type Obj, type SimWire } from './wire.ts';

export class SimLeases {
  private readonly leases = new Map<string, Obj>(); // ns/name

  constructor(private readonly wire: SimWire) {}

  async handle(req: http.IncomingMessage, res: http.ServerResponse, method: string, url: URL, ns: string, name?: string): Promise<void> {
    const { wire } = this;
    const key = `${ns}/${name}`;
    if (!name && method === 'GET') {
      wire.note('LIST leases');
      const sel = parseSelector(url.searchParams.get('labelSelector'));
      const items = [...this.leases.values()].filter((l) => l.metadata.namespace === ns && sel(l.metadata.labels)).map((l) => structuredClone(l));
      return wire.send(res, 200, { apiVersion: 'coordination.k8s.io/v1', kind: 'LeaseList', metadata: { resourceVersion: wire.currentRv() }, items });
    }
    if (!name && method === 'POST') {
      wire.note('CREATE leases');
      const lease = JSON.parse(await readBody(req)) as Obj;
      const k = `${ns}/${lease.metadata?.name}`;
      if (this.leases.has(k)) return wire.send(res, 409, failure(409, 'AlreadyExists', `leases.coordination.k8s.io "${lease.metadata.name}" already exists`));
      lease.metadata = { ...lease.metadata, namespace: ns, uid: randomUUID(), resourceVersion: wire.nextRv(), creationTimestamp: k8sTime() };
      wire.check(lease, 'created lease');
      this.leases.set(k, lease);
      return wire.send(res, 201, lease);
    }
    const lease = this.leases.get(key);
    if (!lease) return wire.send(res, 404, failure(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`, { name, group: 'coordination.k8s.io', kind: 'leases' }));
    if (method === 'GET') {
      wire.note('GET leases');
      return wire.send(res, 200, lease);
    }
    if (method === 'PUT') {
      wire.note('UPDATE leases');
      const next = JSON.parse(await readBody(req)) as Obj;
      if (next.metadata?.resourceVersion !== lease.metadata.resourceVersion) {
        return wire.send(res, 409, failure(409, 'Conflict', `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`));
      }
      next.metadata = { ...lease.metadata, labels: next.metadata.labels, resourceVersion: wire.nextRv() };
      wire.check(next, 'replaced lease');
      this.leases.set(key, next);
      return wire.send(res, 200, next);
    }
    if (method === 'DELETE') {
      wire.note('DELETE leases');
      this.leases.delete(key);
      return wire.send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: 'coordination.k8s.io', kind: 'leases' } });
    }
    return wire.send(res, 405, failure(405, 'MethodNotAllowed', `${method} is not supported`));
  }
}
