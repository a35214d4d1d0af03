// The REST API with real Chromium (createBrowserEnvironment) against a local fixture page, through the
// typed client over a real port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import sharp from 'sharp';
import { GroveApiError, GroveClient, parseMultipart } from '../../client/index.ts';
import { Observation, StepResult } from '../../protocol/observation.ts';
import { SandboxInfo, type BrowserCreateInput } from '../../protocol/sandbox.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';

const KEY = 'slow-test-key-123456';
const FILE_TEXT = 'grove download fixture\n';
const PAGE = `<!doctype html><html><head><title>clicks 0</title><style>
  body{margin:0} #b{position:absolute;left:0;top:0;width:200px;height:100px}
  #d{position:absolute;left:0;top:200px;width:200px;height:100px;display:block;background:#cde}
</style></head><body>
<button id="b" onclick="document.title='clicks '+(++window.n)">click me</button>
<a id="d" href="/file.txt" download="report.txt">download</a>
<script>window.n=0</script></body></html>`;

let fixture: http.Server;
let fixtureUrl: string;
let hostPort: string;
let app: FastifyInstance;
let client: GroveClient;
let dataDir: string | undefined;
// Real time plus a jump the TTL test makes, so expiry does not race a slow sandbox start on a loaded machine.
const clock = { offset: 0, now: () => Date.now() + clock.offset };

const body = (extra: Partial<BrowserCreateInput> = {}): BrowserCreateInput => ({
  type: 'browser',
  viewport: { width: 800, height: 600 },
  start_url: fixtureUrl,
  network: { allow: [hostPort] },
  ...extra,
});

beforeAll(async () => {
  fixture = http.createServer((req, res) => {
    if (req.url === '/file.txt') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="report.txt"' });
      res.end(FILE_TEXT);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(PAGE);
  });
  await new Promise<void>((ok) => fixture.listen(0, '127.0.0.1', ok));
  const { port } = fixture.address() as AddressInfo;
  hostPort = `127.0.0.1:${port}`;
  fixtureUrl = `http://${hostPort}/`;

  dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-app-slow-'));
  const config = loadConfig({
    env: {},
    flags: { apiKey: KEY, maxSandboxes: 2, browserProcesses: 1, dataDir, reaperIntervalMs: 100, port: 0 },
  });
  const browser = await createBrowserEnvironment({
    executablePath: config.chromiumPath,
    processes: 1,
    recycleAfter: 50,
    warmPool: 0,
    dataDir: path.join(dataDir, 'browser'),
    headless: true,
    extraArgs: [],
  });
  app = await buildApp({ config, environments: { browser }, clock });
  await app.listen({ host: '127.0.0.1', port: 0 });
  client = new GroveClient({ baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, apiKey: KEY });
});

afterAll(async () => {
  // Closing the app closes the sandboxes and the Chromium pool.
  await app?.close();
  await new Promise<void>((ok) => (fixture ? fixture.close(() => ok()) : ok()));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('browser sandboxes over HTTP', () => {
  it('create → wait → step click → screenshot → download → delete', async () => {
    const created = await client.createSandbox(body());
    expect(['creating', 'ready']).toContain(created.status);
    const ready = await client.waitSandbox(created.sandbox_id, 60);
    expect(ready.status).toBe('ready');
    expect(ready.error).toBeNull();
    const id = ready.sandbox_id;

    const r1 = await client.step(id, { action: { action: 'click', x: 100, y: 50 }, screenshot: 'none' });
    expect(r1.observation.title).toBe('clicks 1');
    expect(r1.actions).toHaveLength(1);
    expect(r1.actions[0].error).toBeNull();
    expect(r1.observation.screenshot?.base64).toBeUndefined();
    const r2 = await client.step(id, { actions: [{ action: 'click', x: 100, y: 50 }, { action: 'click', x: 100, y: 50 }] });
    expect(r2.observation.title).toBe('clicks 3');
    expect(r2.observation.screenshot?.base64?.length).toBeGreaterThan(1000);
    // What the environment answers is what the OpenAPI document promises.
    expect(StepResult.strict().safeParse(r2).error).toBeUndefined();
    expect(SandboxInfo.safeParse(ready).error).toBeUndefined();
    expect(Observation.safeParse(await client.observation(id, { screenshot: 'none', som: true })).error).toBeUndefined();

    const shot = await client.screenshot(id);
    expect(shot.mime).toBe('image/jpeg');
    expect([...shot.bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect([shot.width, shot.height]).toEqual([800, 600]);

    const r3 = await client.step(id, { action: { action: 'click', x: 100, y: 250 }, screenshot: 'none' });
    const dlEvent = r3.observation.events.find((e) => e.type === 'download');
    expect(dlEvent).toMatchObject({ filename: 'report.txt' });
    const downloads = await client.downloads(id);
    expect(downloads.map((d) => d.filename)).toEqual(['report.txt']);
    expect(new TextDecoder().decode(await client.download(id, downloads[0].id))).toBe(FILE_TEXT);
    await expect(client.download(id, 'nope')).rejects.toMatchObject({ status: 404, code: 'download_not_found' });

    expect((await client.getSandbox(id)).steps).toBe(3);
    await client.deleteSandbox(id);
    expect((await client.getSandbox(id)).status).toBe('closed');
    await expect(client.step(id, { action: { action: 'reload' } })).rejects.toMatchObject({ status: 410, code: 'sandbox_closed' });
  });

  it('screenshot "binary": multipart/mixed with the JSON body and the same image as base64 would carry', async () => {
    const { sandbox_id: id } = await client.createAndWait(body());
    const { result, image } = await client.stepBinary(id, { action: { action: 'click', x: 100, y: 50 } });
    expect(result.observation.title).toBe('clicks 1');
    expect(result.observation.screenshot).toMatchObject({ mime: 'image/jpeg', width: 800, height: 600 });
    expect(result.observation.screenshot?.base64).toBeUndefined();
    expect(StepResult.strict().safeParse(result).error).toBeUndefined();
    expect(image?.mime).toBe('image/jpeg');
    const meta = await sharp(image!.bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 800, 600]);
    // The same page state through the JSON path gives the same picture (a static page: identical pixels).
    const asJson = await client.observation(id);
    const a = await sharp(Buffer.from(asJson.screenshot!.base64!, 'base64')).raw().toBuffer();
    const b = await sharp(image!.bytes).raw().toBuffer();
    expect(b.equals(a)).toBe(true);

    // Raw wire: what a Python trainer reads with any multipart parser.
    const res = await fetch(`${client['baseUrl']}/sandboxes/${id}/observation?screenshot=binary`, { headers: { 'x-api-key': KEY } });
    const type = res.headers.get('content-type')!;
    expect(type).toMatch(/^multipart\/mixed; boundary=grove-[0-9a-f]{48}$/);
    const parts = parseMultipart(new Uint8Array(await res.arrayBuffer()), type);
    expect(parts.map((p) => p.type)).toEqual(['application/json', 'image/jpeg']);
    expect(JSON.parse(new TextDecoder().decode(parts[0].body))).toMatchObject({ title: 'clicks 1', screenshot: { width: 800 } });
    expect([...parts[1].body.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);

    const obs = await client.observationBinary(id, { som: true });
    expect(obs.result.som?.length).toBeGreaterThan(0);
    expect(obs.result.screenshot?.base64).toBeUndefined();
    expect(obs.image?.bytes.length).toBeGreaterThan(1000);
    await client.deleteSandbox(id);
  });

  it('raw model output that does not parse answers 200 with parse.ok=false and an observation', async () => {
    const { sandbox_id: id } = await client.createAndWait(body());
    const r = await client.step(id, { model_output: 'I am not sure what to do here.', format: 'qwen3vl', screenshot: 'none' });
    expect(r.parse).toMatchObject({ ok: false, format: 'qwen3vl' });
    expect(r.parse?.error).toBeTruthy();
    expect(r.actions).toEqual([]);
    expect(r.observation.title).toBe('clicks 0');
    await client.deleteSandbox(id);
  });

  it('overlapping steps in one sandbox: the second answers 409 sandbox_busy', async () => {
    const { sandbox_id: id } = await client.createAndWait(body());
    const slow = client.step(id, { action: { action: 'wait', ms: 1500 }, screenshot: 'none' });
    // The first request is in flight once the sandbox reports busy.
    for (let i = 0; i < 100 && (await client.getSandbox(id)).status !== 'busy'; i++) await new Promise((r) => setTimeout(r, 20));
    const err = await client.step(id, { action: { action: 'reload' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroveApiError);
    expect(err).toMatchObject({ status: 409, code: 'sandbox_busy' });
    expect((await slow).actions[0].error).toBeNull();
    await client.deleteSandbox(id);
  });

  it('DELETE during a step stops it: the step answers 410 sandbox_closed at once and the context is freed', async () => {
    const stats = () => app.grove.registry.backend.stats();
    const openBefore = stats().browser_contexts_open;
    const { sandbox_id: id } = await client.createAndWait(body());
    const t0 = Date.now();
    const stepping = client.step(id, { action: { action: 'wait', ms: 20_000 }, screenshot: 'none' }).catch((e: unknown) => e);
    for (let i = 0; i < 100 && (await client.getSandbox(id)).status !== 'busy'; i++) await new Promise((r) => setTimeout(r, 20));
    await client.deleteSandbox(id);
    const err = await stepping;
    expect(err).toBeInstanceOf(GroveApiError);
    expect(err).toMatchObject({ status: 410, code: 'sandbox_closed' });
    // Not the wait's 20 s: the step ended with the close.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(stats().browser_contexts_open).toBe(openBefore);
  });

  it('503 capacity_exhausted with Retry-After over the limit', async () => {
    const a = await client.createSandbox(body());
    const b = await client.createSandbox(body());
    const err = await client.createSandbox(body()).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'capacity_exhausted' });
    expect((err as GroveApiError).retryAfter).toBeGreaterThanOrEqual(1);
    await Promise.all([client.deleteSandbox(a.sandbox_id), client.deleteSandbox(b.sandbox_id)]);
  });

  it('TTL expiry closes the browser context', async () => {
    const stats = () => app.grove.registry.backend.stats();
    const openBefore = stats().browser_contexts_open;
    const closed = new Promise<string>((resolve) =>
      app.grove.registry.onEvent((e) => {
        if (e.type === 'closed' && e.reason === 'expired_ttl') resolve(e.id);
      }),
    );
    const { sandbox_id: id } = await client.createAndWait(body({ ttl_seconds: 60 }));
    expect(stats().browser_contexts_open).toBe(openBefore + 1);
    clock.offset += 61_000; // the reaper (every 100 ms) now sees the TTL passed
    expect(await closed).toBe(id);
    expect(stats().browser_contexts_open).toBe(openBefore);
    expect((await client.getSandbox(id)).status).toBe('closed');
    await expect(client.observation(id)).rejects.toMatchObject({ status: 410, code: 'sandbox_closed' });
  });
});
