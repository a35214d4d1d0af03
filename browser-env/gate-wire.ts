// The network gate's wire-level pieces (network-gate.ts runs the proxy): event and error types, hop-by-hop
// header filtering, upstream error classes, the blocked page, and raw socket helpers for CONNECT and upgrades.
import type net from 'node:net';
import { connect } from 'node:net';
import type { NetworkRules } from '../protocol/sandbox.ts';
import { checkAddresses, parseHost, precheckParsed } from '../sandbox/netpolicy.ts';
import type { Logger } from '../sandbox/log.ts';

export type UpstreamError = 'dns_error' | 'connection_refused' | 'connection_reset' | 'timeout';

export interface BlockedEvent {
  url: string;
  reason: string;
}

export interface UpstreamErrorEvent {
  url: string;
  error: UpstreamError;
}

interface GateRegistration {
  /** Proxy server for Playwright's `proxy.server`. */
  server: string;
  /** Proxy bypass list for Playwright's `proxy.bypass` ("<-loopback>": loopback goes through the proxy too). */
  bypass?: string;
  username?: string;
  password?: string;
}

export interface NetworkGate {
  /** Opens a listener for the sandbox. `onUpstreamError` reports 502s (the only trace of a failed HTTPS
   * tunnel: Chromium shows every CONNECT failure as ERR_TUNNEL_CONNECTION_FAILED). */
  register(
    sandboxId: string,
    rules: NetworkRules,
    onBlocked?: (e: BlockedEvent) => void,
    onUpstreamError?: (e: UpstreamErrorEvent) => void,
  ): Promise<GateRegistration>;
  update(sandboxId: string, rules: NetworkRules): void;
  unregister(sandboxId: string): void;
  close(): Promise<void>;
  stats(): Record<string, number>;
}

export interface NetworkGateOptions {
  log?: Logger;
  /** Resolves a host name to addresses (default: the system resolver, all addresses). */
  lookup?: (host: string) => Promise<string[]>;
  /** Upstream connect timeout (ms). */
  connectTimeoutMs?: number;
}

export const HEADER_BLOCKED = 'x-grove-blocked';
export const HEADER_ERROR = 'x-grove-error';

// Hop-by-hop headers (RFC 9110 §7.6.1) and proxy credentials never cross the proxy.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export function filterHeaders(raw: string[], keepUpgrade = false): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name) && !(keepUpgrade && (name === 'connection' || name === 'upgrade'))) continue;
    out.push(raw[i], raw[i + 1]);
  }
  return out;
}

export function classifyUpstreamError(err: unknown): UpstreamError {
  const e = err as { code?: string; errors?: Array<{ code?: string }> };
  const code = e?.code ?? e?.errors?.[0]?.code;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_NODATA':
    case 'ENODATA':
    case 'ESERVFAIL':
      return 'dns_error';
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return 'connection_refused';
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return 'timeout';
    default:
      return 'connection_reset';
  }
}

export const BLOCKED_HTML = (reason: string) =>
  `<!doctype html><title>Blocked</title><p>The Grove network policy blocked this request (${reason}).</p>\n`;

const escapeHeader = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

/** Connects to the first address that answers (the addresses were checked already). */
export function connectAny(addresses: string[], port: number, connectTimeoutMs: number): Promise<net.Socket> {
  return new Promise((resolveSocket, reject) => {
    let i = 0;
    const attempt = () => {
      const socket = connect({ host: addresses[i], port });
      const timer = setTimeout(() => socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })), connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolveSocket(socket);
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        if (++i < addresses.length) attempt();
        else reject(err);
      });
    };
    attempt();
  });
}

export function rawResponse(status: number, text: string, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${escapeHeader(v)}\r\n`);
  return `HTTP/1.1 ${status} ${text}\r\n${lines.join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`;
}


/** Pipes a CONNECT / upgrade client to its upstream until either side ends; `tunnels` holds both sockets meanwhile. */
export function splice(tunnels: Set<net.Socket>, client: net.Socket, upstream: net.Socket, onClosed: () => void): void {
  tunnels.add(client);
  tunnels.add(upstream);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  const done = () => {
    client.destroy();
    upstream.destroy();
  };
  let closed = 0;
  const onClose = () => {
    tunnels.delete(client);
    tunnels.delete(upstream);
    if (++closed === 2) onClosed();
    done();
  };
  client.on('error', done);
  upstream.on('error', done);
  // Half-close is passed on by pipe(); a peer that never finishes its half must not pin the tunnel forever.
  const onEnd = () => {
    if (client.readableEnded && upstream.readableEnded) done();
    else setTimeout(done, 10_000).unref();
  };
  client.once('end', onEnd);
  upstream.once('end', onEnd);
  client.once('close', onClose);
  upstream.once('close', onClose);
  client.pipe(upstream);
  upstream.pipe(client);
}


export type Decision =
  | { kind: 'allow'; host: string; addresses: string[] }
  | { kind: 'blocked'; reason: string }
  | { kind: 'error'; error: UpstreamError };

/** Whether a sandbox with `rules` may reach host:port: checks names first, then every address the name resolves
 * to (no second lookup later), and never the gate's own ports on loopback. */
export async function decideTarget(
  rules: NetworkRules,
  hostInput: string,
  port: number,
  resolve: (host: string) => Promise<string[]>,
  gatePorts: ReadonlySet<number>,
  log: Logger,
): Promise<Decision> {
  const parsed = parseHost(hostInput);
  if (!parsed || !Number.isInteger(port) || port < 1 || port > 65535) return { kind: 'blocked', reason: 'invalid_host' };
  const pre = precheckParsed(rules, parsed, port);
  if (!pre.allowed) return { kind: 'blocked', reason: pre.reason };
  let addresses: string[];
  if (parsed.kind === 'ip') {
    addresses = [parsed.address];
  } else {
    try {
      addresses = await resolve(parsed.name);
    } catch (err) {
      log.debug({ err, host: parsed.name }, 'gate dns lookup failed');
      return { kind: 'error', error: 'dns_error' };
    }
    if (addresses.length === 0) return { kind: 'error', error: 'dns_error' };
  }
  if (!pre.explicit) {
    const v = checkAddresses(addresses);
    if (!v.allowed) return { kind: 'blocked', reason: v.reason };
  }
  // Even an explicit allow must not loop back into the gate itself.
  for (const a of addresses) {
    if (gatePorts.has(port) && (a === '::1' || a.startsWith('127.') || a === '0.0.0.0' || a === '::')) {
      return { kind: 'blocked', reason: 'proxy_loop' };
    }
  }
  return { kind: 'allow', host: parsed.kind === 'ip' ? parsed.address : parsed.name, addresses };
}

