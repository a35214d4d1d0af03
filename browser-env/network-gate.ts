// The network gate: an in-process filtering HTTP proxy on 127.0.0.1 that every browser context uses
// (Playwright's per-context `proxy` option). A proxy rather than `context.route`, because routes do not
// see WebSockets; the proxy sees plain HTTP, CONNECT (TLS, wss) and ws upgrades alike.
//
// Each sandbox gets its own listening port, so the port identifies the sandbox. (Proxy credentials would
// also work, but Playwright answers 407 challenges by intercepting every request with the Fetch domain,
// which costs latency on the step path.)
//
// The gate resolves DNS itself, checks every address with sandbox/netpolicy.ts and connects to the
// checked addresses: no second lookup, so no DNS-rebinding window. A redirect is a new request and is
// checked again.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import net from 'node:net';
import type { NetworkRules } from '../protocol/sandbox.ts';
import {
  BLOCKED_HTML,
  decideTarget,
  classifyUpstreamError,
  connectAny,
  filterHeaders,
  HEADER_BLOCKED,
  HEADER_ERROR,
  rawResponse,
  splice,
  type BlockedEvent,
  type NetworkGate,
  type NetworkGateOptions,
  type UpstreamError,
  type UpstreamErrorEvent,
} from './gate-wire.ts';
import { forwardHttp } from './gate-forward.ts';

export { classifyUpstreamError } from './gate-wire.ts';
export type { BlockedEvent, NetworkGate, NetworkGateOptions, UpstreamErrorEvent } from './gate-wire.ts';
import { splitHostPort } from '../sandbox/netpolicy.ts';
import { silentLogger } from '../sandbox/log.ts';

interface Sandbox {
  id: string;
  rules: NetworkRules;
  onBlocked?: (e: BlockedEvent) => void;
  onUpstreamError?: (e: UpstreamErrorEvent) => void;
  server: http.Server;
  port: number;
  agent: http.Agent;
  /** Raw sockets handed over by CONNECT / upgrade (the http server no longer tracks them). */
  tunnels: Set<net.Socket>;
}

export async function startNetworkGate(opts: NetworkGateOptions = {}): Promise<NetworkGate> {
  const log = opts.log ?? silentLogger;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
  const resolve =
    opts.lookup ??
    (async (host: string) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address));
  const sandboxes = new Map<string, Sandbox>();
  const ports = new Set<number>();
  const counters = {
    requests_total: 0,
    tunnels_total: 0,
    upgrades_total: 0,
    blocked_total: 0,
    upstream_errors_total: 0,
    /** Requests sent again after a reused upstream connection was found closed (gate-forward.ts). */
    upstream_retries_total: 0,
  };
  let openTunnels = 0;

  const decide = (sb: Sandbox, host: string, port: number) => decideTarget(sb.rules, host, port, resolve, ports, log);

  function blocked(sb: Sandbox, url: string, reason: string): void {
    counters.blocked_total++;
    log.debug({ sandbox: sb.id, url, reason }, 'network gate blocked a request');
    try {
      sb.onBlocked?.({ url, reason });
    } catch (err) {
      log.error({ err }, 'onBlocked callback threw');
    }
  }

  function upstreamFailed(sb: Sandbox, url: string, error: UpstreamError): void {
    counters.upstream_errors_total++;
    log.debug({ sandbox: sb.id, url, error }, 'network gate upstream error');
    try {
      sb.onUpstreamError?.({ url, error });
    } catch (err) {
      log.error({ err }, 'onUpstreamError callback threw');
    }
  }

  function onRequest(sb: Sandbox, req: http.IncomingMessage, res: http.ServerResponse): void {
    counters.requests_total++;
    // A browser that hangs up mid-upload must not raise an unhandled 'error'.
    req.on('error', () => res.destroy());
    res.on('error', () => req.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('This is the Grove network gate: a forward proxy.\n');
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'ws:') {
      blocked(sb, url.href, 'unsupported_scheme');
      res.writeHead(403, { [HEADER_BLOCKED]: 'unsupported_scheme', 'content-type': 'text/html' }).end(BLOCKED_HTML('unsupported_scheme'));
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    decide(sb, url.hostname, port)
      .then((d) => {
        if (d.kind === 'blocked') {
          blocked(sb, url.href, d.reason);
          res
            .writeHead(403, { [HEADER_BLOCKED]: d.reason, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
            .end(BLOCKED_HTML(d.reason));
          return;
        }
        if (d.kind === 'error') {
          upstreamFailed(sb, url.href, d.error);
          res.writeHead(502, { [HEADER_ERROR]: d.error, 'content-type': 'text/plain' }).end(`${d.error}\n`);
          return;
        }
        forwardHttp(req, res, { host: d.host, port, addresses: d.addresses, path: `${url.pathname}${url.search}`, agent: sb.agent, connectTimeoutMs }, {
          failed: (code) => upstreamFailed(sb, url.href, code),
          retried: () => counters.upstream_retries_total++,
          log,
        });
      })
      .catch((err: unknown) => {
        // Nothing here may throw out of an event handler: that would take the whole server down.
        log.error({ err, url: url.href }, 'network gate request failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
  }

  function onConnect(sb: Sandbox, req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    counters.tunnels_total++;
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '', 443);
    if (!target) {
      blocked(sb, req.url ?? '', 'invalid_host');
      client.end(rawResponse(403, 'Forbidden', { [HEADER_BLOCKED]: 'invalid_host' }));
      return;
    }
    const label = `${target.port === 443 ? 'https' : 'tunnel'}://${req.url}`;
    decide(sb, target.host, target.port)
      .then(async (d) => {
        if (d.kind === 'blocked') {
          blocked(sb, label, d.reason);
          client.end(rawResponse(403, 'Forbidden', { [HEADER_BLOCKED]: d.reason }));
          return;
        }
        if (d.kind === 'error') {
          upstreamFailed(sb, label, d.error);
          client.end(rawResponse(502, 'Bad Gateway', { [HEADER_ERROR]: d.error }));
          return;
        }
        let upstream: net.Socket;
        try {
          upstream = await connectAny(d.addresses, target.port, connectTimeoutMs);
        } catch (err) {
          const code = classifyUpstreamError(err);
          upstreamFailed(sb, label, code);
          client.end(rawResponse(502, 'Bad Gateway', { [HEADER_ERROR]: code }));
          return;
        }
        if (client.destroyed) {
          upstream.destroy();
          return;
        }
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        openTunnels++;
        splice(sb.tunnels, client, upstream, () => openTunnels--);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'network gate CONNECT failed');
        client.destroy();
      });
  }

  function onUpgrade(sb: Sandbox, req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    counters.upgrades_total++;
    client.on('error', () => client.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      client.end(rawResponse(400, 'Bad Request', {}));
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    decide(sb, url.hostname, port)
      .then(async (d) => {
        if (d.kind === 'blocked') {
          blocked(sb, url.href, d.reason);
          client.end(rawResponse(403, 'Forbidden', { [HEADER_BLOCKED]: d.reason }));
          return;
        }
        if (d.kind === 'error') {
          upstreamFailed(sb, url.href, d.error);
          client.end(rawResponse(502, 'Bad Gateway', { [HEADER_ERROR]: d.error }));
          return;
        }
        let upstream: net.Socket;
        try {
          upstream = await connectAny(d.addresses, port, connectTimeoutMs);
        } catch (err) {
          const code = classifyUpstreamError(err);
          upstreamFailed(sb, url.href, code);
          client.end(rawResponse(502, 'Bad Gateway', { [HEADER_ERROR]: code }));
          return;
        }
        const headers = filterHeaders(req.rawHeaders, true);
        let head0 = `${req.method} ${url.pathname}${url.search} HTTP/1.1\r\n`;
        for (let i = 0; i < headers.length; i += 2) head0 += `${headers[i]}: ${headers[i + 1]}\r\n`;
        upstream.write(`${head0}\r\n`);
        if (head.length > 0) upstream.write(head);
        openTunnels++;
        splice(sb.tunnels, client, upstream, () => openTunnels--);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'network gate upgrade failed');
        client.destroy();
      });
  }

  function destroySandbox(sb: Sandbox): Promise<void> {
    ports.delete(sb.port);
    sb.agent.destroy();
    for (const s of sb.tunnels) s.destroy();
    const closed = new Promise<void>((done) => sb.server.close(() => done()));
    sb.server.closeAllConnections();
    return closed;
  }

  return {
    async register(sandboxId, rules, onBlocked, onUpstreamError) {
      if (sandboxes.has(sandboxId)) throw new Error(`network gate: sandbox ${sandboxId} is already registered`);
      const server = http.createServer({ keepAlive: true });
      const sb: Sandbox = {
        id: sandboxId,
        rules,
        onBlocked,
        onUpstreamError,
        server,
        port: 0,
        agent: new http.Agent({ keepAlive: true }),
        tunnels: new Set(),
      };
      server.on('request', (req, res) => onRequest(sb, req, res));
      server.on('connect', (req, socket, head) => onConnect(sb, req, socket as net.Socket, head));
      server.on('upgrade', (req, socket, head) => onUpgrade(sb, req, socket as net.Socket, head));
      server.on('clientError', (_err, socket) => socket.destroy());
      await new Promise<void>((done, fail) => {
        server.once('error', fail);
        server.listen(0, '127.0.0.1', () => done());
      });
      sb.port = (server.address() as net.AddressInfo).port;
      ports.add(sb.port);
      sandboxes.set(sandboxId, sb);
      // "<-loopback>" removes Chromium's implicit loopback bypass: 127.0.0.1 and localhost go through the gate too.
      return { server: `http://127.0.0.1:${sb.port}`, bypass: '<-loopback>' };
    },

    update(sandboxId, rules) {
      const sb = sandboxes.get(sandboxId);
      if (!sb) return;
      sb.rules = rules;
      // Pooled upstream connections were checked under the old rules.
      sb.agent.destroy();
      sb.agent = new http.Agent({ keepAlive: true });
    },

    unregister(sandboxId) {
      const sb = sandboxes.get(sandboxId);
      if (!sb) return;
      sandboxes.delete(sandboxId);
      destroySandbox(sb).catch((err: unknown) => log.error({ err }, 'network gate: closing a sandbox listener failed'));
    },

    async close() {
      const all = [...sandboxes.values()];
      sandboxes.clear();
      await Promise.all(all.map(destroySandbox));
    },

    stats() {
      return { gate_sandboxes: sandboxes.size, gate_open_tunnels: openTunnels, ...prefixed(counters) };
    },
  };
}

function prefixed(c: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [`gate_${k}`, v]));
}
