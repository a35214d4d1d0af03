// The network gate with real Chromium contexts: every request of a page goes through the gate, and the
// fixture server records what actually reached it.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NetworkRules } from '../../protocol/sandbox.ts';
import { CHROMIUM_FLAGS } from '../../browser-env/pool.ts';
import { startNetworkGate, type BlockedEvent, type NetworkGate, type UpstreamErrorEvent } from '../../browser-env/network-gate.ts';

interface Seen {
  host: string;
  path: string;
  upgrade: boolean;
}

let fixture: http.Server;
let port: number;
let closedPort: number;
let seen: Seen[] = [];
const upgraded = new Set<net.Socket>();
let browser: Browser;
let gate: NetworkGate;
let n = 0;
const contexts: BrowserContext[] = [];

// No DNS here: names resolve through this table (unknown names fail like NXDOMAIN).
const zone: Record<string, string[]> = {
  'allowed.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'sneaky.test': ['93.184.215.14', '127.0.0.1'],
  'good.test': ['203.0.114.7'],
  'bad.test': ['203.0.114.8'],
};
async function lookup(host: string): Promise<string[]> {
  const a = zone[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a;
}

const BIG = 4 * 1024 * 1024;

beforeAll(async () => {
  fixture = http.createServer((req, res) => {
    // Chromium asks for /favicon.ico after each document on its own; not interesting here.
    if (req.url === '/favicon.ico') return void res.writeHead(404).end();
    seen.push({ host: req.headers.host ?? '', path: req.url ?? '', upgrade: false });
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    } else if (url.pathname === '/big') {
      // Streamed in chunks without a content-length: the gate must pipe, not buffer.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let sent = 0;
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = () => {
        while (sent < BIG) {
          sent += chunk.length;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
    } else if (url.pathname === '/echo') {
      let size = 0;
      req.on('data', (c: Buffer) => (size += c.length));
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`got ${size}`));
    } else if (url.pathname === '/page') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>fixture</title><p id="t">fixture ok</p>');
    } else {
      res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('secret');
    }
  });
  fixture.on('upgrade', (req, socket) => {
    seen.push({ host: req.headers.host ?? '', path: req.url ?? '', upgrade: true });
    upgraded.add(socket as net.Socket);
    socket.on('end', () => socket.destroy());
    socket.on('close', () => upgraded.delete(socket as net.Socket));
    // A minimal WebSocket handshake is enough for the browser's `open` event.
    const key = String(req.headers['sec-websocket-key']);
    const accept = require_sha1(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  });
  // Dual-stack: the fixture answers on 127.0.0.1 and ::1 alike, so a denial is the gate's doing.
  fixture.listen(0, '::');
  await once(fixture, 'listening');
  port = (fixture.address() as net.AddressInfo).port;
  closedPort = await refusedPort();

  gate = await startNetworkGate({ lookup, connectTimeoutMs: 1500 });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await gate?.close();
  fixture?.closeAllConnections();
  for (const s of upgraded) s.destroy(); // upgraded sockets are not the http server's any more
  await new Promise((r) => fixture?.close(r));
});

beforeEach(() => {
  seen = [];
});

import { createHash } from 'node:crypto';
function require_sha1(s: string): string {
  return createHash('sha1').update(s).digest('base64');
}

/**
 * A loopback port nothing listens on, and nothing will for the file's lifetime. A port freed after listen(0) is an
 * ephemeral one: the next listen(0) — another test file's server, or this gate's own per-sandbox listener — could
 * get it, and the "connection refused" test then met a live listener (403 instead of 502, once in a full run).
 * Ports below the kernel's ephemeral range are never handed out by listen(0)/connect, so a free one stays free.
 */
async function refusedPort(): Promise<number> {
  const [lo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  for (let tries = 0; tries < 50; tries++) {
    const candidate = 10_000 + Math.floor(Math.random() * Math.max(1, lo - 10_000));
    const probe = net.createServer();
    const free = await new Promise<boolean>((ok) => {
      probe.once('error', () => ok(false));
      probe.listen(candidate, '127.0.0.1', () => ok(true));
    });
    if (free) {
      await new Promise((r) => probe.close(r));
      return candidate;
    }
  }
  throw new Error('no free port below the ephemeral range');
}

async function sandbox(
  rules: Partial<NetworkRules> = {},
): Promise<{ page: Page; blocked: BlockedEvent[]; errors: UpstreamErrorEvent[]; id: string }> {
  const id = `sb${++n}`;
  const blocked: BlockedEvent[] = [];
  const errors: UpstreamErrorEvent[] = [];
  const proxy = await gate.register(
    id,
    NetworkRules.parse(rules),
    (e) => {
      if (!e.url.endsWith('/favicon.ico')) blocked.push(e);
    },
    (e) => errors.push(e),
  );
  const context = await browser.newContext({ proxy });
  contexts.push(context);
  const page = await context.newPage();
  return { page, blocked, errors, id };
}

describe('network gate with Chromium', () => {
  it('blocks every spelling of loopback by default, before it reaches the server', async () => {
    const { page, blocked } = await sandbox();
    const hosts = ['127.0.0.1', 'localhost', '2130706433', '0x7f000001', '127.1', '0177.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'];
    for (const host of hosts) {
      const res = await page.goto(`http://${host}:${port}/page`);
      expect(res?.status(), host).toBe(403);
      expect(res?.headers()['x-grove-blocked'], host).toBe('loopback');
      expect(await page.textContent('body')).toContain('Grove network policy blocked');
    }
    expect(seen).toEqual([]);
    expect(blocked).toHaveLength(hosts.length);
    expect(blocked[0]).toEqual({ url: `http://127.0.0.1:${port}/page`, reason: 'loopback' });
  });

  it('blocks cloud metadata and names that resolve to private addresses', async () => {
    const { page } = await sandbox();
    let res = await page.goto('http://169.254.169.254/latest/meta-data/');
    expect(res?.headers()['x-grove-blocked']).toBe('metadata');
    res = await page.goto('http://metadata.google.internal/');
    expect(res?.headers()['x-grove-blocked']).toBe('metadata');
    res = await page.goto(`http://sneaky.test:${port}/page`); // one public, one loopback address
    expect(res?.headers()['x-grove-blocked']).toBe('loopback');
    expect(seen).toEqual([]);
  });

  it('blocks fetch, image, iframe and WebSocket from an allowed page to loopback', async () => {
    const { page, blocked } = await sandbox({ allow: [`allowed.test:${port}`] });
    const res = await page.goto(`http://allowed.test:${port}/page`);
    expect(res?.status()).toBe(200);
    const target = `127.0.0.1:${port}`;
    const outcome = await page.evaluate(async (t) => {
      const fetchResult = await fetch(`http://${t}/fetch`).then(
        (r) => `status ${r.status}`,
        (e: Error) => `error ${e.message}`,
      );
      const img = await new Promise<string>((resolve) => {
        const i = document.createElement('img');
        i.onload = () => resolve('loaded');
        i.onerror = () => resolve('error');
        i.src = `http://${t}/img.png`;
        document.body.append(i);
      });
      const iframe = await new Promise<string>((resolve) => {
        const f = document.createElement('iframe');
        f.onload = () => resolve('loaded');
        f.src = `http://${t}/frame`;
        document.body.append(f);
      });
      const ws = await new Promise<string>((resolve) => {
        const s = new WebSocket(`ws://${t}/ws`);
        s.onopen = () => resolve('open');
        s.onerror = () => resolve('error');
        s.onclose = () => resolve('closed');
      });
      return { fetchResult, img, iframe, ws };
    }, target);
    // fetch of a 403 without CORS headers is a network error for the page; either way no data.
    expect(outcome.fetchResult).not.toBe('status 200');
    expect(outcome.img).toBe('error');
    expect(outcome.ws).not.toBe('open');
    const iframeText = await page.frames()[1]?.textContent('body');
    expect(iframeText).toContain('Grove network policy blocked');
    // The server only ever saw the allowed page: no fetch, image, frame or upgrade from 127.0.0.1.
    expect(seen).toEqual([{ host: `allowed.test:${port}`, path: '/page', upgrade: false }]);
    const urls = blocked.map((b) => b.url);
    expect(urls).toEqual(
      expect.arrayContaining([`http://${target}/fetch`, `http://${target}/img.png`, `http://${target}/frame`]),
    );
    expect(blocked.some((b) => b.url.includes(target) && /ws|tunnel|https/.test(b.url.split(':')[0]))).toBe(true);
  });

  it('checks every redirect hop', async () => {
    const { page } = await sandbox({ allow: [`allowed.test:${port}`] });
    const res = await page.goto(`http://allowed.test:${port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/secret`)}`);
    expect(res?.status()).toBe(403);
    expect(res?.url()).toBe(`http://127.0.0.1:${port}/secret`);
    expect(seen.map((s) => s.path)).toEqual([`/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/secret`)}`]);
  });

  it('an allow rule opens exactly that host:port, WebSockets included', async () => {
    const { page } = await sandbox({ allow: [`127.0.0.1:${port}`] });
    const ok = await page.goto(`http://127.0.0.1:${port}/page`);
    expect(ok?.status()).toBe(200);
    expect(await page.textContent('#t')).toBe('fixture ok');
    const ws = await page.evaluate(
      (p) =>
        new Promise<string>((resolve) => {
          const s = new WebSocket(`ws://127.0.0.1:${p}/ws`);
          s.onopen = () => resolve('open');
          s.onerror = () => resolve('error');
        }),
      port,
    );
    expect(ws).toBe('open');
    const st = gate.stats();
    expect(st.gate_tunnels_total + st.gate_upgrades_total).toBeGreaterThan(0);
    expect(seen.some((s) => s.upgrade && s.path === '/ws')).toBe(true);
    expect((await page.goto(`http://localhost:${port}/page`))?.status()).toBe(403);
    expect((await page.goto(`http://[::1]:${port}/page`))?.status()).toBe(403);
    const other = await page.goto(`http://127.0.0.1:${closedPort}/`);
    expect(other?.headers()['x-grove-blocked']).toBe('loopback');
  });

  it('streams large responses through the gate', async () => {
    const { page } = await sandbox({ allow: [`127.0.0.1:${port}`] });
    await page.goto(`http://127.0.0.1:${port}/page`);
    const size = await page.evaluate(async (p) => (await (await fetch(`http://127.0.0.1:${p}/big`)).arrayBuffer()).byteLength, port);
    expect(size).toBe(BIG);
  });

  it('block_network denies everything but explicit allows', async () => {
    const { page } = await sandbox({ block_network: true, allow: [`allowed.test:${port}`] });
    expect((await page.goto(`http://allowed.test:${port}/page`))?.status()).toBe(200);
    expect((await page.goto('http://good.test/'))?.headers()['x-grove-blocked']).toBe('block_network');
    expect((await page.goto(`http://other.test:${port}/page`))?.headers()['x-grove-blocked']).toBe('block_network');
    await expect(page.goto('https://good.test/')).rejects.toThrow(/ERR_TUNNEL_CONNECTION_FAILED/);
    expect(seen).toHaveLength(1);
  });

  it('applies allow_domains and deny_domains', async () => {
    const a = await sandbox({ allow_domains: ['good.test'] });
    expect((await a.page.goto('http://bad.test/'))?.headers()['x-grove-blocked']).toBe('not_in_allow_domains');
    // The allowed side (good.test → a public address) is checked at the policy level in
    // test/sandbox/netpolicy.test.ts: tests never open connections to non-loopback addresses.
    expect(a.blocked.map((b) => b.url)).toEqual(['http://bad.test/']);

    const d = await sandbox({ deny_domains: ['bad.test'] });
    expect((await d.page.goto('http://sub.bad.test/'))?.headers()['x-grove-blocked']).toBe('deny_domains');
    expect((await d.page.goto('http://bad.test/'))?.headers()['x-grove-blocked']).toBe('deny_domains');
    expect(d.blocked.map((b) => b.reason)).toEqual(['deny_domains', 'deny_domains']);
  });

  it('answers upstream failures with 502 and an error class', async () => {
    // The refused port lies outside the ephemeral range, so no listener started meanwhile can have taken it.
    expect(closedPort).toBeLessThan(Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]));
    const { page, errors } = await sandbox({ allow: [`127.0.0.1:${closedPort}`, 'nowhere.test:*'] });
    let res = await page.goto(`http://127.0.0.1:${closedPort}/`);
    expect(res?.status()).toBe(502);
    expect(res?.headers()['x-grove-error']).toBe('connection_refused');
    res = await page.goto('http://nowhere.test/');
    expect(res?.headers()['x-grove-error']).toBe('dns_error');
    // HTTPS: Chromium only says "tunnel failed"; the callback carries the class.
    await expect(page.goto(`https://127.0.0.1:${closedPort}/`)).rejects.toThrow(/ERR_TUNNEL_CONNECTION_FAILED/);
    // Chromium may retry a failed tunnel, so compare the distinct events.
    const distinct = [...new Set(errors.filter((e) => !e.url.endsWith('/favicon.ico')).map((e) => `${e.url} ${e.error}`))];
    expect(distinct).toEqual([
      `http://127.0.0.1:${closedPort}/ connection_refused`,
      'http://nowhere.test/ dns_error',
      `tunnel://127.0.0.1:${closedPort} connection_refused`,
    ]);
  });

  it('update() changes the rules of a live sandbox; unregister() closes its listener', async () => {
    const { page, id } = await sandbox();
    expect((await page.goto(`http://127.0.0.1:${port}/page`))?.status()).toBe(403);
    gate.update(id, NetworkRules.parse({ allow: [`127.0.0.1:${port}`] }));
    expect((await page.goto(`http://127.0.0.1:${port}/page`))?.status()).toBe(200);
    gate.unregister(id);
    await expect(page.goto(`http://127.0.0.1:${port}/page`)).rejects.toThrow(/ERR_PROXY_CONNECTION_FAILED/);
  });
});

describe('network gate CONNECT', () => {
  async function connect(proxyPort: number, target: string): Promise<{ head: string; socket: net.Socket }> {
    const socket = net.connect(proxyPort, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    return { head: chunk.toString('latin1'), socket };
  }

  it('denies tunnels to private targets and splices allowed ones', async () => {
    const reg = await gate.register('raw-connect', NetworkRules.parse({ allow: [`127.0.0.1:${port}`] }));
    const proxyPort = Number(new URL(reg.server).port);
    const denied = await connect(proxyPort, `0x7f000001:${port + 1}`);
    expect(denied.head).toMatch(/^HTTP\/1\.1 403 /);
    expect(denied.head).toMatch(/x-grove-blocked: loopback/i);
    denied.socket.destroy();
    const loop = await connect(proxyPort, `[::ffff:169.254.169.254]:80`);
    expect(loop.head).toMatch(/x-grove-blocked: metadata/i);
    loop.socket.destroy();

    const ok = await connect(proxyPort, `127.0.0.1:${port}`);
    expect(ok.head).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    ok.socket.write(`GET /through-tunnel HTTP/1.1\r\nHost: tunnel\r\nConnection: close\r\n\r\n`);
    let body = '';
    ok.socket.on('data', (c: Buffer) => (body += c.toString()));
    await once(ok.socket, 'end');
    expect(body).toMatch(/^HTTP\/1\.1 200/);
    expect(body).toContain('secret');
    expect(seen.map((s) => s.path)).toEqual(['/through-tunnel']);
    gate.unregister('raw-connect');
  });

  it('keeps client connections alive, forwards bodies and survives a client that hangs up mid-upload', async () => {
    const reg = await gate.register('raw-http', NetworkRules.parse({ allow: [`127.0.0.1:${port}`] }));
    const proxyPort = Number(new URL(reg.server).port);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: Buffer) =>
      new Promise<{ text: string; reused: boolean }>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port: proxyPort, method: 'POST', path: `http://127.0.0.1:${port}/echo`, agent, headers: { host: `127.0.0.1:${port}` } },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ text, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect(await post(Buffer.alloc(300_000, 1))).toEqual({ text: 'got 300000', reused: false });
    expect(await post(Buffer.alloc(10, 1))).toEqual({ text: 'got 10', reused: true });

    // Half an upload, then the client vanishes.
    const raw = net.connect(proxyPort, '127.0.0.1');
    await once(raw, 'connect');
    raw.write(`POST http://127.0.0.1:${port}/echo HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 100000\r\n\r\n`);
    raw.write(Buffer.alloc(1000, 1));
    raw.destroy();
    await once(raw, 'close');
    // An unhandled 'error' from the aborted upload would fail this run as an uncaught exception.
    expect(await post(Buffer.alloc(5, 1))).toMatchObject({ text: 'got 5' });
    agent.destroy();
    gate.unregister('raw-http');
  });
});
