// The simulated API server's coordination.k8s.io/v1 Leases: create, get, list (label selectors), replace (409 on a
// stale resourceVersion) and delete, in the real wire format. Failures are thrown as StatusErrors.
import { randomUUID } from 'node:crypto';
import { validateK8sObject } from './schema.ts';
import { parseSelector } from './selector.ts';
import { k8sTime, StatusError, type Answer, type Obj, type SimWire } from './wire.ts';

const GROUP = 'coordination.k8s.io';

export class SimLeases {
  private readonly leases = new Map<string, Obj>(); // ns/name

  constructor(private readonly wire: SimWire) {}

  list(ns: string, labelSelector: string | undefined): Answer {
    this.wire.note('LIST leases');
    const sel = parseSelector(labelSelector ?? null);
    const items = [...this.leases.values()].filter((l) => l.metadata.namespace === ns && sel(l.metadata.labels)).map((l) => structuredClone(l));
    return { code: 200, body: { apiVersion: `${GROUP}/v1`, kind: 'LeaseList', metadata: { resourceVersion: this.wire.currentRv() }, items } };
  }

  create(ns: string, lease: Obj): Answer {
    this.wire.note('CREATE leases');
    valid(lease);
    const k = `${ns}/${lease.metadata.name}`;
    if (this.leases.has(k)) throw new StatusError(409, 'AlreadyExists', `leases.${GROUP} "${lease.metadata.name}" already exists`, { name: lease.metadata.name, group: GROUP, kind: 'leases' });
    lease.metadata = { ...lease.metadata, namespace: ns, uid: randomUUID(), resourceVersion: this.wire.nextRv(), creationTimestamp: k8sTime() };
    this.wire.check(lease, 'created lease');
    this.leases.set(k, lease);
    return { code: 201, body: lease };
  }

  get(ns: string, name: string): Answer {
    this.wire.note('GET leases');
    return { code: 200, body: this.find(ns, name) };
  }

  replace(ns: string, name: string, next: Obj): Answer {
    this.wire.note('UPDATE leases');
    valid(next);
    const lease = this.find(ns, name);
    if (next.metadata.resourceVersion !== lease.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', `Operation cannot be fulfilled on leases.${GROUP} "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, group: GROUP, kind: 'leases' });
    }
    next.metadata = { ...lease.metadata, labels: next.metadata.labels, resourceVersion: this.wire.nextRv() };
    this.wire.check(next, 'replaced lease');
    this.leases.set(`${ns}/${name}`, next);
    return { code: 200, body: next };
  }

  remove(ns: string, name: string): Answer {
    this.wire.note('DELETE leases');
    this.find(ns, name);
    this.leases.delete(`${ns}/${name}`);
    return { code: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: GROUP, kind: 'leases' } } };
  }

  private find(ns: string, name: string): Obj {
    const lease = this.leases.get(`${ns}/${name}`);
    if (!lease) throw new StatusError(404, 'NotFound', `leases.${GROUP} "${name}" not found`, { name, group: GROUP, kind: 'leases' });
    return lease;
  }
}

/** A Lease the server would store: its schema (kind included) holds, or the request is a 422 Invalid. */
function valid(lease: Obj): void {
  try {
    validateK8sObject(lease);
  } catch (err) {
    throw new StatusError(422, 'Invalid', `Lease is invalid: ${(err as Error).message}`);
  }
}
