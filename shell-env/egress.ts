// Filtered egress for shell sandboxes without block_network. The sandbox keeps its own empty network namespace
// (only its own loopback): the one way out is an HTTP proxy (CONNECT for TLS and anything tunnelled, absolute
// URIs for plain HTTP) that this server serves on a Unix socket bound into the sandbox, reached through a small
// forwarder on the sandbox's 127.0.0.1:3128 (HTTP_PROXY/HTTPS_PROXY point there). The proxy resolves names
// itself, checks every address with sandbox/netpolicy.ts (no loopback, private ranges, link-local/metadata
// unless `allow` opens them) and connects to exactly the checked addresses. Raw TCP/UDP and DNS do not leave.
// Per sandbox (issue 30 item 5): at most `maxConnections` client connections at once (beyond it a connection gets
// a 503 and is closed, never handed to the HTTP server), and a connection with no byte either way for
// `idleTimeoutMs` is closed (tunnels too). Counted and reported (stats(): open, peak, refused, idle closed, and
// `limit` events as browser sandboxes report theirs).
import { lookup as dnsLookup } from 'node:dns/promises';
import { chmod, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { NetworkRules } from '../protocol/sandbox.ts';
import type { EgressDetails, ShellLimitEvent } from '../protocol/shell.ts';
import { checkAddresses, parseHost, precheckParsed, splitHostPort } from '../sandbox/netpolicy.ts';
import type { Logger } from '../sandbox/log.ts';

export interface EgressLimits {
  /** Client connections open at once, at most. */
  maxConnections: number;
  /** A connection with no byte either way for this long is closed, ms. */
  idleTimeoutMs: number;
  /** For the log lines. */
  sandboxId: string;
}

export interface EgressProxy {
  socketPath: string;
  /** Requests refused, by reason (for the sandbox's logs and tests). */
  readonly blocked: Array<{ target: string; reason: string }>;
  /** Connections now, at peak, refused and closed for idleness; the limits and their events. */
  stats(): EgressDetails;
  close(): Promise<void>;
}

/** Refused connections kept open at once while their 503 goes out (beyond: dropped at accept). */
const REFUSING_MAX = 64;
/** How long a refused connection may take to read its 503. */
const REFUSE_LINGER_MS = 2000;
/** Limit events kept (the newest). */
const MAX_EVENTS = 20;
const BUSY = 'HTTP/1.1 503 Service Unavailable\r\nX-Grove-Limit: egress_connections\r\nConnection: close\r\nContent-Type: text/plain\r\n';

type Decision = { ok: true; addresses: string[] } | { ok: false; status: number; reason: string };

export async function startEgressProxy(
  socketPath: string,
  allow: string[],
  log: Logger,
  limits: EgressLimits,
  resolve: (host: string) => Promise<string[]> = async (h) => (await dnsLookup(h, { all: true, verbatim: true })).map((a) => a.address),
): Promise<EgressProxy> {
  const rules: NetworkRules = { block_network: false, allow, allow_domains: [], deny_domains: [] };
  const blocked: EgressProxy['blocked'] = [];
  const sockets = new Set<net.Socket>();
  const clients = new Set<net.Socket>();
  const refusing = new Set<net.Socket>();
  const counts = { peak: 0, refused: 0, idle_closed: 0 };
  const events: ShellLimitEvent[] = [];
  // One event each time the cap is reached (again once half the connections closed), not one per refused
  // connection; one idle event per idle period at most.
  let capReported = false;
  let lastIdleEvent = 0;

  function limitEvent(limit: ShellLimitEvent['limit'], max: number, message: string): void {
    log.info({ sandbox_id: limits.sandboxId, limit, max }, 'sandbox limit reached');
    events.push({ type: 'limit', limit, max, message, at: new Date().toISOString() });
    if (events.length > MAX_EVENTS) events.shift();
  }

  function refuseConnection(socket: net.Socket): void {
    counts.refused++;
    if (!capReported) {
      capReported = true;
      limitEvent('egress_connections', limits.maxConnections, `${limits.maxConnections} egress connections are open; further ones are refused (503) until some close.`);
    }
    const body = `egress connection limit reached (${limits.maxConnections} open)\n`;
    // Read and drop what the client sends (so the close is clean), answer, and close; bounded in time.
    socket.on('error', () => socket.destroy());
    socket.resume();
    socket.end(`${BUSY}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    refusing.add(socket);
    const timer = setTimeout(() => socket.destroy(), REFUSE_LINGER_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      refusing.delete(socket);
    });
  }

  async function decide(host: string, port: number): Promise<Decision> {
    const parsed = parseHost(host);
    if (!parsed || port < 1 || port > 65535) return { ok: false, status: 400, reason: 'invalid_host' };
    const pre = precheckParsed(rules, parsed, port);
    if (!pre.allowed) return { ok: false, status: 403, reason: pre.reason };
    let addresses: string[];
    if (parsed.kind === 'ip') addresses = [parsed.address];
    else {
      addresses = await resolve(parsed.name).catch(() => []);
      if (addresses.length === 0) return { ok: false, status: 502, reason: 'dns_error' };
    }
    if (!pre.explicit) {
      const v = checkAddresses(addresses);
      if (!v.allowed) return { ok: false, status: 403, reason: v.reason };
    }
    return { ok: true, addresses };
  }

  function refuse(target: string, reason: string): void {
    blocked.push({ target, reason });
    if (blocked.length > 100) blocked.shift();
    log.debug({ target, reason }, 'shell egress refused');
  }

  function connectFirst(addresses: string[], port: number): Promise<net.Socket> {
    return new Promise((resolveSocket, reject) => {
      let i = 0;
      const attempt = () => {
        const s = net.connect({ host: addresses[i], port, timeout: 10_000 });
        s.once('connect', () => {
          s.setTimeout(0);
          s.removeAllListeners('error');
          resolveSocket(s);
        });
        s.once('timeout', () => s.destroy(new Error('connect timeout')));
        s.once('error', (e) => (++i < addresses.length ? attempt() : reject(e)));
      };
      attempt();
    });
  }

  function splice(a: net.Socket, b: net.Socket): void {
    sockets.add(a).add(b);
    const done = () => {
      a.destroy();
      b.destroy();
      sockets.delete(a);
      sockets.delete(b);
    };
    a.on('error', done).on('close', done);
    b.on('error', done).on('close', done);
    a.pipe(b);
    b.pipe(a);
  }

  const server = http.createServer((req, res) => {
    req.on('error', () => res.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('Grove egress proxy: send absolute URIs or CONNECT.\n');
      return;
    }
    if (url.protocol !== 'http:') {
      refuse(url.href, 'unsupported_scheme');
      res.writeHead(403).end('unsupported scheme\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    decide(url.hostname, port)
      .then((d) => {
        if (!d.ok) {
          refuse(`${url.hostname}:${port}`, d.reason);
          res.writeHead(d.status, { 'x-grove-blocked': d.reason }).end(`blocked by the sandbox network policy: ${d.reason}\n`);
          return;
        }
        const headers: http.OutgoingHttpHeaders = { ...req.headers, host: url.host, connection: 'close' };
        delete headers['proxy-connection'];
        delete headers['proxy-authorization'];
        const up = http.request({ host: d.addresses[0], port, method: req.method, path: `${url.pathname}${url.search}`, headers });
        up.on('response', (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end('upstream error\n')));
        // The client's side ended (answered, gone, or closed idle): the upstream request goes with it.
        res.once('close', () => up.destroy());
        req.pipe(up);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'shell egress proxy failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '', 443);
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    decide(target.host.replace(/^\[|\]$/g, ''), target.port)
      .then(async (d) => {
        if (!d.ok) {
          refuse(`${target.host}:${target.port}`, d.reason);
          const text = d.status === 403 ? 'Forbidden' : d.status === 502 ? 'Bad Gateway' : 'Bad Request';
          client.end(`HTTP/1.1 ${d.status} ${text}\r\nX-Grove-Blocked: ${d.reason}\r\nContent-Length: 0\r\n\r\n`);
          return;
        }
        const up = await connectFirst(d.addresses, target.port).catch(() => null);
        if (!up) {
          client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
          return;
        }
        // The client left (or was closed idle, or the sandbox closed) while the upstream connected: never keep it.
        if (client.destroyed) {
          up.destroy();
          return;
        }
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        splice(client, up);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'shell egress tunnel failed');
        client.destroy();
      });
  });

  // Only the idle timeout below times connections (the HTTP server's keep-alive timer would replace it).
  server.keepAliveTimeout = 0;
  // The socket is served by a plain listener that applies the limits; admitted connections go to the HTTP server.
  const front = net.createServer((socket) => {
    if (clients.size >= limits.maxConnections) return refuseConnection(socket);
    clients.add(socket);
    counts.peak = Math.max(counts.peak, clients.size);
    socket.setTimeout(limits.idleTimeoutMs);
    socket.on('timeout', () => {
      counts.idle_closed++;
      const now = Date.now();
      if (now - lastIdleEvent >= limits.idleTimeoutMs) {
        lastIdleEvent = now;
        limitEvent('egress_idle', Math.round(limits.idleTimeoutMs / 1000), `egress connections idle for ${Math.round(limits.idleTimeoutMs / 1000)} s are closed.`);
      }
      socket.destroy();
    });
    socket.once('close', () => {
      clients.delete(socket);
      if (clients.size <= Math.floor(limits.maxConnections / 2)) capReported = false;
    });
    server.emit('connection', socket);
  });
  // A backstop while refusals are in flight: beyond it the kernel's connection is closed at accept.
  front.maxConnections = limits.maxConnections + REFUSING_MAX;
  front.on('drop', () => counts.refused++);

  await rm(socketPath, { force: true });
  await new Promise<void>((resolveListen, reject) => {
    front.once('error', reject);
    front.listen(socketPath, () => resolveListen());
  });
  // Only the sandbox's forwarder (root inside, no capabilities) and the sandbox user connect.
  await chmod(socketPath, 0o666);
  return {
    socketPath,
    blocked,
    stats: () => ({
      max_connections: limits.maxConnections,
      idle_timeout_s: limits.idleTimeoutMs / 1000,
      open: clients.size,
      ...counts,
      events: [...events],
    }),
    async close() {
      const closed = new Promise<void>((r) => front.close(() => r()));
      for (const s of sockets) s.destroy();
      for (const s of [...clients, ...refusing]) s.destroy();
      server.closeAllConnections();
      await closed;
      await rm(socketPath, { force: true });
    },
  };
}
