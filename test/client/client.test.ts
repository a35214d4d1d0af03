// GroveClient against the real app through an injected fetch that calls app.inject() (no port opened).
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { GroveApiError, GroveClient, parseMultipart } from '../../client/index.ts';
import { GroveError } from '../../protocol/errors.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'client-test-key-42';
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function injectFetch(app: FastifyInstance): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const res = await app.inject({
      method: (init.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers: init.headers as Record<string, string>,
      payload: init.body as string | undefined,
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, String(v));
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers });
  }) as typeof fetch;
}

async function setup(max = 4, apiKey = KEY) {
  const backend = new MemoryBackend();
  const app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY, maxSandboxes: max } }), backend });
  apps.push(app);
  return { backend, client: new GroveClient({ baseUrl: 'http://grove.test/', apiKey, fetch: injectFetch(app) }) };
}

describe('GroveClient', () => {
  it('drives the sandbox lifecycle', async () => {
    const { client, backend } = await setup();
    expect((await client.health()).status).toBe('ok');
    const info = await client.createAndWait({ type: 'shell', labels: { run: 'x' } }, 5);
    expect(info.status).toBe('ready');
    expect((await client.listSandboxes()).map((s) => s.sandbox_id)).toEqual([info.sandbox_id]);
    expect((await client.getSandbox(info.sandbox_id)).labels).toEqual({ run: 'x' });
    expect((await client.heartbeat(info.sandbox_id)).sandbox_id).toBe(info.sandbox_id);
    await client.deleteSandbox(info.sandbox_id);
    await client.deleteSandbox(info.sandbox_id);
    expect(backend.made[0].closeCalls).toBe(1);
    expect(await client.metrics()).toContain('grove_sandboxes_deleted_total{type="shell"} 1');
    expect((await client.openapi()).openapi).toBe('3.1.0');
  });

  it('throws GroveApiError with status, code, message and Retry-After', async () => {
    const { client } = await setup(1);
    await client.createSandbox({ type: 'shell' });
    const err = await client.createSandbox({ type: 'shell' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroveApiError);
    expect(err).toMatchObject({ status: 503, code: 'capacity_exhausted' });
    expect((err as GroveApiError).retryAfter).toBeGreaterThanOrEqual(1);
    await expect(client.getSandbox('sb_nope')).rejects.toMatchObject({ status: 404, code: 'sandbox_not_found' });
    await expect(client.step('sb_nope', { action: { action: 'click', x: 1 } as never })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_action',
    });
  });

  it('a wrong key is forbidden', async () => {
    const { client } = await setup(4, 'wrong-key-000000');
    await expect(client.listSandboxes()).rejects.toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('waitSandbox rejects with the creation error code and its catalog status, or timeout while still creating', async () => {
    const { client, backend } = await setup();
    backend.autoReady = false;
    const a = await client.createSandbox({ type: 'shell' });
    await expect(client.waitSandbox(a.sandbox_id, 0)).rejects.toMatchObject({ status: 0, code: 'timeout' });
    backend.made[0].fail(new GroveError('start_url_failed', 'no such host'));
    await expect(client.waitSandbox(a.sandbox_id, 5)).rejects.toMatchObject({
      status: 502,
      code: 'start_url_failed',
      message: `Sandbox ${a.sandbox_id} failed to start: no such host`,
    });
    // A start that ran out of time on a loaded machine is the 503 the docs tell a client to retry.
    const b = await client.createSandbox({ type: 'shell' });
    backend.made[1].fail(new GroveError('browser_start_timeout'));
    await expect(client.waitSandbox(b.sandbox_id, 5)).rejects.toMatchObject({ status: 503, code: 'browser_start_timeout' });
  });

  it('reports a transport failure as network_error', async () => {
    const client = new GroveClient({
      baseUrl: 'http://grove.test',
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as typeof fetch,
    });
    await expect(client.health()).rejects.toMatchObject({ status: 0, code: 'network_error' });
  });
});

describe('GroveClient.tasks', () => {
  it('lists a suite\'s tasks without their answers; an unknown suite is 404 task_not_found', async () => {
    const { client } = await setup();
    const tasks = await client.tasks('offline');
    expect(tasks.length).toBeGreaterThan(10);
    const t = tasks.find((x) => x.id === 'Recipes--0');
    expect(t).toMatchObject({ id: 'Recipes--0', suite: 'offline' });
    expect(t!.question).toMatch(/Lemon Garlic Roast Chicken/);
    // what the judge reads stays on the server; an offline start page is made per sandbox
    for (const x of tasks) expect(Object.keys(x).sort()).toEqual(expect.arrayContaining(['id', 'question', 'site', 'suite']));
    for (const x of tasks) expect(x).not.toHaveProperty('extra');
    for (const x of tasks) expect(x).not.toHaveProperty('reference');
    for (const x of tasks) expect(x).not.toHaveProperty('start_url');
    const err = await client.tasks('nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroveApiError);
    expect(err).toMatchObject({ status: 404, code: 'task_not_found' });
    expect((err as Error).message).toMatch(/known: offline/);
  });
});

describe('parseMultipart', () => {
  const enc = new TextEncoder();
  const join = (...xs: (string | Uint8Array)[]) => {
    const bufs = xs.map((x) => (typeof x === 'string' ? enc.encode(x) : x));
    const out = new Uint8Array(bufs.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of bufs) { out.set(b, at); at += b.length; }
    return out;
  };
  // Bytes that contain CRLFs, dashes and a near-miss of the delimiter.
  const img = new Uint8Array([0xff, 0xd8, 0x0d, 0x0a, 0x2d, 0x2d, 0x78, 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0xff, 0xd9]);

  it('reads parts by Content-Length and by delimiter, with a preamble and quoted boundary', () => {
    const body = join('preamble\r\n--xyz\r\nContent-Type: application/json\r\n\r\n{"a":1}\r\n',
      '--xyz\r\nContent-Type: image/jpeg\r\nContent-Length: 14\r\n\r\n', img, '\r\n--xyz--\r\n');
    const parts = parseMultipart(body, 'multipart/mixed; boundary="xyz"');
    expect(parts.map((p) => p.type)).toEqual(['application/json', 'image/jpeg']);
    expect(new TextDecoder().decode(parts[0].body)).toBe('{"a":1}');
    expect([...parts[1].body]).toEqual([...img]);
  });

  it('rejects what is not a complete multipart body', () => {
    expect(() => parseMultipart(enc.encode('{}'), 'multipart/mixed')).toThrow(/boundary/);
    expect(() => parseMultipart(enc.encode('{}'), 'multipart/mixed; boundary=b')).toThrow(/delimiter/);
    expect(() => parseMultipart(enc.encode('--b\r\nContent-Length: 99\r\n\r\nabc'), 'multipart/mixed; boundary=b')).toThrow(/cut short/);
    expect(() => parseMultipart(enc.encode('--b\r\nContent-Type: x'), 'multipart/mixed; boundary=b')).toThrow(/header end/);
  });
});
