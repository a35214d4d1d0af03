// GET /sandboxes/{id}/mcp/token through GroveClient.mcpToken (app.inject, no port): the address card opens the
// sandbox's MCP endpoint and nothing else; Grove's key is needed for it, ids are checked, other sandboxes' tokens fail.
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { GroveApiError, GroveClient } from '../../client/index.ts';
import { SandboxTokens } from '../../mcp/tokens.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'mcp-token-test-key-42';
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

async function setup() {
  const app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY, maxSandboxes: 4 } }), backend: new MemoryBackend() });
  apps.push(app);
  const as = (apiKey: string) => clientAs(app, apiKey);
  return { app, client: as(KEY), as };
}

/** GroveClient over app.inject() with this key. */
function clientAs(app: FastifyInstance, apiKey: string): GroveClient {
  const fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const res = await app.inject({ method: (init.method ?? 'GET') as 'GET', url: url.pathname + url.search, headers: init.headers as Record<string, string>, payload: init.body as string | undefined });
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: res.headers as Record<string, string> });
  }) as typeof globalThis.fetch;
  return new GroveClient({ baseUrl: 'http://grove.test', apiKey, fetch });
}

/** An MCP POST with a bearer token: the status and Grove's code (error.data.code) of the JSON-RPC answer. */
async function mcpPost(app: FastifyInstance, path: string, token: string): Promise<[number, string | undefined]> {
  const res = await app.inject({
    method: 'POST', url: path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return [res.statusCode, (res.json() as { error?: { data?: { code?: string } } }).error?.data?.code];
}

describe('GroveClient.mcpToken', () => {
  it('answers the MCP address card; the token opens that sandbox\'s endpoint and not another\'s', async () => {
    const { app, client } = await setup();
    const a = await client.createAndWait({ type: 'shell' }, 5);
    const b = await client.createAndWait({ type: 'shell' }, 5);
    const card = await client.mcpToken(a.sandbox_id);
    expect(card).toEqual({
      sandbox_id: a.sandbox_id, server: 'grove-shell', path: `/sandboxes/${a.sandbox_id}/mcp`,
      token: new SandboxTokens(KEY).tokenFor(a.sandbox_id), transport: 'streamable-http',
    });
    // The token passes the endpoint's check (then: no session yet, 400), and is refused on b's endpoint (403).
    expect(await mcpPost(app, card.path, card.token)).toEqual([400, 'invalid_request']);
    expect(await mcpPost(app, `/sandboxes/${b.sandbox_id}/mcp`, card.token)).toEqual([403, 'forbidden']);
    // It opens none of Grove's API: as an API key it is a wrong key, and it cannot fetch tokens.
    const asKey = await clientAs(app, card.token).mcpToken(a.sandbox_id).catch((e: unknown) => e);
    expect(asKey).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('attacker: no key, wrong key, unknown, too long or encoded ids, a deleted sandbox answer stable codes', async () => {
    const { app, client, as } = await setup();
    const a = await client.createAndWait({ type: 'shell' }, 5);
    const codeOf = async (p: Promise<unknown>) => {
      const e = await p.then(() => null, (err: unknown) => err);
      expect(e).toBeInstanceOf(GroveApiError);
      return [(e as GroveApiError).status, (e as GroveApiError).code];
    };
    expect(await codeOf(as('').mcpToken(a.sandbox_id))).toEqual([401, 'unauthorized']);
    expect(await codeOf(as('not-the-key').mcpToken(a.sandbox_id))).toEqual([403, 'forbidden']);
    expect(await codeOf(client.mcpToken('no-such-sandbox'))).toEqual([404, 'sandbox_not_found']);
    expect(await codeOf(client.mcpToken('x'.repeat(101)))).toEqual([400, 'invalid_request']);
    expect(await codeOf(client.mcpToken('../../health'))).toEqual([404, 'sandbox_not_found']);
    await client.deleteSandbox(a.sandbox_id);
    const [status, code] = await codeOf(client.mcpToken(a.sandbox_id));
    expect([status, code]).toEqual([410, 'sandbox_closed']);
    // No stack or internals in any of these answers.
    const raw = await app.inject({ method: 'GET', url: '/sandboxes/%ZZ/mcp/token', headers: { 'x-api-key': KEY } });
    expect(raw.statusCode).toBe(400);
    expect(raw.body).not.toMatch(/at \w+ \(|node_modules/);
  });
});
