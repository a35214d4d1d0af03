// The client's default transport (client/http.ts) against real loopback HTTP servers: the app itself, and
// small node:http servers that misbehave on purpose (reset a reused socket, never answer).
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { GroveClient } from '../../client/index.ts';
import { nodeFetch } from '../../client/http.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'http-transport-key-7';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('GroveClient over node:http', () => {
  it('drives the app over one kept-alive connection, with statuses, codes and headers intact', async () => {
    const app: FastifyInstance = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY, maxSandboxes: 1 } }), backend: new MemoryBackend() });
    cleanups.push(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const sockets = new Set<Socket>();
    app.server.on('connection', (s: Socket) => sockets.add(s));
    const client = new GroveClient({ baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, apiKey: KEY });
    cleanups.push(() => client.close());

    const info = await client.createAndWait({ type: 'shell' }, 5);
    expect(info.status).toBe('ready');
    await expect(client.createSandbox({ type: 'shell' })).rejects.toMatchObject({ status: 503, code: 'capacity_exhausted', retryAfter: expect.any(Number) });
    await expect(client.getSandbox('sb_nope')).rejects.toMatchObject({ status: 404, code: 'sandbox_not_found' });
    await client.deleteSandbox(info.sandbox_id); // 204: no body
    expect(await client.metrics()).toContain('grove_sandboxes_deleted_total{type="shell"} 1');
    // Sequential calls reuse the first connection.
    expect(sockets.size).toBe(1);
  });

  it('sends a request once more when the server reset the kept-alive socket it reused', async () => {
    let requests = 0;
    const server = http.createServer((req, res) => {
      requests++;
      // The second request on a connection finds it closed under it (an idle timeout racing the reuse).
      if ((req.socket as Socket & { served?: number }).served) return void req.socket.destroy();
      (req.socket as Socket & { served?: number }).served = 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', n: requests }));
    });
    const base = await listen(server);
    const f = nodeFetch();
    cleanups.push(() => f.close());
    const first = await f(`${base}/health`, { method: 'GET', headers: {} });
    expect(JSON.parse(await first.text())).toEqual({ status: 'ok', n: 1 });
    const second = await f(`${base}/health`, { method: 'GET', headers: {} });
    expect(JSON.parse(await second.text())).toEqual({ status: 'ok', n: 3 });
    expect(requests).toBe(3);
  });

  it('names a timeout `timeout` and a refused connection `network_error`', async () => {
    const server = http.createServer(() => {
      /* never answers */
    });
    const base = await listen(server);
    const slow = new GroveClient({ baseUrl: base, timeoutMs: 200 });
    cleanups.push(() => slow.close());
    await expect(slow.health()).rejects.toMatchObject({ status: 0, code: 'timeout' });

    const closed = http.createServer();
    const gone = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = new GroveClient({ baseUrl: gone });
    cleanups.push(() => refused.close());
    await expect(refused.health()).rejects.toMatchObject({ status: 0, code: 'network_error', message: expect.stringContaining('ECONNREFUSED') });
  });

  it('returns binary bodies byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'x-image-width': '10', 'x-image-height': '7' });
      res.end(bytes);
    });
    const base = await listen(server);
    const client = new GroveClient({ baseUrl: base, apiKey: KEY });
    cleanups.push(() => client.close());
    const shot = await client.screenshot('sb_x');
    expect(shot).toMatchObject({ mime: 'image/jpeg', width: 10, height: 7 });
    expect(Buffer.from(shot.bytes).equals(bytes)).toBe(true);
  });
  it('reads chunked and multi-read bodies whole, and leaves no timer behind per call', async () => {
    const big = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    const server = http.createServer((req, res) => {
      if (req.url === '/chunked') {
        // No Content-Length: chunked transfer, in pieces.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write(big.subarray(0, 1000));
        setTimeout(() => res.end(big.subarray(1000)), 5);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': big.length });
      res.end(big);
    });
    const base = await listen(server);
    const f = nodeFetch();
    cleanups.push(() => f.close());
    for (const p of ['/chunked', '/sized']) {
      const a = await f(`${base}${p}`, { method: 'GET', headers: {}, timeoutMs: 5000 });
      expect(Buffer.from(await a.arrayBuffer()).equals(big)).toBe(true);
    }
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 20; i++) await f(`${base}/sized`, { method: 'GET', headers: {}, timeoutMs: 120_000 });
    // Each call's deadline is cleared with its answer (AbortSignal.timeout's would stay pending for 120 s).
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('splits a URL at its path and still parses what it cannot split (IPv6, unencoded characters)', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.url!);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '::1', r));
    cleanups.push(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
    const port = (server.address() as AddressInfo).port;
    const f = nodeFetch();
    cleanups.push(() => f.close());
    await f(`http://[::1]:${port}/a/b?x=1`, { method: 'GET', headers: {} });
    await f(`http://[::1]:${port}/with space/é`, { method: 'GET', headers: {} });
    await f(`http://[::1]:${port}`, { method: 'GET', headers: {} });
    expect(seen).toEqual(['/a/b?x=1', '/with%20space/%C3%A9', '/']);
    await expect(f('ftp://127.0.0.1/x', { method: 'GET', headers: {} })).rejects.toThrow('unsupported protocol');
  });
  it('times out an answer whose body stops coming, with the same error as a missing answer', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"status":"o'); // and nothing more
    });
    const base = await listen(server);
    const slow = new GroveClient({ baseUrl: base, timeoutMs: 300 });
    cleanups.push(() => slow.close());
    await expect(slow.health()).rejects.toMatchObject({ status: 0, code: 'timeout' });
    const f = nodeFetch();
    cleanups.push(() => f.close());
    await expect(f(`${base}/x`, { method: 'GET', headers: {}, timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
