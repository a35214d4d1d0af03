// Attacker's tests of a harness run's MCP gateway (runner/harness/mcp-gateway.ts): the SDK client reaches the
// sandbox's tools through it with the sandbox's token; nothing else of Grove is reachable through it (exact paths,
// methods, no header but MCP's relayed), bodies are bounded, and Grove's address never shows.
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpGateway, type McpGateway } from '../../runner/harness/mcp-gateway.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { closedPort } from '../runner/harness.ts';
import { connect, createSandbox, INIT, mcpAccess, type Served } from './support.ts';

const KEY = 'mcp-gateway-test-key-0123456789';
let app: FastifyInstance;
let s: Served;
let gw: McpGateway;
let box: { id: string; token: string };

/** A request with the raw target as given (no URL normalisation). */
function raw(target: string, method = 'POST', body = INIT, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const u = new URL(gw.origin);
  return new Promise((ok, fail) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => ok({ status: res.statusCode!, text }));
    });
    req.on('error', fail);
    req.end(method === 'GET' ? undefined : body);
  });
}

beforeAll(async () => {
  app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY } }), environments: {} });
  s = { url: await app.listen({ host: '127.0.0.1', port: 0 }), key: KEY };
  const info = await createSandbox(s, { type: 'claw', world_seed: 1, apps: ['todo'] });
  box = { id: info.sandbox_id, token: (await mcpAccess(s, info.sandbox_id)).token };
  gw = await startMcpGateway(s.url, { claw: box.id });
});
afterAll(async () => {
  await gw?.close();
  await app?.close();
});

describe('the harness\'s MCP gateway', () => {
  it('relays the sandbox\'s MCP server to the SDK client (the sandbox\'s token, no Grove key)', async () => {
    const c = await connect(gw.url('claw'), box.token);
    const r = await c.callTool({ name: 'todo_list', arguments: {} });
    expect(r.isError).toBeFalsy();
    await c.close();
  });

  it('serves exactly /claw/mcp: other paths, encodings, traversals and methods are refused here', async () => {
    for (const target of ['/', '/sandboxes', `/sandboxes/${box.id}/mcp`, '/claw/mcp/', '//claw/mcp', '/%63law/mcp', '/claw/MCP', '/claw/mcp/../mcp', '/claw/mcp/token', '/browser/mcp', '/health']) {
      const r = await raw(target, 'POST', INIT, { authorization: `Bearer ${box.token}` });
      expect([r.status, JSON.parse(r.text).error.data.code], target).toEqual([404, 'not_found']);
    }
    expect((await raw('/claw/mcp', 'PUT')).status).toBe(405);
    // A query string is dropped, not forwarded (it cannot reach Grove's routes).
    expect((await raw('/claw/mcp?x=../../sandboxes', 'POST', INIT, { authorization: `Bearer ${box.token}` })).status).toBe(200);
  });

  it('relays Grove\'s token checks: none is 401, Grove\'s key in x-api-key opens nothing', async () => {
    expect((await raw('/claw/mcp')).status).toBe(401);
    expect((await raw('/claw/mcp', 'POST', INIT, { 'x-api-key': KEY })).status).toBe(401);
    expect((await raw('/claw/mcp', 'POST', INIT, { authorization: `Bearer ${KEY}` })).status).toBe(403);
  });

  it('a body over the limit is 413 (declared or streamed)', async () => {
    const big = 'x'.repeat(9 * 1024 * 1024);
    const r = await raw('/claw/mcp', 'POST', big, { authorization: `Bearer ${box.token}` }).catch(() => ({ status: 413, text: '' }));
    expect(r.status).toBe(413);
  });

  it('Grove unreachable: 502 grove_unreachable, no address in the answer', async () => {
    const port = await closedPort();
    const dead = await startMcpGateway(`http://127.0.0.1:${port}`, { claw: box.id });
    try {
      const res = await fetch(dead.url('claw'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: INIT });
      const text = await res.text();
      expect(res.status).toBe(502);
      expect(JSON.parse(text).error.data.code).toBe('grove_unreachable');
      expect(text).not.toContain(String(port));
    } finally {
      await dead.close();
    }
  });
});
