// Episode reset (POST /sandboxes/{id}/reset) with real Chromium through the typed client over a real port:
// a fresh context (no cookies, storage, tabs, downloads or steps from before), new network rules and start
// URL, warm contexts used when the sandbox has the default look, and the error answers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import type { LocalBrowserEnvironment } from '../../browser-env/environment.ts';
import { GroveApiError, GroveClient } from '../../client/index.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';

const KEY = 'reset-test-key-123456';
// Shows what the context remembers, then remembers something.
const PAGE = `<!doctype html><html><head><title>x</title></head><body>
<a href="/other" target="_blank" style="position:absolute;left:0;top:0;width:200px;height:60px;display:block">tab</a>
<script>document.title = 'cookie=' + document.cookie + ';ls=' + localStorage.getItem('k');
document.cookie = 'seen=1'; localStorage.setItem('k', 'v');</script></body></html>`;

let fixture: http.Server;
let other: http.Server;
let hostPort: string;
let otherHostPort: string;
let app: FastifyInstance;
let dataDir: string | undefined;
let env: LocalBrowserEnvironment;
let client: GroveClient;

async function serve(page: string): Promise<{ server: http.Server; hostPort: string }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, hostPort: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  ({ server: fixture, hostPort } = await serve(PAGE));
  ({ server: other, hostPort: otherHostPort } = await serve('<!doctype html><title>other site</title>'));
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-reset-slow-'));
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, maxSandboxes: 4, browserProcesses: 1, dataDir, port: 0 } });
  env = await createBrowserEnvironment({
    executablePath: config.chromiumPath,
    processes: 1,
    recycleAfter: 50,
    warmPool: 2,
    dataDir: path.join(dataDir, 'browser'),
    headless: true,
    extraArgs: [],
  });
  app = await buildApp({ config, environments: { browser: env } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  client = new GroveClient({ baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, apiKey: KEY });
});

afterAll(async () => {
  await app?.close();
  await new Promise<void>((ok) => (fixture ? fixture.close(() => ok()) : ok()));
  await new Promise<void>((ok) => (other ? other.close(() => ok()) : ok()));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('POST /sandboxes/{id}/reset', () => {
  it('gives a fresh context on the new start URL with the new rules; the id stays, the steps start again', async () => {
    const start = `http://${hostPort}/`;
    const info = await client.createAndWait({ type: 'browser', start_url: start, network: { allow: [hostPort] } });
    const id = info.sandbox_id;
    let r = await client.step(id, { action: { action: 'reload' }, screenshot: 'none' });
    expect(r.observation.title).toBe('cookie=seen=1;ls=v'); // the context remembers within an episode
    r = await client.step(id, { action: { action: 'click', x: 100, y: 30 }, screenshot: 'none' });
    expect(r.observation.tabs).toHaveLength(2);
    expect((await client.getSandbox(id)).steps).toBe(2);

    await env.warmed();
    const hits = env.stats().warm_hits_total;
    const after = await client.resetSandbox(id);
    expect(after).toMatchObject({ sandbox_id: id, status: 'ready', steps: 0 });
    expect(env.stats().warm_hits_total).toBe(hits + 1);
    const obs = await client.observation(id, { screenshot: 'none' });
    expect(obs.title).toBe('cookie=;ls=null');
    expect(obs.url).toBe(start);
    expect(obs.tabs).toHaveLength(1);
    expect(obs.step).toBe(0);

    // New rules: the old host is blocked now, the new one opens.
    const blocked = await client.resetSandbox(id, { start_url: start, network: { allow: [otherHostPort] } });
    expect(blocked.error?.code).toBe('network_blocked');
    const moved = await client.resetSandbox(id, { start_url: `http://${otherHostPort}/` });
    expect(moved.error).toBeNull();
    expect((await client.observation(id, { screenshot: 'none' })).title).toBe('other site');
    await client.deleteSandbox(id);
  });

  it('resets a sandbox with its own look on a fresh (not warm) context', async () => {
    const start = `http://${hostPort}/`;
    const info = await client.createAndWait({ type: 'browser', viewport: { width: 800, height: 600 }, start_url: start, network: { allow: [hostPort] } });
    const id = info.sandbox_id;
    await client.step(id, { action: { action: 'reload' }, screenshot: 'none' });
    const hits = env.stats().warm_hits_total;
    await client.resetSandbox(id);
    expect(env.stats().warm_hits_total).toBe(hits);
    const obs = await client.observation(id);
    expect(obs.title).toBe('cookie=;ls=null');
    expect([obs.screenshot?.width, obs.screenshot?.height]).toEqual([800, 600]);
    await client.deleteSandbox(id);
  });

  it('answers 404 for an unknown sandbox, 400 for a bad body, 410 once deleted', async () => {
    const err = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as GroveApiError);
    expect((await err(client.resetSandbox('sb_nope')))?.status).toBe(404);
    const info = await client.createAndWait({ type: 'browser', network: { allow: [hostPort] } });
    const bad = await err(client.resetSandbox(info.sandbox_id, { start_url: 5 } as never));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request' });
    const extra = await err(client.resetSandbox(info.sandbox_id, { viewport: { width: 300, height: 300 } } as never));
    expect(extra).toMatchObject({ status: 400, code: 'invalid_request' });
    await client.deleteSandbox(info.sandbox_id);
    expect((await err(client.resetSandbox(info.sandbox_id)))?.status).toBe(410);
  });

  it('answers 400 navigation_blocked for a start_url no sandbox may open, as create does, and the sandbox stays as it was', async () => {
    const err = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as GroveApiError);
    const start = `http://${hostPort}/`;
    const info = await client.createAndWait({ type: 'browser', start_url: start, network: { allow: [hostPort] } });
    const id = info.sandbox_id;
    await client.step(id, { action: { action: 'reload' }, screenshot: 'none' });
    const before = (await client.listSandboxes()).length;
    const refused = ['file:///etc/passwd', 'FILE:///etc/hostname', 'chrome://version', 'javascript:alert(1)', 'view-source:http://x.test/', 'devtools://devtools/bundled/inspector.html'];
    for (const url of refused) {
      const created = await err(client.createSandbox({ type: 'browser', start_url: url }));
      expect(created, url).toMatchObject({ status: 400, code: 'navigation_blocked' });
      const reset = await err(client.resetSandbox(id, { start_url: url }));
      expect(reset, url).toMatchObject({ status: 400, code: 'navigation_blocked' });
      expect(reset?.code).toBe(created?.code);
    }
    // Nothing was created by the refused creates, and the sandbox kept its episode: same page, same steps, same context.
    expect((await client.listSandboxes()).length).toBe(before);
    expect(await client.getSandbox(id)).toMatchObject({ status: 'ready', steps: 1 });
    const r = await client.step(id, { action: { action: 'reload' }, screenshot: 'none' });
    expect(r.observation.last_action_error).toBeNull();
    expect(r.observation.url).toBe(start);
    expect(r.observation.title).toBe('cookie=seen=1;ls=v');
    // And a reset to an allowed URL still works afterwards.
    expect(await client.resetSandbox(id, { start_url: `http://${otherHostPort}/`, network: { allow: [otherHostPort] } })).toMatchObject({ status: 'ready', steps: 0, error: null });
    await client.deleteSandbox(id);
  });
});
