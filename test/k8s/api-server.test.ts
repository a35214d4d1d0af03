// The simulated API server's edges, as a client that is not the Kubernetes client sees them: every failure is a v1
// Status (validated against the Kubernetes schema) with the real server's code and reason, and nothing malformed
// reaches the stored objects.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';

const kubelet = new StubKubelet();
const sim = new KubeSim(kubelet);
kubelet.sim = sim;

beforeAll(() => sim.start());
afterAll(() => sim.close());

async function call(method: string, path: string, opts: { body?: string; type?: string; token?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? sim.token}`;
  if (opts.body !== undefined) headers['content-type'] = opts.type ?? 'application/json';
  const res = await fetch(sim.url + path, { method, headers, body: opts.body });
  const body = await res.json();
  return { status: res.status, body };
}

function status(body: Record<string, unknown>, code: number, reason: string) {
  validateK8sObject(body);
  expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
}

const PODS = '/api/v1/namespaces/grove/pods';

describe('simulated API server: failures in the real wire format', () => {
  test('no token or a wrong one: 401 Unauthorized', async () => {
    status((await call('GET', PODS, { token: null })).body, 401, 'Unauthorized');
    status((await call('GET', PODS, { token: 'guess' })).body, 401, 'Unauthorized');
  });

  test('unknown paths, bad names and unsupported verbs', async () => {
    status((await call('GET', '/api/v1/namespaces/grove/secrets')).body, 404, 'NotFound');
    status((await call('GET', `${PODS}/nope`)).body, 404, 'NotFound');
    const bad = await call('GET', `${PODS}/..%2F..%2Fetc`);
    expect(bad.status).toBe(400);
    status(bad.body, 400, 'BadRequest');
    status((await call('PUT', `${PODS}/x`, { body: '{}' })).body, 405, 'MethodNotAllowed');
    status((await call('GET', `${PODS}?timeoutSeconds=-1`)).body, 400, 'BadRequest');
  });

  test('bodies: malformed JSON 400, an object without a name 422, an unknown media type 415, an invalid pod 422', async () => {
    status((await call('POST', PODS, { body: '{"metadata":' })).body, 400, 'BadRequest');
    status((await call('POST', PODS, { body: '{"metadata":{}}' })).body, 422, 'Invalid');
    status((await call('POST', PODS, { body: '{"metadata":{"name":"a"}}', type: 'text/plain' })).body, 415, 'UnsupportedMediaType');
    const invalid = await call('POST', PODS, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: 'none' } }) });
    status(invalid.body, 422, 'Invalid');
    expect(sim.listPodObjects()).toEqual([]);
    // A prototype-polluting body is refused before any handler sees it.
    const polluted = await call('POST', '/apis/coordination.k8s.io/v1/namespaces/grove/leases', { body: '{"metadata":{"name":"l"},"__proto__":{"polluted":1}}' });
    status(polluted.body, 400, 'BadRequest');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('a lease round trip answers objects that validate; a stale replace is a 409 Conflict', async () => {
    const base = '/apis/coordination.k8s.io/v1/namespaces/grove/leases';
    const made = await call('POST', base, { body: JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x' }, spec: { holderIdentity: 'a' } }) });
    expect(made.status).toBe(201);
    validateK8sObject(made.body);
    const stale = { ...made.body, metadata: { ...made.body.metadata, resourceVersion: '1' } };
    status((await call('PUT', `${base}/x`, { body: JSON.stringify(stale) })).body, 409, 'Conflict');
    expect((await call('DELETE', `${base}/x`)).body).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(sim.invalid).toEqual([]);
  });
});
