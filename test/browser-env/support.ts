// Test support for browser-env slow tests: a tiny fixture HTTP server and a shared environment.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { BrowserCreateOptions, type BrowserCreateInput } from '../../protocol/sandbox.ts';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import type { LocalBrowserEnvironment } from '../../browser-env/environment.ts';
import type { ChromiumSandbox } from '../../browser-env/sandbox.ts';
import type { SandboxLimits } from '../../browser-env/limits.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface Fixture {
  port: number;
  origin: string;
  url(path: string): string;
  /** Requests seen, by path (for asserting what reached the server). */
  hits: string[];
  /** The HTTP server (e.g. to accept WebSocket upgrades). */
  server: import('node:http').Server;
  close(): Promise<void>;
}

export function html(body: string, head = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>fixture</title>${head}</head><body>${body}</body></html>`;
}

/** Serves `pages` (path → html string or handler). Unknown paths are 404. */
export async function startFixture(pages: Record<string, string | Handler>): Promise<Fixture> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.push(req.url ?? '/');
    const page = pages[path];
    if (page === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end(html('not found'));
      return;
    }
    if (typeof page === 'string') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
      return;
    }
    void Promise.resolve(page(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    port,
    origin,
    url: (p) => origin + p,
    hits,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface TestEnv {
  env: LocalBrowserEnvironment;
  dataDir: string;
  create(input: Omit<BrowserCreateInput, 'type'>): Promise<ChromiumSandbox>;
  close(): Promise<void>;
}

let seq = 0;

/** One environment (one Chromium process) per test file; sandboxes are closed with it. */
export async function openEnv(opts: { warmPool?: number; warmPoolMaxMb?: number; limits?: Partial<SandboxLimits>; frameCache?: boolean } = {}): Promise<TestEnv> {
  const dataDir = await mkdtemp(join(tmpdir(), 'grove-be-'));
  const env = await createBrowserEnvironment({
    executablePath: '/usr/bin/chromium',
    processes: 1,
    recycleAfter: 0,
    warmPool: opts.warmPool ?? 0,
    warmPoolMaxMb: opts.warmPoolMaxMb,
    dataDir,
    headless: true,
    extraArgs: [],
    limits: opts.limits,
    frameCache: opts.frameCache,
  });
  return {
    env,
    dataDir,
    async create(input) {
      const sb = (await env.create(`t${process.pid}-${++seq}`, BrowserCreateOptions.parse({ type: 'browser', ...input }))) as ChromiumSandbox;
      await sb.ready();
      return sb;
    },
    async close() {
      await env.shutdown();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `body`, timing each phase it names. Past `limitMs` (under the test's own timeout) it fails with the
 * phase still running and the times of those done, so a rare slow run in CI says where its time went.
 */
export async function phased<T>(limitMs: number, body: (phase: <R>(name: string, work: Promise<R>) => Promise<R>) => Promise<T>): Promise<T> {
  const done: string[] = [];
  let current = '(before the first phase)';
  let since = Date.now();
  const phase = async <R,>(name: string, work: Promise<R>): Promise<R> => {
    current = name;
    since = Date.now();
    try {
      return await work;
    } finally {
      done.push(`${name} ${Date.now() - since} ms`);
      current = '(between phases)';
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still in "${current}" after ${Date.now() - since} ms; done: ${done.join(', ') || 'none'}`)), limitMs);
  });
  try {
    return await Promise.race([body(phase), limit]);
  } finally {
    clearTimeout(timer);
  }
}
