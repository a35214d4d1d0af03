// MCP benchmark: tool-call round trip of a Claw tool through the sandbox's MCP server (/sandboxes/{id}/mcp, the
// SDK's own client over Streamable HTTP, session open) against the same call through Grove's Claw REST route
// (POST /sandboxes/{id}/claw/call), both on one server in this run; plus the MCP call as a bare JSON-RPC POST
// (no SDK client) to split the client's share from the server's. Blocks run interleaved (ABAB) so drift hits every
// side alike. The machine is shared: read the ratios, not the absolutes; under load only a smoke run means anything.
//
//   npm run bench:mcp           (--calls N per block, default 300; --blocks B, default 4)
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../sandbox/config.ts';
import { buildApp } from '../server/app.ts';

const { values } = parseArgs({ options: { calls: { type: 'string' }, blocks: { type: 'string' }, out: { type: 'string' } } });
const CALLS = Number(values.calls ?? 300);
const BLOCKS = Number(values.blocks ?? 4);
const KEY = 'bench-key-0123456789';

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(url: string, body: string, headers: Record<string, string>): Promise<string> {
  return new Promise((ok, fail) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode! < 300 ? ok(Buffer.concat(chunks).toString('utf8')) : fail(new Error(`${url}: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`))));
    });
    req.on('error', fail);
    req.end(body);
  });
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY } }), environments: {} });
const grove = await app.listen({ host: '127.0.0.1', port: 0 });
const H = { 'x-api-key': KEY };
const created = JSON.parse(await post(`${grove}/sandboxes`, JSON.stringify({ type: 'claw', world_seed: 1 }), H));
const id: string = created.sandbox_id;
await (await fetch(`${grove}/sandboxes/${id}/wait?timeout=10`, { headers: H })).json();
const access = await (await fetch(`${grove}/sandboxes/${id}/mcp/token`, { headers: H })).json();
const mcpUrl = `${grove}${access.path}`;
const bearer = { authorization: `Bearer ${access.token}` };

const client = new Client({ name: 'grove-bench', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: bearer } }));
// A second session for the bare JSON-RPC side (initialize by hand, as any client does).
const init = await fetch(mcpUrl, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
await init.text();
const rawH = { ...bearer, accept: 'application/json, text/event-stream', 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
await post(mcpUrl, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), rawH);

const ARGS = { status: 'all' };
const REST = JSON.stringify({ tool: 'todo_list', arguments: ARGS });
let rpcId = 1;
const sides: Record<string, () => Promise<unknown>> = {
  claw_rest: () => post(`${grove}/sandboxes/${id}/claw/call`, REST, H),
  mcp_sdk_client: () => client.callTool({ name: 'todo_list', arguments: ARGS }),
  mcp_jsonrpc_post: () => post(mcpUrl, JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name: 'todo_list', arguments: ARGS } }), rawH),
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (const fn of Object.values(sides)) for (let i = 0; i < 30; i++) await fn(); // warm-up
for (let b = 0; b < BLOCKS; b++) {
  const order = b % 2 ? Object.keys(sides).reverse() : Object.keys(sides);
  for (const k of order) {
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      await sides[k]();
      samples[k].push(performance.now() - t0);
    }
  }
}
const rt = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, { p50: pct(xs, 0.5), p99: pct(xs, 0.99), n: xs.length }]));
const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
const f = (x: number) => x.toFixed(3);
const lines = [
  `Grove MCP benchmark (${os.cpus().length} cores, load average ${load}: read the ratios)`,
  `Claw tool-call round trip, todo_list, ${BLOCKS} interleaved blocks x ${CALLS} calls:`,
  ...Object.entries(rt).map(([k, v]) => `  ${k.padEnd(17)} p50 ${f(v.p50)} ms   p99 ${f(v.p99)} ms`),
  `  MCP (SDK client) p50 / Claw REST p50 = ${(rt.mcp_sdk_client.p50 / rt.claw_rest.p50).toFixed(2)}`,
  `  MCP (bare JSON-RPC POST) p50 / Claw REST p50 = ${(rt.mcp_jsonrpc_post.p50 / rt.claw_rest.p50).toFixed(2)}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
if (values.out !== 'none') {
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'mcp.json'), JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, load_average: os.loadavg(), config: { calls: CALLS, blocks: BLOCKS }, round_trip_ms: rt, ratio_mcp_sdk_vs_rest_p50: rt.mcp_sdk_client.p50 / rt.claw_rest.p50, ratio_mcp_post_vs_rest_p50: rt.mcp_jsonrpc_post.p50 / rt.claw_rest.p50, printed: lines }, null, 2));
}
await client.close();
await app.close();
agent.destroy();
