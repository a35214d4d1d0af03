// Attacker's tests of the MCP endpoints: tokens (missing, wrong, another sandbox's, Grove's key in its place),
// bodies (malformed, oversized, not JSON-RPC), sessions (another sandbox's id, the per-sandbox cap), and a closed
// sandbox. Each answer has a stable code (JSON-RPC's error, Grove's code in error.data.code) and reveals nothing.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { api, connect, createSandbox, INIT, mcpAccess, rawPost, type Served } from './support.ts';

const KEY = 'mcp-attack-test-key-0123456789';
let app: FastifyInstance;
let s: Served;
let a: { id: string; url: string; token: string; clawToken: string };
let b: { id: string; url: string; token: string; clawToken: string };

async function clawBox() {
  const info = await createSandbox(s, { type: 'claw', world_seed: 1, apps: ['todo'] });
  const access = await mcpAccess(s, info.sandbox_id);
  return { id: info.sandbox_id, url: access.url, token: access.token, clawToken: info.claw.token };
}

beforeAll(async () => {
  app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY } }), environments: {} });
  s = { url: await app.listen({ host: '127.0.0.1', port: 0 }), key: KEY };
  a = await clawBox();
  b = await clawBox();
});
afterAll(async () => {
  await app?.close();
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('MCP endpoint: tokens', () => {
  it('no token: 401 unauthorized with a Bearer challenge; the sandbox is not looked up', async () => {
    const r = await rawPost(a.url, INIT);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'unauthorized' } } });
    // The same for a sandbox that does not exist: nothing tells the two apart.
    const none = await rawPost(`${s.url}/sandboxes/sb-nope/mcp`, INIT);
    expect([none.status, none.json.error.data.code]).toEqual([401, 'unauthorized']);
  });

  it('a wrong token, another sandbox\'s token or app token, Grove\'s own key: 403 forbidden', async () => {
    for (const t of ['gmcp_wrong', b.token, b.clawToken, KEY, `${a.token}x`, a.token.slice(0, -1)]) {
      const r = await rawPost(a.url, INIT, bearer(t));
      expect([r.status, r.json?.error?.data?.code], t).toEqual([403, 'forbidden']);
    }
    // Grove's key in its own header does not stand in for the token.
    const k = await rawPost(a.url, INIT, { 'x-api-key': KEY });
    expect(k.status).toBe(401);
    // A nonexistent sandbox with some token: 403 as well (no existence oracle).
    const none = await rawPost(`${s.url}/sandboxes/sb-nope/mcp`, INIT, bearer(a.token));
    expect([none.status, none.json.error.data.code]).toEqual([403, 'forbidden']);
  });

  it('the MCP token opens nothing of Grove\'s API, and the token route needs Grove\'s key', async () => {
    const list = await fetch(`${s.url}/sandboxes`, { headers: bearer(a.token) });
    expect(list.status).toBe(401);
    const tok = await fetch(`${s.url}/sandboxes/${a.id}/mcp/token`, { headers: bearer(a.token) });
    expect(tok.status).toBe(401);
  });
});

describe('MCP endpoint: bodies', () => {
  it('malformed JSON is JSON-RPC\'s parse error; non-JSON-RPC bodies are refused before any session exists', async () => {
    const bad = await rawPost(a.url, '{"jsonrpc": "2.0", ', bearer(a.token));
    expect([bad.status, bad.json.error.code, bad.json.error.data.code]).toEqual([400, -32700, 'invalid_request']);
    for (const body of ['42', '"x"', 'null', '[]', '{"method": "tools/list"}', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })]) {
      const r = await rawPost(a.url, body, bearer(a.token));
      expect(r.status, body).toBe(400);
      expect(r.json?.error, body).toBeDefined();
    }
    // A text/plain body: the SDK's own content-type check.
    const plain = await rawPost(a.url, INIT, { ...bearer(a.token), 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
  });

  it('an oversized body is 413 before it is parsed; an oversized id is 400', async () => {
    const huge = Buffer.alloc(9 * 1024 * 1024, 'a');
    const r = await rawPost(a.url, huge, bearer(a.token)).catch((err: Error) => ({ status: -1, json: undefined, text: err.message }));
    // The server answers 413 and closes the connection; a client still sending may see the reset instead.
    expect([413, -1]).toContain(r.status);
    const long = await rawPost(`${s.url}/sandboxes/${'x'.repeat(500)}/mcp`, INIT, bearer(a.token));
    expect([long.status, long.json.error.data.code]).toEqual([400, 'invalid_request']);
    // Beyond the router's parameter length no route matches: Grove's own 401 (its key), not the MCP endpoint.
    expect((await rawPost(`${s.url}/sandboxes/${'x'.repeat(5000)}/mcp`, INIT, bearer(a.token))).status).toBe(401);
    // The server still serves.
    const c = await connect(a.url, a.token);
    expect((await c.listTools()).tools.length).toBeGreaterThan(0);
    await c.close();
  });
});

describe('MCP endpoint: sessions', () => {
  it('a session id from another sandbox is unknown here (404); on its own sandbox it works', async () => {
    const c = await connect(b.url, b.token);
    const sid = (c.transport as unknown as { sessionId: string }).sessionId;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const cross = await rawPost(a.url, list, { ...bearer(a.token), 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    expect([cross.status, cross.json.error.code, cross.json.error.data.code]).toEqual([404, -32001, 'session_not_found']);
    // The right sandbox with the wrong sandbox's token: refused before the session is looked at.
    const wrongToken = await rawPost(b.url, list, { ...bearer(a.token), 'mcp-session-id': sid });
    expect(wrongToken.status).toBe(403);
    expect((await c.listTools()).tools.length).toBeGreaterThan(0);
    await c.close();
  });

  it('at most 16 sessions per sandbox: the least recently used is closed for a new one', async () => {
    const box = await clawBox();
    const clients = [];
    for (let i = 0; i < 17; i++) clients.push(await connect(box.url, box.token));
    await expect(clients[0].listTools()).rejects.toThrow();
    expect((await clients[16].listTools()).tools.length).toBeGreaterThan(0);
    for (const c of clients) await c.close().catch(() => undefined);
    await api(s, 'DELETE', `/sandboxes/${box.id}`);
  });

  it('a deleted sandbox: its sessions end and its token answers 410 sandbox_closed', async () => {
    const box = await clawBox();
    const c = await connect(box.url, box.token);
    await api(s, 'DELETE', `/sandboxes/${box.id}`);
    await expect(c.listTools()).rejects.toThrow();
    const r = await rawPost(box.url, INIT, bearer(box.token));
    expect([r.status, r.json.error.data.code]).toEqual([410, 'sandbox_closed']);
    await c.close().catch(() => undefined);
  });
});
