// The step channel (GET /steps/ws, server/step-socket.ts) on a real server and real Chromium: pipelined steps of
// one sandbox run in order and each answer carries its own screenshot bytes; steps of two sandboxes interleave;
// and what an attacker sends (no key, a wrong key, frames that are not JSON, a bad envelope, a bad action, an
// unknown or malformed sandbox id, a frame over the body limit, more requests than a connection may queue)
// answers with a stable code, and the server stays up for everyone else.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { GroveApiError, GroveClient } from '../../client/index.ts';
import { StepChannel } from '../../client/step-channel.ts';
import { generateApiKey, loadConfig } from '../../sandbox/config.ts';
import { startServer } from '../../server/server.ts';
import { MAX_IN_FLIGHT } from '../../server/step-socket.ts';
import { html, startFixture, type Fixture } from '../browser-env/support.ts';

let fx: Fixture;
let dir: string;
let server: Awaited<ReturnType<typeof startServer>>;
let client: GroveClient;
let apiKey: string;
const ids: string[] = [];

const PAGE = html(`<button id="b" style="width:300px;height:100px;font-size:30px" onclick="this.textContent = 'n=' + (++window.n); document.title = 'n=' + window.n">press</button><script>window.n = 0</script>`);

beforeAll(async () => {
  fx = await startFixture({ '/': PAGE });
  dir = await mkdtemp(join(tmpdir(), 'grove-step-socket-'));
  apiKey = generateApiKey();
  const config = loadConfig({ env: {}, flags: { host: '127.0.0.1', port: 0, apiKey, dataDir: dir, logLevel: 'silent', browserProcesses: 1, bodyLimit: 64 * 1024 } });
  server = await startServer(config, { logStream: process.stderr });
  client = new GroveClient({ baseUrl: server.url, apiKey });
  for (let i = 0; i < 2; i++) {
    ids.push((await client.createAndWait({ type: 'browser', start_url: fx.url('/'), viewport: { width: 640, height: 400 }, network: { allow: [`127.0.0.1:${fx.port}`] } }, 120)).sandbox_id);
  }
}, 180_000);
afterAll(async () => {
  client?.close();
  await server?.close();
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const click = { action: 'click', space: 'css_px', x: 150, y: 50 } as const;
const isJpeg = (b: Uint8Array) => b[0] === 0xff && b[1] === 0xd8;
const isPng = (b: Uint8Array) => b[0] === 0x89 && b[1] === 0x50;

/** A raw WebSocket on the channel (what an attacker holds), with every frame it receives decoded. */
async function rawSocket(headers: Record<string, string> = { 'x-api-key': apiKey }): Promise<{ ws: WebSocket; frames: any[]; closed: Promise<number> }> {
  const ws = new WebSocket(server.url.replace(/^http/, 'ws') + '/steps/ws', { headers });
  const frames: any[] = [];
  ws.on('message', (d: Buffer) => frames.push(JSON.parse(d.subarray(4, 4 + d.readUInt32BE(0)).toString())));
  const closed = new Promise<number>((ok) => ws.on('close', (code) => ok(code)));
  await new Promise<void>((ok, ko) => { ws.once('open', () => ok()); ws.once('error', ko); });
  return { ws, frames, closed };
}

describe('the step channel', () => {
  it('runs pipelined steps of one sandbox in order, each answer with its own screenshot; two sandboxes interleave', async () => {
    const ch = await StepChannel.open({ baseUrl: server.url, apiKey });
    try {
      const before = (await client.observation(ids[0], { screenshot: 'none' })).step;
      // Five clicks sent at once to one sandbox, three to the other: no 409 sandbox_busy, answers in order per sandbox.
      const a = Array.from({ length: 5 }, () => ch.step(ids[0], { action: click }));
      const b = Array.from({ length: 3 }, () => ch.step(ids[1], { action: click, screenshot: 'none' }));
      expect(ch.outstanding).toBe(8);
      const ra = await Promise.all(a);
      const rb = await Promise.all(b);
      expect(ra.map((r) => r.result.observation.step)).toEqual([1, 2, 3, 4, 5].map((k) => before + k));
      expect(ra.map((r) => r.result.observation.title)).toEqual(['n=1', 'n=2', 'n=3', 'n=4', 'n=5']);
      for (const r of ra) {
        expect(r.image).not.toBeNull();
        const bytes = r.image!.bytes;
        expect(r.image!.mime === 'image/png' ? isPng(bytes) : isJpeg(bytes)).toBe(true);
        expect(r.result.observation.screenshot?.base64).toBeUndefined();
        expect(r.result.actions[0].error).toBeNull();
      }
      // Distinct frames: each answer's bytes are its own capture (the button's text changed between them).
      expect(new Set(ra.map((r) => Buffer.from(r.image!.bytes).toString('base64'))).size).toBe(5);
      expect(rb.map((r) => r.result.observation.title)).toEqual(['n=1', 'n=2', 'n=3']);
      expect(rb.every((r) => r.image === null && r.result.observation.screenshot === undefined)).toBe(true);
      // The same step over HTTP answers the same shape (the channel is a transport, not another API).
      const http = await client.step(ids[0], { action: click });
      const ws = (await ch.step(ids[0], { action: click })).result;
      expect(Object.keys(ws).sort()).toEqual(Object.keys(http).sort());
      expect(Object.keys(ws.observation).sort()).toEqual(Object.keys(http.observation).filter((k) => k !== 'screenshot').concat('screenshot').sort());
      expect(ws.observation.title).toBe('n=7');
    } finally {
      await ch.close();
    }
  }, 120_000);

  it('refuses an upgrade without a key (401 unauthorized) or with a wrong one (403 forbidden), in the header or ?api_key=', async () => {
    await expect(StepChannel.open({ baseUrl: server.url })).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    await expect(StepChannel.open({ baseUrl: server.url, apiKey: 'wrong' })).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    const viaQuery = new WebSocket(server.url.replace(/^http/, 'ws') + '/steps/ws?api_key=wrong');
    // terminate() during the handshake emits 'error' ("closed before the connection was established"): expected here.
    viaQuery.on('error', () => {});
    const status = await new Promise<number>((ok) => viaQuery.once('unexpected-response', (_q, res) => { ok(res.statusCode ?? 0); viaQuery.terminate(); }));
    expect(status).toBe(403);
  });

  it('answers a bad step with its own 4xx and keeps the connection; unknown or malformed ids too', async () => {
    const ch = await StepChannel.open({ baseUrl: server.url, apiKey });
    try {
      await expect(ch.step(ids[0], { action: { action: 'click', space: 'css_px', x: 'left' } as never })).rejects.toMatchObject({ status: 400, code: 'invalid_action' });
      await expect(ch.step(ids[0], { action: click, actions: [click] } as never)).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
      await expect(ch.step(ids[0], { model_output: 'click(1,2)', format: 'no-such-format' })).rejects.toMatchObject({ status: 400, code: 'unknown_format' });
      await expect(ch.step('no-such-sandbox', { action: click })).rejects.toMatchObject({ status: 404, code: 'sandbox_not_found' });
      await expect(ch.step('x'.repeat(5000), { action: click })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
      await expect(ch.step('', { action: click })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
      await expect(ch.step('../../etc/passwd', { action: click })).rejects.toMatchObject({ status: 404, code: 'sandbox_not_found' });
      // The connection is still good.
      const ok = await ch.step(ids[0], { action: click });
      expect(ok.image).not.toBeNull();
    } finally {
      await ch.close();
    }
  }, 60_000);

  it('closes the connection (1008) on a frame that is not a JSON envelope, after an error answer with seq null', async () => {
    for (const bad of ['not json', '[1,2]', '{"seq": -1, "sandbox_id": "x", "step": {}}', '{"seq": 1.5}', '{"seq": 1, "sandbox_id": "x", "step": {}, "env": {"PATH": "/tmp"}}', '{"__proto__": {"polluted": 1}, "seq": 1}']) {
      const { ws, frames, closed } = await rawSocket();
      ws.send(bad);
      expect(await closed).toBe(1008);
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ seq: null, ok: false, status: 400, error: { code: 'invalid_request' } });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('closes the connection (1009) on a frame over the body limit, and the server serves the next one', async () => {
    const { ws, closed } = await rawSocket();
    ws.send(JSON.stringify({ seq: 1, sandbox_id: ids[0], step: { model_output: 'x'.repeat(100 * 1024), format: 'qwen3-vl' } }));
    expect(await closed).toBe(1009);
    const ch = await StepChannel.open({ baseUrl: server.url, apiKey });
    expect((await ch.step(ids[1], { action: click })).image).not.toBeNull();
    await ch.close();
  }, 60_000);

  it(`queues at most ${MAX_IN_FLIGHT} requests a connection: the next is 503 overloaded with retry_after; a client that leaves mid-queue harms nobody`, async () => {
    const { ws, frames } = await rawSocket();
    const n = MAX_IN_FLIGHT + 20;
    for (let seq = 1; seq <= n; seq++) ws.send(JSON.stringify({ seq, sandbox_id: ids[1], step: { action: { action: 'wait', ms: 0 }, screenshot: 'none' } }));
    for (let i = 0; i < 600 && frames.filter((f) => f.error?.code === 'overloaded').length < 20; i++) await new Promise((ok) => setTimeout(ok, 50));
    const refused = frames.filter((f) => f.error?.code === 'overloaded');
    expect(refused.length).toBeGreaterThanOrEqual(20);
    expect(refused[0]).toMatchObject({ ok: false, status: 503, retry_after: 1 });
    // Leave with the queue still full: the server drops the steps not started, and the sandbox steps again.
    ws.terminate();
    for (let i = 0; ; i++) {
      try {
        const r = await client.step(ids[1], { action: click });
        expect(r.observation.screenshot).toBeDefined();
        break;
      } catch (e) {
        // The step that was running when the client left finishes first (one step at a time per sandbox).
        if (!(e instanceof GroveApiError && e.code === 'sandbox_busy') || i > 50) throw e;
        await new Promise((ok) => setTimeout(ok, 100));
      }
    }
  }, 180_000);
});
