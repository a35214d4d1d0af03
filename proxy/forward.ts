// One model call through the proxy: rewrite the body, send it upstream, stream the answer back to the harness
// as it arrives (SSE included) while keeping its bytes, then append the record. Upstream failures reach the
// harness faithfully: an upstream status and body pass unchanged; an unreachable upstream is a 502 and a call
// past its deadline a 504, both in the OpenAI error shape.
import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { assembleStream } from './sse.ts';
import { rewriteRequest } from './rewrite.ts';
import type { ResolvedCall } from './rollout.ts';
import { GROVE_KEY, ROLLOUT_HEADER } from './rollout.ts';
import { sendError } from './errors.ts';
import type { RecordStore } from './store.ts';
import type { CallRecord, ProxyOptions } from './types.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length', ROLLOUT_HEADER]);

const agentOptions = { keepAlive: true, maxSockets: 1024, maxFreeSockets: 256 };
const httpAgent = new http.Agent(agentOptions);
const httpsAgent = new https.Agent(agentOptions);

/** The upstream URL of an endpoint, or null when its path does not decode or could leave the upstream's API prefix:
 * a `.` or `..` segment, plain or encoded (`%2e%2e`, `..%2f`, `..%5c`, which some servers decode before routing). */
export function upstreamUrl(upstream: string, endpoint: string): URL | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(endpoint.split('?')[0]);
  } catch {
    return null;
  }
  if (decoded.split(/[\\/]/).some((seg) => seg === '.' || seg === '..')) return null;
  const prefix = upstream.replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(prefix + endpoint);
  } catch {
    return null;
  }
  const base = new URL(prefix);
  return url.origin === base.origin && url.pathname.startsWith(`${base.pathname.replace(/\/+$/, '')}/`) ? url : null;
}

function upstreamHeaders(req: http.IncomingMessage, call: ResolvedCall, opts: ProxyOptions, length: number): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  // A per-rollout key is the proxy's, not the upstream's: a keyed call's auth headers stay here, and so does any
  // header that carries something shaped like a key, in whatever header a client put it.
  for (const [k, v] of Object.entries(req.headers)) {
    if (HOP_BY_HOP.has(k) || v === undefined) continue;
    if ((Array.isArray(v) ? v : [v]).some((x) => GROVE_KEY.test(x))) continue;
    out[k] = v;
  }
  // The upstream key goes in the scheme the harness used (x-api-key for Anthropic clients).
  const anthropicStyle = req.headers['x-api-key'] !== undefined;
  if (call.keyed) {
    delete out.authorization;
    delete out['x-api-key'];
  }
  if (opts.upstreamKey) {
    out.authorization = `Bearer ${opts.upstreamKey}`;
    if (anthropicStyle) out['x-api-key'] = opts.upstreamKey;
  }
  out['content-length'] = String(length);
  return out;
}

function flatHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export interface ForwardContext {
  opts: ProxyOptions;
  store: RecordStore;
}

/** Forwards one call; resolves when its record is on disk and the harness has its whole answer. */
export async function forwardCall(ctx: ForwardContext, req: http.IncomingMessage, res: http.ServerResponse, call: ResolvedCall, bodyBuf: Buffer): Promise<void> {
  const { opts } = ctx;
  const arrived = performance.now();
  const started_at = new Date().toISOString();
  const requestText = bodyBuf.toString('utf8');
  let asked: unknown = null;
  let isJson = false;
  if (requestText.length) {
    try {
      asked = JSON.parse(requestText);
      isJson = true;
    } catch {
      asked = null;
    }
  }
  const { sent, rewritten } = isJson ? rewriteRequest(call.endpoint, asked, opts.rewrite) : { sent: asked, rewritten: false };
  const outBody = rewritten ? Buffer.from(JSON.stringify(sent)) : bodyBuf;
  const stream = isJson && (sent as { stream?: unknown } | null)?.stream === true;
  const base = upstreamUrl(opts.upstream, call.endpoint);
  if (!base) return sendError(res, 400, 'invalid_path', `the path ${call.endpoint.split('?')[0].slice(0, 100)} is not valid percent-encoding or leaves the API prefix`);
  const record: CallRecord = {
    v: 1,
    call_id: `call_${randomBytes(9).toString('base64url')}`,
    rollout_id: call.rollout,
    rollout_source: call.source,
    seq: await ctx.store.nextSeq(call.rollout),
    method: req.method ?? 'POST',
    endpoint: call.endpoint,
    started_at,
    ttfb_ms: null,
    duration_ms: 0,
    request_asked: asked,
    request_sent: sent,
    ...(isJson ? {} : { request_text: requestText }),
    rewritten,
    stream,
    status: 0,
    response_headers: {},
    response_text: '',
    usage: null,
    error: null,
  };
  const chunks: Buffer[] = [];
  // The proxy's own error answer (502/504) is sent after the record is written, like every answer's end.
  let reply = null as { status: number; type: string; message: string } | null;
  await new Promise<void>((done) => {
    let finished = false;
    const finish = (err?: { kind: string; message: string }) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (err && !record.error) record.error = err;
      done();
    };
    let client: http.ClientRequest;
    const send = (retry: boolean) => {
      client = (base.protocol === 'https:' ? https : http).request(base, {
        method: req.method,
        headers: upstreamHeaders(req, call, opts, outBody.length),
        agent: base.protocol === 'https:' ? httpsAgent : httpAgent,
      });
      client.on('response', onResponse);
      client.on('error', (e: NodeJS.ErrnoException) => {
        if (finished) return;
        // A kept-alive socket the upstream closed as we reused it: the request never reached it; send it once more.
        if (retry && client.reusedSocket && e.code === 'ECONNRESET' && !record.status) return send(false);
        if (!record.status) record.status = 502;
        reply = { status: 502, type: 'upstream_unreachable', message: `the upstream could not be reached: ${e.message}` };
        finish({ kind: 'upstream_unreachable', message: e.message });
      });
      client.end(outBody);
    };
    const timer = setTimeout(() => {
      client.destroy();
      reply = { status: 504, type: 'upstream_timeout', message: `the upstream did not finish within ${opts.callTimeoutMs} ms` };
      if (!record.status) record.status = 504;
      finish({ kind: 'upstream_timeout', message: `no complete answer within ${opts.callTimeoutMs} ms` });
    }, opts.callTimeoutMs);
    res.on('close', () => {
      if (!res.writableFinished && !finished) {
        client.destroy();
        finish({ kind: 'client_aborted', message: 'the harness closed the connection before the answer ended' });
      }
    });
    const onResponse = (up: http.IncomingMessage) => {
      record.status = up.statusCode ?? 0;
      record.response_headers = flatHeaders(up.headers);
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
      if (!res.headersSent) res.writeHead(record.status, headers);
      if (record.status >= 400) record.error = { kind: 'upstream_error', message: `upstream answered ${record.status}` };
      up.on('data', (c: Buffer) => {
        if (record.ttfb_ms === null) record.ttfb_ms = Math.round((performance.now() - arrived) * 10) / 10;
        chunks.push(c);
        res.write(c);
      });
      // The response is ended only after the record is on disk (below): a harness that saw its answer end
      // can rely on the call being recorded, even if the proxy is killed right after.
      up.on('end', () => finish());
      up.on('error', (e) => {
        res.destroy();
        finish({ kind: 'upstream_unreachable', message: `upstream stream broke: ${e.message}` });
      });
    };
    send(true);
  });
  record.duration_ms = Math.round((performance.now() - arrived) * 10) / 10;
  record.response_text = Buffer.concat(chunks).toString('utf8');
  const contentType = record.response_headers['content-type'] ?? '';
  if (contentType.includes('text/event-stream')) {
    const { assembled, malformed } = assembleStream(call.endpoint, record.response_text);
    record.assembled = assembled;
    record.sse_malformed = malformed;
    record.usage = (assembled?.usage as Record<string, unknown> | undefined) ?? null;
  } else if (contentType.includes('json')) {
    try {
      record.usage = (JSON.parse(record.response_text) as { usage?: Record<string, unknown> }).usage ?? null;
    } catch {
      record.usage = null;
    }
  }
  try {
    await ctx.store.append(record);
  } finally {
    // An error after the answer began (a stream cut by the deadline) can only be told by cutting the connection.
    if (reply) sendError(res, reply.status, reply.type, reply.message);
    else if (!res.writableEnded && !res.destroyed) res.end();
  }
}
