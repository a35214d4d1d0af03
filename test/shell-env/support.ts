// A live Grove server with only the shell environment, on an ephemeral loopback port, for shell and Orchard tests.
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { shellEnvironment } from '../../server/server.ts';

export const KEY = 'shell-test-key-123456';

export interface ApiAnswer {
  status: number;
  json: any;
  headers: Headers;
  text: string;
}

/** A caller of a Grove server at `url` with `key`: JSON in, the answer parsed as JSON when it is (else `json` null). */
export function apiCaller(url: string, key: string) {
  return async (method: string, u: string, body?: unknown): Promise<ApiAnswer> => {
    const res = await fetch(url + u, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON (file bytes)
    }
    return { status: res.status, json, headers: res.headers, text };
  };
}

export interface ShellServer {
  app: FastifyInstance;
  url: string;
  call(method: string, url: string, body?: unknown): Promise<ApiAnswer>;
  /** Creates a shell sandbox and waits until it is ready; returns its id. */
  sandbox(body?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startShellServer(flags: Partial<GroveConfigInput> = {}): Promise<ShellServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-shell-'));
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir, maxSandboxes: 200, ...flags } });
  const app = await buildApp({ config, environments: async (log) => ({ shell: await shellEnvironment(config, log) }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const call = apiCaller(url, KEY);
  return {
    app,
    url,
    call,
    async sandbox(body = {}) {
      const created = await call('POST', '/sandboxes', { type: 'shell', ...body });
      if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
      const id = created.json.sandbox_id as string;
      const ready = await call('GET', `/sandboxes/${id}/wait?timeout=30`);
      if (ready.json.status !== 'ready') throw new Error(`sandbox not ready: ${ready.text}`);
      return id;
    },
    // The server's data folder goes with it (each test server used to leave its grove-shell-* folder in /tmp).
    close: async () => {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
