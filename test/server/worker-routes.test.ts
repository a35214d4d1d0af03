// The routes only a worker serves (server/worker-routes.ts): a replay HAR in (streamed to disk, bounded, named
// safely), a recorded HAR out (then its episode directory removed), behind the worker's token, not in the OpenAPI.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { registerWorkerRoutes } from '../../server/worker-routes.ts';

const KEY = 'worker-token-0123456789';
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-worker-routes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function worker() {
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir: dir } });
  const app = await buildApp({ config, environments: {} });
  registerWorkerRoutes(app, config.recordingsDir);
  await app.ready();
  return { app, recordings: config.recordingsDir };
}

const HAR = JSON.stringify({ log: { version: '1.2', entries: [] } });
const octet = { 'content-type': 'application/octet-stream', 'x-api-key': KEY };

describe('worker-only routes', () => {
  test('a replay HAR is stored under the recordings directory and forgotten again', async () => {
    const { app, recordings } = await worker();
    const put = await app.inject({ method: 'PUT', url: '/worker/har/sb_abc', headers: octet, payload: HAR });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ replay_har: 'replay/sb_abc.har', size: HAR.length });
    expect(readFileSync(path.join(recordings, 'replay/sb_abc.har'), 'utf8')).toBe(HAR);
    const del = await app.inject({ method: 'DELETE', url: '/worker/har/sb_abc', headers: { 'x-api-key': KEY } });
    expect(del.statusCode).toBe(204);
    expect(existsSync(path.join(recordings, 'replay/sb_abc.har'))).toBe(false);
    await app.close();
  });

  test('the token is required, names cannot escape, and the body must be raw bytes', async () => {
    const { app } = await worker();
    expect((await app.inject({ method: 'PUT', url: '/worker/har/x', headers: { 'content-type': 'application/octet-stream' }, payload: HAR })).statusCode).toBe(401);
    const bad = await app.inject({ method: 'PUT', url: '/worker/har/..%2Fescape', headers: octet, payload: HAR });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_request');
    const json = await app.inject({ method: 'PUT', url: '/worker/har/x', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, payload: HAR });
    expect(json.statusCode).toBe(400);
    // Not part of the public API.
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-api-key': KEY } })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/worker'))).toBe(false);
    await app.close();
  });

  test('a recorded HAR is sent once, then the episode directory is removed; none answers 404', async () => {
    const { app, recordings } = await worker();
    const ep = path.join(recordings, 'sb_rec');
    mkdirSync(ep, { recursive: true });
    writeFileSync(path.join(ep, 'network.har'), HAR);
    writeFileSync(path.join(ep, 'steps.jsonl'), '{}\n');
    const got = await app.inject({ method: 'GET', url: '/worker/recordings/sb_rec/har', headers: { 'x-api-key': KEY } });
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe(HAR);
    expect(got.headers['content-length']).toBe(String(HAR.length));
    for (let i = 0; i < 100 && existsSync(ep); i++) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(ep)).toBe(false);
    const none = await app.inject({ method: 'GET', url: '/worker/recordings/sb_rec/har', headers: { 'x-api-key': KEY } });
    expect(none.statusCode).toBe(404);
    await app.close();
  });
});
