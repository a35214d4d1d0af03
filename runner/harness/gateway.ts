// A browser harness's only door to its browser sandbox: a small HTTP server on its own loopback origin with a
// per-run token that offers exactly `GET /observation` and `POST /step` of one sandbox, relayed to Grove's API
// with Grove's key (which never enters the sandbox). The harness's shell sandbox gets this origin opened, never
// Grove's API port.
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

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startBrowserGateway(client: GroveClient, sandboxId: string): Promise<BrowserGateway> {
  const token = randomBytes(24).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  const server = http.createServer((req, res) => {
    const given = Buffer.from(String(req.headers.authorization ?? ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return send(res, 401, { error: { code: 'unauthorized', message: 'send Authorization: Bearer $GROVE_BROWSER_TOKEN' } });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      void (async () => {
        const path = (req.url ?? '').split('?')[0];
        if (size > MAX_BODY) return send(res, 413, { error: { code: 'body_too_large', message: `at most ${MAX_BODY} bytes` } });
        try {
          if (req.method === 'GET' && path === '/observation') return send(res, 200, await client.observation(sandboxId));
          if (req.method === 'POST' && path === '/step') {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
            return send(res, 200, await client.step(sandboxId, body as never));
          }
          return send(res, 404, { error: { code: 'not_found', message: 'this gateway offers GET /observation and POST /step' } });
        } catch (err) {
          const e = err as { status?: number; code?: string; message?: string };
          send(res, e.status && e.status >= 400 && e.status < 500 ? e.status : 502, { error: { code: e.code ?? 'error', message: e.message ?? String(err) } });
        }
      })();
    });
  });
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
