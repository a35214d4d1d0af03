// Orchard-GUI calls through the step endpoint (model_output + format "orchard") against real Chromium: every example
// call of the published prompt and a call of every tool parse on the server and do what web_env.py does.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import type { StepResult } from '../../protocol/observation.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { FORMATS } from '../../vlm-client/formats/index.ts';
import { CALLS, PROMPT_EXAMPLES } from '../vlm-client/fixtures/orchard-calls.ts';

const KEY = 'slow-orchard-key-123456';
const auth = { 'x-api-key': KEY };
// Fixed elements at the grid points the calls use (1280x1000 viewport: rel x * 1.28, rel y * 1).
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>start</title><style>
  body{margin:0;height:3000px;user-select:none} div,form{position:fixed}
  #f{left:400px;top:50px} #q{width:300px;height:40px}
  #c1{left:200px;top:260px;width:240px;height:80px;background:#cde}
  #box{left:860px;top:420px;width:200px;height:160px;overflow:auto;border:1px solid #000}
  #h{left:80px;top:860px;width:100px;height:80px;background:#eee}
  #strip{left:0;top:680px;width:1280px;height:40px;background:#fed}
</style></head><body>
<form id="f" onsubmit="event.preventDefault(); document.title = 'submit:' + q.value"><input id="q" value="old text"></form>
<div id="c1"></div><div id="box"><div style="position:static;height:2000px">inner</div></div><div id="h"></div><div id="strip"></div>
<script>
  const t = (s) => { document.title = s; };
  let downs = 0, from = '';
  c1.addEventListener('click', (e) => t('click:c1:' + e.detail));
  c1.addEventListener('dblclick', () => t('dblclick:c1'));
  c1.addEventListener('contextmenu', (e) => { e.preventDefault(); t('contextmenu:c1'); });
  q.addEventListener('focus', () => t('focus:q'));
  q.addEventListener('input', () => t('input:' + q.value));
  document.addEventListener('keydown', (e) => {
    if (e.target === q || ['Control', 'Shift', 'Alt', 'Meta'].includes(e.key)) return;
    if (e.key === 'ArrowDown') { e.preventDefault(); t('down:' + (++downs)); return; }
    t('key:' + (e.ctrlKey ? 'Control+' : '') + e.key);
  });
  window.addEventListener('scroll', () => t('scrollY:' + Math.round(scrollY)));
  box.addEventListener('scroll', () => t('box:' + Math.round(box.scrollTop)));
  h.addEventListener('mouseenter', () => t('hover:h'));
  strip.addEventListener('mousedown', (e) => { from = e.clientX + ',' + e.clientY; });
  strip.addEventListener('mouseup', (e) => t('drag:' + from + '->' + e.clientX + ',' + e.clientY));
</script></body></html>`;
// Green only where the page renders at 2 device px per CSS px; a 1 CSS px black hairline at x = 100.
const HIDPI = `<!doctype html><html><head><title>hidpi</title><style>body{margin:0;background:#fff}
  @media (min-resolution: 2dppx) { body { background: rgb(0,128,0) } }
  #line{position:fixed;left:100px;top:100px;width:1px;height:200px;background:#000}</style></head><body><div id="line"></div></body></html>`;
const OTHER = '<!doctype html><html><head><title>other</title></head><body>other page</body></html>';
// A field that rewrites what is typed (upper case) and one that keeps it, each filling the top of the viewport.
const FIELDS = `<!doctype html><html><head><title>fields</title><style>body{margin:0} input{position:fixed;left:0;width:1280px;height:100px;font-size:40px}
  #u{top:0} #p{top:200px}</style></head><body><input id="u" oninput="this.value = this.value.toUpperCase()"><input id="p"></body></html>`;

let root: string;
let fixture: http.Server;
let origin: string;
let app: FastifyInstance;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'grove-orchard-slow-'));
  fixture = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(req.url === '/hidpi' ? HIDPI : req.url === '/other' ? OTHER : req.url === '/fields' ? FIELDS : PAGE);
  });
  await new Promise<void>((ok) => fixture.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir: root, maxSandboxes: 2 } });
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
  if (fixture) {
    fixture.closeAllConnections();
    await new Promise<void>((ok) => fixture.close(() => ok()));
  }
  if (root) rmSync(root, { recursive: true, force: true });
});

async function sandbox(): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/sandboxes',
    headers: auth,
    // Orchard-GUI's environment: its defaults (1280x1000, PNG, rel1000).
    payload: { type: 'browser', ...FORMATS.orchard.sandbox, start_url: `${origin}/`, network: { allow: [new URL(origin).host] } },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().sandbox_id as string;
  expect((await app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=60`, headers: auth })).statusCode).toBe(200);
  return id;
}

async function step(id: string, model_output: string): Promise<StepResult> {
  const res = await app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, headers: auth, payload: { format: 'orchard', model_output } });
  expect(res.statusCode, res.body).toBe(200);
  const r = res.json() as StepResult;
  expect(r.parse, model_output).toEqual({ ok: true, format: 'orchard' });
  expect(r.observation.last_action_error, model_output).toBeNull();
  return r;
}

const tc = (name: string, args: object) => `<think>next</think>\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const call = (name: string, i = 0) => CALLS.filter((c) => c.name === name)[i];
const run = (id: string, c: { name: string; args: Record<string, unknown> }) =>
  step(id, tc(c.name, JSON.parse(JSON.stringify(c.args).replace('"URL"', JSON.stringify(`${origin}/other`)))));

describe('Orchard-GUI on the wire', () => {
  it('executes the example calls of the published prompt', async () => {
    const id = await sandbox();
    const first = await step(id, PROMPT_EXAMPLES.click);
    expect(first.observation.screenshot).toMatchObject({ mime: 'image/png', width: 1280, height: 1000 });
    expect(first.observation.title).toBe('focus:q');
    // click → write → press Enter: write empties the field first (old text is gone).
    expect((await step(id, PROMPT_EXAMPLES.clickWriteEnter)).observation.title).toBe('submit:wireless mouse');
    // new_tab → goto_url
    const r = await step(id, PROMPT_EXAMPLES.newTabGoto.replace('URL', `${origin}/other`));
    expect(r.observation.tabs).toHaveLength(2);
    expect(r.observation).toMatchObject({ url: `${origin}/other`, title: 'other' });
    await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth });
  });

  it('executes a call of every tool as web_env.py does', async () => {
    const id = await sandbox();
    const title = async (c: { name: string; args: Record<string, unknown> }) => (await run(id, c)).observation.title;
    expect(await title(call('click'))).toBe('click:c1:1');
    expect(await title(call('click', 1))).toBe('dblclick:c1');
    expect(await title(call('click', 2))).toBe('contextmenu:c1');
    await step(id, PROMPT_EXAMPLES.click);
    expect(await title(call('write'))).toBe('input:red shoes');
    expect(await title(call('press_keys'))).toBe('submit:red shoes');
    await run(id, call('click'));
    expect(await title(call('press_keys', 1))).toBe('key:Control+a');
    expect(await title(call('press_keys', 2))).toBe('down:3');
    // Half of the 1000 px viewport; then a quarter of it inside the box under the point.
    expect(await title(call('scroll'))).toBe('scrollY:500');
    expect(await title(call('scroll', 1))).toBe('box:250');
    await run(id, call('wait'));
    expect(await title(call('hover'))).toBe('hover:h');
    // [100, 700] → [400, 700] on the grid is CSS 128,700 → 512,700.
    expect(await title(call('drag'))).toBe('drag:128,700->512,700');
    expect((await run(id, call('goto_url'))).observation.url).toBe(`${origin}/other`);
    expect((await run(id, call('go_back'))).observation.url).toBe(`${origin}/`);
    const opened = await run(id, call('new_tab'));
    expect(opened.observation.tabs.map((t) => t.active)).toEqual([false, true]);
    const closed = await run(id, call('close_tab'));
    expect(closed.observation.tabs).toHaveLength(1);
    await run(id, call('new_tab'));
    const switched = await run(id, call('switch_tab'));
    expect(switched.observation.tabs.map((t) => t.active)).toEqual([true, false]);
    const done = await run(id, call('done'));
    expect(done.done).toBe(true);
    expect(done.actions[0].action).toEqual({ action: 'answer', text: 'The cheapest item costs $12.' });
    await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth });
  });

  it("reports web_env's scroll boundary and field value facts, and the orchard feedback says them", async () => {
    const id = await sandbox();
    const text = (r: StepResult) => FORMATS.orchard.observationText!(r.observation, { lastActions: r.actions });
    // At the top of the page a scroll up moves nothing: the boundary note.
    const up = await step(id, tc('scroll', { direction: 'up', amount: 0.5 }));
    expect(up.actions[0].scrolled).toEqual({ dx: 0, dy: 0 });
    expect(text(up)).toMatch(/Succeed: `scroll` executed\. Note: the page did not scroll — it may be at its boundary/);
    const down = await step(id, tc('scroll', { direction: 'down', amount: 0.5 }));
    expect(down.actions[0].scrolled).toEqual({ dx: 0, dy: 500 });
    expect(text(down)).not.toMatch(/did not scroll/);
    // 3000 px of page, 1000 px of viewport: two more screens reach the bottom; the next one moves nothing.
    await step(id, tc('scroll', { direction: 'down', amount: 1 }));
    await step(id, tc('scroll', { direction: 'down', amount: 1 }));
    const bottom = await step(id, tc('scroll', { direction: 'down', amount: 1 }));
    expect(bottom.actions[0].scrolled).toEqual({ dx: 0, dy: 0 });
    expect(text(bottom)).toMatch(/did not scroll/);

    await step(id, tc('goto_url', { url: `${origin}/fields` }));
    // The upper-casing field holds another value than the typed text: the note says what it holds.
    const upper = await step(id, `${tc('click', { point_2d: [500, 50] })}\n<tool_call>\n${JSON.stringify({ name: 'write', arguments: { message: 'red shoes' } })}\n</tool_call>`);
    expect(upper.actions.map((a) => a.action.action)).toEqual(['click', 'type']);
    expect(upper.actions[1].field_value).toBe('RED SHOES');
    expect(text(upper)).toContain('Succeed: `write` executed. Note: the field now holds "RED SHOES", not the typed text');
    const plain = await step(id, `${tc('click', { point_2d: [500, 250] })}\n<tool_call>\n${JSON.stringify({ name: 'write', arguments: { message: 'red shoes' } })}\n</tool_call>`);
    expect(plain.actions[1].field_value).toBe('red shoes');
    expect(text(plain)).not.toMatch(/Note: the field/);
    await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth });
  });

  it('at dpr 2 the page renders at device scale 2: a 1280x1000 PNG of a 640x500 CSS page, not an upscaled capture', async () => {
    const env_config = { width: 1280, height: 1000, dpr: 2, max_retries: 1, wait_timeout: 5000, resize_output_coords: true, resize_scale: 1000, image_patch_size: 32 };
    const res = await app.inject({ method: 'POST', url: `/orchard-gui/${KEY}/dpr-env/reset`, payload: { task_id: 'hidpi', task_data: { start_url: `${origin}/hidpi` }, env_config, tool_list: [], policy: 'hidpi-test' } });
    expect(res.statusCode, res.body).toBe(200);
    const obs = res.json().observation as { screenshot: string; screen_size: number[] };
    expect(obs.screen_size).toEqual([1280, 1000]);
    const { data, info } = await sharp(Buffer.from(obs.screenshot, 'base64')).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([1280, 1000]);
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    // The 2dppx media query matched (an upscaled 1x render is white here).
    expect(px(20, 20)).toEqual([0, 128, 0]);
    // The hairline covers device px 200 and 201 exactly, crisp: an upscale smears it into grey and rings beside it.
    expect([px(199, 400), px(200, 400), px(201, 400), px(202, 400)]).toEqual([[0, 128, 0], [0, 0, 0], [0, 0, 0], [0, 128, 0]]);
    expect((await app.inject({ method: 'POST', url: `/orchard-gui/${KEY}/dpr-env/exit` })).statusCode).toBe(200);
  });
});
