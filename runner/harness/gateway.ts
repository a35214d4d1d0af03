// A browser harness's only door to its browser sandbox: a small HTTP server on its own loopback origin with a
// per-run token that offers exactly `GET /observation` and `POST /step` of one sandbox, relayed to Grove's API
// with Grove's key (which never enters the sandbox). The harness's shell sandbox gets this origin opened, never
// Grove's API port.
//
// The harness is untrusted: the path is compared exactly (no prefix, no decoding, no query forwarded), nothing of
// its request but the step body is relayed (no header, no sandbox id, no path), the body is a JSON object of at
// most MAX_BODY bytes of valid UTF-8, and a failure answers a code and Grove's own client-facing message, never
// Grove's address or a stack.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GroveClient } from '../../client/index.ts';

export interface BrowserGateway {
  origin: string;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;
const ROUTES = 'this gateway offers GET /observation and POST /step';

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
  res.end(text);
}

const fail = (res: http.ServerResponse, status: number, code: string, message: string, headers?: Record<string, string>) => send(res, status, { error: { code, message } }, headers);

/** The body as a JSON object, or an error answer already sent (null). */
function readStepBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<Record<string, unknown> | null> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY) {
      fail(res, 413, 'payload_too_large', `The body is larger than ${MAX_BODY} bytes.`, { connection: 'close' });
      req.destroy();
      return resolve(null);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size <= MAX_BODY) return void chunks.push(c);
      done = true;
      fail(res, 413, 'payload_too_large', `The body is larger than ${MAX_BODY} bytes.`, { connection: 'close' });
      res.once('finish', () => req.destroy());
      resolve(null);
    });
    req.on('error', () => {
      done = true;
      resolve(null);
    });
    req.on('end', () => {
      if (done) return;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        fail(res, 400, 'invalid_request', 'The body is not valid UTF-8.');
        return resolve(null);
      }
      let body: unknown;
      try {
        body = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        fail(res, 400, 'invalid_request', 'The body is not valid JSON.');
        return resolve(null);
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        fail(res, 400, 'invalid_request', 'The body must be a JSON object: {"action": {...}}, {"actions": [...]} or {"format", "model_output"}.');
        return resolve(null);
      }
      if ((body as { screenshot?: unknown }).screenshot === 'binary') {
        fail(res, 400, 'invalid_request', 'This gateway answers JSON: screenshot "base64" or "none".');
        return resolve(null);
      }
      resolve(body as Record<string, unknown>);
    });
  });
}

/** Grove's answer to a relayed call that failed, as the harness may see it. */
function relayError(res: http.ServerResponse, err: unknown): void {
  const e = err as { status?: number; code?: string; message?: string };
  // status 0: Grove was not reached (its address is in the transport's message): say so, and nothing more.
  if (!e.status) return fail(res, 502, 'grove_unreachable', 'The sandbox service could not be reached.');
  const code = typeof e.code === 'string' ? e.code.slice(0, 60) : 'error';
  const message = typeof e.message === 'string' ? e.message.slice(0, 1000) : 'The call failed.';
  fail(res, e.status >= 400 && e.status < 500 ? e.status : 502, code, message);
}

export async function startBrowserGateway(client: GroveClient, sandboxId: string): Promise<BrowserGateway> {
  const token = randomBytes(24).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  const server = http.createServer((req, res) => {
    const given = Buffer.from(String(req.headers.authorization ?? ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return fail(res, 401, 'unauthorized', 'send Authorization: Bearer $GROVE_BROWSER_TOKEN', { connection: 'close' });
    }
    // The raw request target, compared exactly: `/step/../x`, `//step`, `/%73tep` are not routes here.
    const target = req.url ?? '';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    if (path !== '/observation' && path !== '/step') return fail(res, 404, 'not_found', ROUTES);
    if (path === '/observation' && req.method !== 'GET') return fail(res, 405, 'method_not_allowed', ROUTES, { allow: 'GET' });
    if (path === '/step' && req.method !== 'POST') return fail(res, 405, 'method_not_allowed', ROUTES, { allow: 'POST' });
    void (async () => {
      try {
        if (path === '/observation') return send(res, 200, await client.observation(sandboxId));
        const body = await readStepBody(req, res);
        if (body) send(res, 200, await client.step(sandboxId, body as never));
      } catch (err) {
        relayError(res, err);
      }
    })();
  });
  // A harness holds at most a few connections; a slow or endless request is cut.
  server.maxConnections = 32;
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    token,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    }),
  };
}
