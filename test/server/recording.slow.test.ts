// API-level recording with real Chromium through buildApp + inject(): a `record: true` sandbox writes its
// episode directory (read back with recording/reader.ts), model-output steps are parsed with the sandbox's SoM
// list and screenshot size, and a HAR recorded live replays with the site gone.
import http from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import type { Observation, StepResult } from '../../protocol/observation.ts';
import type { BrowserCreateInput } from '../../protocol/sandbox.ts';
import { summariseHar } from '../../recording/har.ts';
import { readEpisode } from '../../recording/reader.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';

const KEY = 'slow-recording-key-123456';
const auth = { 'x-api-key': KEY };
// The button covers css (100..300, 100..180); its centre is (200, 140).
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>clicked 0</title><style>
  body{margin:0;height:3000px} #b{position:absolute;left:100px;top:100px;width:200px;height:80px}
  #box{position:absolute;left:400px;top:300px;width:200px;height:150px;overflow:auto;border:1px solid #000}
</style></head><body>
<button id="b" onclick="document.title='clicked '+(++window.n)">press me</button>
<div id="box"><a href="#x">inner link</a><div style="height:1000px"></div></div>
<script>window.n=0</script></body></html>`;
const HAR_PAGE = `<!doctype html><html><head><title>har page</title><link rel="stylesheet" href="/s.css"></head>
<body><p>recorded once</p><a href="/other">other</a></body></html>`;

let root: string;
let recordings: string;
let fixture: http.Server;
let origin: string;
let app: FastifyInstance;

function listen(handler: http.RequestListener): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer(handler);
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () => ok({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

function closeServer(s: http.Server): Promise<void> {
  s.closeAllConnections();
  return new Promise((ok) => s.close(() => ok()));
}

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'grove-rec-slow-'));
  recordings = path.join(root, 'recordings');
  ({ server: fixture, origin } = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  }));
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir: root, recordingsDir: recordings, maxSandboxes: 2 } });
  const browser = await createBrowserEnvironment({
    executablePath: config.chromiumPath,
    processes: 1,
    recycleAfter: 50,
    warmPool: 0,
    dataDir: path.join(root, 'browser'),
    headless: true,
    extraArgs: [],
  });
  app = await buildApp({ config, environments: { browser } });
});

afterAll(async () => {
  await app?.close();
  if (fixture) await closeServer(fixture);
  if (root) rmSync(root, { recursive: true, force: true });
});

async function createReady(body: Omit<BrowserCreateInput, 'type'>): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'browser', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().sandbox_id as string;
  const ready = await app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=60`, headers: auth });
  expect(ready.json().status, ready.body).toBe('ready');
  return id;
}

async function step(id: string, payload: Record<string, unknown>): Promise<StepResult> {
  const res = await app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, headers: auth, payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as StepResult;
}

async function del(id: string): Promise<void> {
  const res = await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth });
  expect(res.statusCode).toBe(204);
}

describe('record: true', () => {
  it('writes frames, canonical actions, resolved coordinates and model output; complete on delete', async () => {
    const host = new URL(origin).host;
    const id = await createReady({ start_url: origin + '/', viewport: { width: 800, height: 600 }, network: { allow: [host] }, record: true });
    const dir = path.join(recordings, id);

    // 1: a canonical click in css px.
    const s1 = await step(id, { action: { action: 'click', x: 200, y: 140 } });
    expect(s1.observation.title).toBe('clicked 1');

    // 2: WebVoyager "Click [n]" on the label the SoM observation gave the button.
    const obs = (await app.inject({ method: 'GET', url: `/sandboxes/${id}/observation?som=true&screenshot=none`, headers: auth })).json() as Observation;
    const button = obs.som?.find((e) => e.text.includes('press me'));
    expect(button, JSON.stringify(obs.som)).toBeDefined();
    const s2 = await step(id, { model_output: `Thought: press the button.\nAction: Click [${button!.label}]`, format: 'WebVoyager' });
    expect(s2.parse).toEqual({ ok: true, format: 'webvoyager' });
    expect(s2.actions[0].action).toEqual({ action: 'click_label', label: button!.label });
    expect(s2.observation.title).toBe('clicked 2');

    // 3: an OpenAI CUA click beyond the 800 px wide screenshot is a parse failure (nothing runs).
    const s3 = await step(id, { model_output: JSON.stringify({ type: 'click', x: 900, y: 10, button: 'left' }), format: 'openai-cua' });
    expect(s3.parse?.ok).toBe(false);
    expect(s3.parse?.format).toBe('openai_cua');
    expect(s3.parse?.error).toMatch(/outside the 800x600 screenshot/);
    expect(s3.actions).toEqual([]);

    // 4: no screenshot asked → recorded without a frame.
    const s4 = await step(id, { action: { action: 'wait', ms: 0 }, screenshot: 'none' });
    expect(s4.observation.screenshot).toBeUndefined();

    // 5: a terminal action.
    const s5 = await step(id, { action: { action: 'answer', text: 'pressed twice' } });
    expect(s5.done).toBe(true);

    await del(id);
    const ep = await readEpisode(dir);
    expect(ep.layout).toBe('grove');
    expect(ep.meta).toMatchObject({ episode_id: id, status: 'complete', steps: 5, answer: 'pressed twice' });
    expect(ep.meta.termination?.reason).toBe('task_completed');
    expect(ep.meta.config).toMatchObject({ record: true, start_url: origin + '/' });
    expect(ep.initial.frame).toBe('frames/0000.jpg');
    expect(ep.initial.title).toBe('clicked 0');
    expect(ep.steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5]);
    expect(ep.steps.map((s) => s.frame)).toEqual(['frames/0001.jpg', 'frames/0002.jpg', 'frames/0003.jpg', undefined, 'frames/0005.jpg']);
    for (const f of ['frames/0000.jpg', 'frames/0001.jpg', 'frames/0005.jpg']) expect(existsSync(path.join(dir, f)), f).toBe(true);
    expect(existsSync(path.join(dir, 'frames/0004.jpg'))).toBe(false);

    const [r1, r2, r3, r4, r5] = ep.steps;
    expect(r1.actions[0]).toMatchObject({ action: { action: 'click', x: 200, y: 140 }, css: { x: 200, y: 140 }, error: null });
    expect(r1.title).toBe('clicked 1');
    expect(r1.screenshot).toEqual({ mime: 'image/jpeg', width: 800, height: 600, scale: 1, scale_y: 1 });
    expect(r1.model_output).toBeUndefined();
    // The label click resolved to the button's box.
    const css = r2.actions[0].css!;
    expect(css.x).toBeGreaterThanOrEqual(100);
    expect(css.x).toBeLessThanOrEqual(300);
    expect(css.y).toBeGreaterThanOrEqual(100);
    expect(css.y).toBeLessThanOrEqual(180);
    expect(r2).toMatchObject({ format: 'webvoyager', thought: 'press the button.', title: 'clicked 2' });
    expect(r2.model_output).toContain(`Click [${button!.label}]`);
    expect(r3.parse_error).toMatch(/outside the 800x600 screenshot/);
    expect(r3.actions).toEqual([]);
    expect(r3.format).toBe('openai_cua');
    expect(r4.screenshot).toBeUndefined();
    expect(r5.actions[0].action).toEqual({ action: 'answer', text: 'pressed twice' });
  });

  it('"Scroll [n]" parses with the SoM list of the last observation', async () => {
    const host = new URL(origin).host;
    const id = await createReady({ start_url: origin + '/', viewport: { width: 800, height: 600 }, network: { allow: [host] } });
    // Without an SoM observation the format cannot locate element n.
    const before = await step(id, { model_output: 'Action: Scroll [1]; down', format: 'som', screenshot: 'none' });
    expect(before.parse?.ok).toBe(false);
    const obs = (await app.inject({ method: 'GET', url: `/sandboxes/${id}/observation?som=1&screenshot=none`, headers: auth })).json() as Observation;
    const link = obs.som?.find((e) => e.text.includes('inner link'));
    expect(link).toBeDefined();
    const res = await step(id, { model_output: `Action: Scroll [${link!.label}]; down`, format: 'som', screenshot: 'none' });
    expect(res.parse).toEqual({ ok: true, format: 'webvoyager' });
    const a = res.actions[0];
    expect(a.action.action).toBe('scroll');
    // Scrolled at the element's centre.
    expect(a.css?.x).toBeCloseTo(link!.x + link!.width / 2, 0);
    await del(id);
    // Not recorded: nothing under the recordings directory for it.
    expect(existsSync(path.join(recordings, id))).toBe(false);
  });

  it('som_overlay draws the labels onto the returned screenshot', async () => {
    const host = new URL(origin).host;
    const id = await createReady({ start_url: origin + '/', viewport: { width: 800, height: 600 }, network: { allow: [host] }, screenshot_format: 'png' });
    const plain = await step(id, { action: { action: 'wait', ms: 0 }, som: true });
    const overlaid = await step(id, { action: { action: 'wait', ms: 0 }, som: true, som_overlay: true });
    expect(plain.observation.som?.length).toBeGreaterThan(0);
    expect(overlaid.observation.screenshot?.base64).not.toBe(plain.observation.screenshot?.base64);
    const q = (await app.inject({ method: 'GET', url: `/sandboxes/${id}/observation?som=true&som_overlay=true`, headers: auth })).json() as Observation;
    expect(q.screenshot?.base64).toBe(overlaid.observation.screenshot?.base64);
    await del(id);
  });
});

describe('HAR', () => {
  it('records the network of a live episode and replays it with the site gone', async () => {
    const site = await listen((req, res) => {
      if (req.url === '/s.css') {
        res.writeHead(200, { 'content-type': 'text/css' });
        res.end('p{color:rgb(1,2,3)}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(HAR_PAGE);
    });
    const host = new URL(site.origin).host;
    let closed = false;
    try {
      const id = await createReady({ start_url: site.origin + '/', network: { allow: [host] }, record: true, record_har: true });
      await del(id);
      const ep = await readEpisode(path.join(recordings, id));
      expect(ep.meta.termination?.reason).toBe('aborted');
      expect(ep.initial.title).toBe('har page');
      const har = path.join(recordings, id, 'network.har');
      expect((await summariseHar(har)).urls).toEqual(expect.arrayContaining([site.origin + '/', site.origin + '/s.css']));

      await closeServer(site.server);
      closed = true;
      const replay = await createReady({ start_url: site.origin + '/', network: { allow: [host] }, replay_har: `${id}/network.har` });
      const o = (await app.inject({ method: 'GET', url: `/sandboxes/${replay}/observation?screenshot=none`, headers: auth })).json() as Observation;
      expect(o.last_action_error).toBeNull();
      expect(o.title).toBe('har page');
      // A URL the HAR does not hold is aborted, not fetched.
      const s = await step(replay, { action: { action: 'goto', url: site.origin + '/other' }, screenshot: 'none' });
      expect(s.observation.last_action_error).not.toBeNull();
      await del(replay);
    } finally {
      if (!closed) await closeServer(site.server);
    }
  });
});
