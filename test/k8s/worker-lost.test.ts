// A worker that cannot be reached is worker_lost, and the client is told why without the pod's cluster-internal
// address (the system error code only; the full error stays with the orchestrator's log as the cause).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { GroveClient } from '../../client/index.ts';
import { GroveError } from '../../protocol/errors.ts';
import { workerError } from '../../k8s/remote-placement.ts';
import { reachFailure, workerRequest } from '../../k8s/worker-http.ts';

async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

describe('worker_lost', () => {
  it('a streamed request to a closed worker port names the pod and ECONNREFUSED, not the address', async () => {
    const port = await closedPort();
    const err = await workerRequest({ pod: 'grove-w-1', url: `http://127.0.0.1:${port}`, token: 't' }, { method: 'GET', path: '/health' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroveError);
    expect((err as GroveError).code).toBe('worker_lost');
    expect((err as GroveError).message).toBe('Worker pod grove-w-1 cannot be reached (ECONNREFUSED).');
    expect((err as GroveError).message).not.toContain(String(port));
  });

  it("a client call's network error (the code two causes deep) maps the same way", async () => {
    const port = await closedPort();
    const client = new GroveClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k' });
    const err = await client.health().catch((e: unknown) => e);
    const mapped = workerError(err, 'grove-w-2');
    expect(mapped.code).toBe('worker_lost');
    expect(mapped.message).toBe('Worker pod grove-w-2 cannot be reached (ECONNREFUSED).');
    expect(mapped.message).not.toContain('127.0.0.1');
    client.close();
  });

  it('an error without a system code says "network error"', () => {
    expect(reachFailure(new Error('socket hang up at 10.0.0.7:3000'))).toBe('network error');
    expect(reachFailure(Object.assign(new Error('x'), { code: 'rm -rf' }))).toBe('network error');
  });
});
