// One plain-HTTP request through the network gate: sent to the checked addresses on the sandbox's keep-alive
// agent, the answer streamed back, an upstream failure answered with 502 and its class.
//
// A pooled connection can be closed by the server at the moment the gate reuses it (Node's own http server drops
// idle connections after 5 s, nginx after 75 s, ...): the request then fails with a reset before any answer, and
// the server never saw it. Browsers send such a request again on a fresh connection (Chromium's
// HttpNetworkTransaction does so when the connection was reused and nothing was received yet); the gate does the
// same, once, or the page would show a `connection_reset` error that no real browser shows. Seen in CI: a sandbox
// reopened after a hang loaded its last URL ~5 s after the first load and got the gate's error page instead.
import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import type net from 'node:net';
import type { Logger } from '../sandbox/log.ts';
import { classifyUpstreamError, filterHeaders, HEADER_ERROR, type UpstreamError } from './gate-wire.ts';

/** Request bodies up to this size are kept for sending again; a larger one is not retried. */
export const REPLAY_MAX_BYTES = 1 << 20;

/** Errors of a reused connection the server closed: the request never reached it. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

export interface ForwardTarget {
  /** Host name as the request names it (for the Host header; the connection goes to `addresses`). */
  host: string;
  port: number;
  /** The checked addresses: the only ones connected to, no second lookup. */
  addresses: string[];
  /** Path and query. */
  path: string;
  agent: http.Agent;
  connectTimeoutMs: number;
}

export interface ForwardHooks {
  /** The request failed upstream; the browser gets a 502 with this class. */
  failed(code: UpstreamError): void;
  /** A reused connection was found closed; the request is being sent again on a fresh one. */
  retried(): void;
  log: Logger;
}

/** The request body as far as it was read, while it fits in REPLAY_MAX_BYTES. */
class BodyCopy {
  chunks: Buffer[] = [];
  bytes = 0;
  constructor(req: http.IncomingMessage) {
    req.on('data', (c: Buffer) => {
      this.bytes += c.length;
      if (this.bytes <= REPLAY_MAX_BYTES) this.chunks.push(c);
      else this.chunks = [];
    });
  }
  get replayable(): boolean {
    return this.bytes <= REPLAY_MAX_BYTES;
  }
}

export function forwardHttp(req: http.IncomingMessage, res: http.ServerResponse, t: ForwardTarget, hooks: ForwardHooks): void {
  const body = new BodyCopy(req);
  const family = (a: string) => (a.includes(':') ? 6 : 4);
  let current: http.ClientRequest | undefined;

  const send = (retry: boolean): void => {
    const upReq = http.request({
      host: t.host,
      port: t.port,
      method: req.method,
      path: t.path,
      headers: filterHeaders(req.rawHeaders) as unknown as http.OutgoingHttpHeaders,
      agent: t.agent,
      setHost: false,
      // Connect only to the addresses that were checked: never a second DNS lookup.
      lookup: ((_h: string, o: { all?: boolean }, cb: (...args: unknown[]) => void) => {
        if (o?.all) cb(null, t.addresses.map((address): LookupAddress => ({ address, family: family(address) })));
        else cb(null, t.addresses[0], family(t.addresses[0]));
      }) as unknown as net.LookupFunction,
    });
    current = upReq;
    upReq.on('socket', (socket) => {
      if (!socket.connecting) return;
      socket.setTimeout(t.connectTimeoutMs, () => socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
      socket.once('connect', () => socket.setTimeout(0));
    });
    upReq.on('response', (upRes) => {
      upRes.on('error', () => res.destroy());
      try {
        res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, filterHeaders(upRes.rawHeaders) as unknown as http.OutgoingHttpHeaders);
      } catch (err) {
        // Headers Node refuses to relay (invalid characters): the browser sees a dropped connection.
        hooks.log.debug({ err }, 'network gate could not relay response headers');
        upRes.destroy();
        res.destroy();
        return;
      }
      upRes.pipe(res);
    });
    upReq.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (res.destroyed) return;
      const code = (err as { code?: string }).code ?? '';
      if (!retry && upReq.reusedSocket && STALE_CONNECTION.has(code) && body.replayable) {
        hooks.retried();
        send(true);
        return;
      }
      const cls = classifyUpstreamError(err);
      hooks.failed(cls);
      res.writeHead(502, { [HEADER_ERROR]: cls, 'content-type': 'text/plain' }).end(`${cls}\n`);
    });
    if (!retry) {
      req.pipe(upReq);
      return;
    }
    // The body read so far goes out again; the rest, if any, follows as it arrives.
    for (const c of body.chunks) upReq.write(c);
    if (req.readableEnded) upReq.end();
    else req.pipe(upReq);
  };

  // The browser gave up (navigation, tab closed): stop the upstream work too.
  res.on('close', () => {
    if (!res.writableFinished) current?.destroy();
  });
  req.on('error', () => current?.destroy());
  send(false);
}
