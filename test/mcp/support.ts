// Shared setup of the MCP tests: Grove's server listening on loopback, sandboxes created through its API, and the
// MCP SDK's own client connected to a sandbox's /sandboxes/{id}/mcp with that sandbox's token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request, type Answer } from '../support/http-api.ts';

export interface Served {
  url: string;
  key: string;
}

export async function api(s: Served, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${s.url}${path}`, { method, headers: { 'x-api-key': s.key, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Creates a sandbox and waits until it is ready. */
export async function createSandbox(s: Served, body: Record<string, unknown>): Promise<any> {
  const info = await api(s, 'POST', '/sandboxes', body);
  const ready = await api(s, 'GET', `/sandboxes/${info.sandbox_id}/wait?timeout=120`);
  if (ready.status !== 'ready') throw new Error(`sandbox ${info.sandbox_id}: ${JSON.stringify(ready)}`);
  return ready;
}

/** The sandbox's MCP address and token (Grove's key asks for them). */
export async function mcpAccess(s: Served, id: string): Promise<{ url: string; token: string; server: string }> {
  const t = await api(s, 'GET', `/sandboxes/${id}/mcp/token`);
  return { url: `${s.url}${t.path}`, token: t.token, server: t.server };
}

/** The SDK's client, connected over Streamable HTTP with a bearer token. */
export async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'grove-test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

/** A raw JSON-RPC POST (what an attacker can send). */
export function rawPost(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  return request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
}

export const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
