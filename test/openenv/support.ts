// A Grove server on a loopback port and a WebSocket speaking OpenEnv's session frames, as its EnvClient sends them
// (one JSON text frame per message, the answer is the next frame).
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import { buildApp, type BuildAppOptions } from '../../server/app.ts';

export const KEY = 'test-key-openenv-0123456789';

export interface Served {
  app: FastifyInstance;
  base: string;
  close(): Promise<void>;
}

export async function serve(flags: GroveConfigInput = {}, extra: Partial<BuildAppOptions> = {}): Promise<Served> {
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, ...flags } });
  const app = await buildApp({ config, environments: {}, ...extra });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { app, base: `http://127.0.0.1:${port}`, close: () => app.close() };
}

export class Frames {
  private readonly queue: unknown[] = [];
  private readonly waiting: ((v: unknown) => void)[] = [];
  closed: { code: number } | null = null;
  private readonly closedP: Promise<{ code: number }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const v = JSON.parse(raw.toString());
      const w = this.waiting.shift();
      if (w) w(v);
      else this.queue.push(v);
    });
    this.closedP = new Promise((ok) => ws.on('close', (code) => ok((this.closed = { code }))));
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<Frames> {
    return new Promise((ok, fail) => {
      const ws = new WebSocket(url, { headers, maxPayload: 200 * 1024 * 1024 });
      const f = new Frames(ws);
      ws.once('open', () => ok(f));
      ws.once('unexpected-response', (_req, res) => fail(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', fail);
    });
  }

  next(): Promise<any> {
    const v = this.queue.shift();
    if (v !== undefined) return Promise.resolve(v);
    return new Promise((ok) => this.waiting.push(ok));
  }

  async send(msg: unknown): Promise<any> {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
    return this.next();
  }

  whenClosed(): Promise<{ code: number }> {
    return this.closedP;
  }

  close(): Promise<{ code: number }> {
    this.ws.close();
    return this.closedP;
  }
}

export function wsUrl(base: string, path: string): string {
  return base.replace(/^http/, 'ws') + path;
}
