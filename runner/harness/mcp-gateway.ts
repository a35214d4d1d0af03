// A harness's door to the MCP servers of its task's sandboxes: a small fastify relay on its own loopback origin that
// serves exactly `/<name>/mcp` for the few sandboxes of one run and relays each request to Grove's
// `/sandboxes/<id>/mcp`, streaming the answer (JSON or server-sent events) back. The harness's shell sandbox gets
// this origin opened, never Grove's API port; the sandbox's own MCP token (Authorization: Bearer) is what Grove
// checks, so the relay holds no key at all.
//
// The harness is untrusted: the raw request target is compared exactly (no prefix, no decoding, no query forwarded:
// one catch-all route, not the router's matching), only the MCP headers are relayed (authorization, content-type,
// accept, mcp-session-id, mcp-protocol-version, last-event-id), a body is at most MAX_BODY bytes (streamed through,
// not buffered), and a failure to reach Grove is a JSON-RPC error naming no address.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply } from 'fastify';

export interface McpGateway {
  origin: string;
  /** The MCP URL of a named server of this run. */
  url(name: string): string;
  close(): Promise<void>;
}

const MAX_BODY = 8 * 1024 * 1024 + 64 * 1024;
const REQUEST_HEADERS = ['authorization', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
const RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'www-authenticate', 'cache-control', 'retry-after'];

const rpcBody = (code: string, message: string) => JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message, data: { code } }, id: null });

function rpcError(reply: FastifyReply, status: number, code: string, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send(rpcBody(code, message));
}

/** The same answer on the raw response, once the relay has taken it over (or cut it when it already started). */
function rawError(res: http.ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  const text = rpcBody(code, message);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** `servers`: name → sandbox id. `groveUrl`: Grove's base URL (reached from this process, not from the sandbox). */
export async function startMcpGateway(groveUrl: string, servers: Record<string, string>): Promise<McpGateway> {
  const base = new URL(groveUrl.replace(/\/+$/, '') + '/');
  const routes = new Map(Object.entries(servers).map(([name, id]) => [`/${name}/mcp`, id]));
  const served = `this gateway serves ${[...routes.keys()].join(', ')}`;
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    frameworkErrors: (_err, _req, reply) => void rpcError(reply, 400, 'invalid_request', served),
  });
  // The body is not parsed here: the relay streams the request itself to Grove (counted against MAX_BODY).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  app.setNotFoundHandler((_req, reply) => rpcError(reply, 404, 'not_found', served));
  app.all('*', (req, reply) => {
    const target = req.raw.url ?? '';
    const q = target.indexOf('?');
    const id = routes.get(q < 0 ? target : target.slice(0, q));
    if (id === undefined) return rpcError(reply, 404, 'not_found', served);
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') return rpcError(reply, 405, 'method_not_allowed', 'POST, GET or DELETE', { allow: 'POST, GET, DELETE' });
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) {
      rpcError(reply, 413, 'payload_too_large', `The body is larger than ${MAX_BODY} bytes.`, { connection: 'close' });
      return void reply.raw.once('finish', () => req.raw.destroy());
    }
    // From here the relay writes the answer itself (server-sent events go out as they come).
    reply.hijack();
    const inbound = req.raw;
    const res = reply.raw;
    const headers: Record<string, string> = {};
    for (const h of REQUEST_HEADERS) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    const upstream = http.request(new URL(`sandboxes/${encodeURIComponent(id)}/mcp`, base), { method: req.method, headers }, (up) => {
      const out: Record<string, string> = {};
      for (const h of RESPONSE_HEADERS) {
        const v = up.headers[h];
        if (typeof v === 'string') out[h] = v;
      }
      res.writeHead(up.statusCode ?? 502, out);
      res.flushHeaders();
      up.pipe(res);
    });
    upstream.on('error', () => rawError(res, 502, 'grove_unreachable', 'The sandbox service could not be reached.'));
    // The harness left (or its stream was cut): the relayed request ends too.
    res.on('close', () => upstream.destroy());
    let size = 0;
    inbound.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) return void upstream.write(c);
      upstream.destroy();
      rawError(res, 413, 'payload_too_large', `The body is larger than ${MAX_BODY} bytes.`, { connection: 'close' });
      inbound.destroy();
    });
    inbound.on('end', () => upstream.end());
    inbound.on('error', () => upstream.destroy());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  app.server.maxConnections = 64;
  app.server.headersTimeout = 10_000;
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { origin, url: (name) => `${origin}/${name}/mcp`, close: () => app.close() };
}
