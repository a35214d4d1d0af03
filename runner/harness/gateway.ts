// A browser harness's only door to its browser sandbox: a small fastify server on its own loopback origin with a
// per-run token that offers exactly `GET /observation` and `POST /step` of one sandbox, relayed to Grove's API
// with Grove's key (which never enters the sandbox). The harness's shell sandbox gets this origin opened, never
// Grove's API port.
//
// The harness is untrusted: the raw request target is compared exactly (no prefix, no decoding, no query
// forwarded: one catch-all route, not the router's matching), nothing of its request but the step body is relayed
// (no header, no sandbox id, no path), the body is a JSON object of at most MAX_BODY bytes of valid UTF-8 (read
// raw, whatever the content type), and every answer, a failure included, is `{error: {code, message}}` with Grove's
// own client-facing message, never Grove's address or a stack.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply } from 'fastify';
import type { GroveClient } from '../../client/index.ts';

export interface BrowserGateway {
  origin: string;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;
const ROUTES = 'this gateway offers GET /observation and POST /step';
const HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

function fail(reply: FastifyReply, status: number, code: string, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers({ ...HEADERS, ...headers }).type('application/json; charset=utf-8').send({ error: { code, message } });
}

/** The step body as a JSON object, or why it is not one. */
function stepBody(raw: unknown): Record<string, unknown> | string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
  } catch {
    return 'The body is not valid UTF-8.';
  }
  let body: unknown;
  try {
    body = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return 'The body is not valid JSON.';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'The body must be a JSON object: {"action": {...}}, {"actions": [...]} or {"format", "model_output"}.';
  }
  if ((body as { screenshot?: unknown }).screenshot === 'binary') return 'This gateway answers JSON: screenshot "base64" or "none".';
  return body as Record<string, unknown>;
}

/** Grove's answer to a relayed call that failed, as the harness may see it. */
function relayError(reply: FastifyReply, err: unknown): FastifyReply {
  const e = err as { status?: number; code?: string; message?: string };
  // status 0: Grove was not reached (its address is in the transport's message): say so, and nothing more.
  if (!e.status) return fail(reply, 502, 'grove_unreachable', 'The sandbox service could not be reached.');
  const code = typeof e.code === 'string' ? e.code.slice(0, 60) : 'error';
  const message = typeof e.message === 'string' ? e.message.slice(0, 1000) : 'The call failed.';
  return fail(reply, e.status >= 400 && e.status < 500 ? e.status : 502, code, message);
}

export async function startBrowserGateway(client: GroveClient, sandboxId: string): Promise<BrowserGateway> {
  const token = randomBytes(24).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY,
    // A slow or endless request is cut; closing cuts the harness's open connections.
    requestTimeout: 60_000,
    forceCloseConnections: true,
    // A bad request target or header is a 400 in the gateway's error shape (fastify's own answers would differ).
    frameworkErrors: (_err, _req, reply) => void fail(reply, 400, 'invalid_request', ROUTES),
  });
  // The body is read raw, whatever the content type says (checked by stepBody); fastify enforces MAX_BODY, as
  // declared (413 before reading) or as streamed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err: { statusCode?: number }, _req, reply) =>
    err.statusCode === 413
      ? fail(reply, 413, 'payload_too_large', `The body is larger than ${MAX_BODY} bytes.`, { connection: 'close' })
      : err.statusCode && err.statusCode < 500
        ? fail(reply, 400, 'invalid_request', 'The request could not be read.')
        : relayError(reply, err),
  );
  app.setNotFoundHandler((_req, reply) => fail(reply, 404, 'not_found', ROUTES));
  // The token before anything else, for every target.
  app.addHook('onRequest', async (req, reply) => {
    const given = Buffer.from(String(req.headers.authorization ?? ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return fail(reply, 401, 'unauthorized', 'send Authorization: Bearer $GROVE_BROWSER_TOKEN', { connection: 'close' });
    }
  });
  app.all('*', async (req, reply) => {
    // The raw request target, compared exactly: `/step/../x`, `//step`, `/%73tep` are not routes here.
    const target = req.raw.url ?? '';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    if (path !== '/observation' && path !== '/step') return fail(reply, 404, 'not_found', ROUTES);
    if (path === '/observation' && req.method !== 'GET') return fail(reply, 405, 'method_not_allowed', ROUTES, { allow: 'GET' });
    if (path === '/step' && req.method !== 'POST') return fail(reply, 405, 'method_not_allowed', ROUTES, { allow: 'POST' });
    try {
      if (path === '/observation') return reply.headers(HEADERS).send(await client.observation(sandboxId));
      const body = stepBody(req.body);
      if (typeof body === 'string') return fail(reply, 400, 'invalid_request', body);
      return reply.headers(HEADERS).send(await client.step(sandboxId, body as never));
    } catch (err) {
      return relayError(reply, err);
    }
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  // A harness holds at most a few connections; a request whose headers do not come is cut.
  app.server.maxConnections = 32;
  app.server.headersTimeout = 10_000;
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { origin, token, close: () => app.close() };
}
