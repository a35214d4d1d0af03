// Environment facts the policy formats rely on, against real Chromium: per-axis screenshot scale under smart
// resize, Set-of-Mark labels that outlive their page, and the rel1000 divisor shared by parser and executor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseModelOutput } from '../../vlm-client/formats/index.ts';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

const LINKS = html(
  `<a id="a" href="/other" style="position:absolute;left:10px;top:10px;width:200px;height:40px;display:block">go to other</a>
   <button id="b" onclick="document.title='clicked b'" style="position:absolute;left:10px;top:100px;width:200px;height:40px">button b</button>`,
  '<style>body{margin:0}</style>',
);
const OTHER = html(
  `<button id="x" onclick="document.title='clicked x on other'" style="position:absolute;left:10px;top:10px;width:400px;height:200px">x</button>`,
  '<style>body{margin:0}</style>',
);
const CORNER = html(
  `<div style="position:fixed;inset:0" onclick="document.title='at '+event.clientX+','+event.clientY"></div>`,
  '<style>body{margin:0}</style>',
);

let fx: Fixture;
let te: TestEnv;
const net = () => ({ allow: [`127.0.0.1:${fx.port}`] });

beforeAll(async () => {
  fx = await startFixture({ '/links': LINKS, '/other': OTHER, '/corner': CORNER });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

describe('screenshot scale', () => {
  it('reports the horizontal and the vertical scale of a smart-resized screenshot', async () => {
    const sb = await te.create({
      start_url: fx.url('/links'),
      network: net(),
      viewport: { width: 1280, height: 720 },
      resize: { mode: 'smart', factor: 32 },
    });
    const o = await sb.observe();
    // qwen-vl-utils: 1280x720 at factor 32 → 1280x704, so only the vertical axis is scaled.
    expect(o.screenshot).toMatchObject({ width: 1280, height: 704, scale: 1, scale_x: 1 });
    expect(o.screenshot!.scale_y).toBeCloseTo(704 / 720, 10);
    // image_px on that screenshot lands on the right CSS row: y 352 of 704 is CSS 360.
    const r = await sb.step([{ action: 'click', x: 640, y: 352, space: 'image_px' }]);
    expect(r.actions[0].css).toEqual({ x: 640, y: 360 });
    await sb.close();
  });
});

describe('Set-of-Mark labels', () => {
  it('refuses labels made on a page the agent has navigated away from', async () => {
    const sb = await te.create({ start_url: fx.url('/links'), network: net() });
    const o = await sb.observe({ som: true });
    const link = o.som!.find((e) => e.text === 'go to other')!;
    const button = o.som!.find((e) => e.text === 'button b')!;
    // The link navigates; the button's label then belongs to the old page, where /other has a button under it.
    const r = await sb.step([{ action: 'click_label', label: link.label }, { action: 'click_label', label: button.label }]);
    expect(r.observation.url).toBe(fx.url('/other'));
    expect(r.observation.last_action_error).toMatchObject({ code: 'labels_stale' });
    expect(r.observation.last_action_error!.message).toMatch(/navigated to .*\/other.*observe again with som/);
    expect(r.observation.title).not.toBe('clicked x on other');
    // Fresh labels work again.
    const o2 = await sb.observe({ som: true });
    const x = o2.som!.find((e) => e.text === 'x')!;
    const r2 = await sb.step([{ action: 'click_label', label: x.label }]);
    expect(r2.observation.last_action_error).toBeNull();
    expect(r2.observation.title).toBe('clicked x on other');
    await sb.close();
  });

  it('refuses labels of another tab', async () => {
    const sb = await te.create({ start_url: fx.url('/links'), network: net() });
    const o = await sb.observe({ som: true });
    const button = o.som!.find((e) => e.text === 'button b')!;
    const r = await sb.step([{ action: 'new_tab', url: fx.url('/other') }, { action: 'click_label', label: button.label }]);
    expect(r.observation.last_action_error).toMatchObject({ code: 'labels_stale' });
    expect(r.observation.last_action_error!.message).toMatch(/another tab/);
    await sb.close();
  });
});

describe('rel_divisor 999', () => {
  it('parser (given the sandbox parse context) and executor accept the same 0..999 range', async () => {
    const sb = await te.create({ start_url: fx.url('/corner'), network: net(), rel_divisor: 999, coordinate_space: 'rel1000' });
    await sb.observe();
    const pc = sb.parseContext();
    expect(pc.rel_divisor).toBe(999);
    const call = (x: number, y: number) =>
      `<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [${x}, ${y}]}}</tool_call>`;
    // 1000 is off a 0..999 grid: the parser says so (a parse failure the model is told about) ...
    const off = parseModelOutput('qwen3vl', call(1000, 500), pc);
    expect(off.ok).toBe(false);
    expect(!off.ok && off.error).toMatch(/outside the 0\.\.999 grid/);
    // ... and the executor agrees.
    const r0 = await sb.step([{ action: 'click', x: 1000, y: 500 }]);
    expect(r0.observation.last_action_error?.code).toBe('invalid_coordinates');
    // 999 is the last pixel for both.
    const on = parseModelOutput('qwen3vl', call(999, 999), pc);
    expect(on.ok).toBe(true);
    const r = await sb.step(on.ok ? on.actions : []);
    expect(r.observation.last_action_error).toBeNull();
    expect(r.actions[0].css).toEqual({ x: 1279.5, y: 999.5 });
    await sb.close();
  });
});

describe('pointer position', () => {
  it('a bare left_click in the turn after mouse_move clicks where the pointer is (Anthropic reference loop)', async () => {
    const sb = await te.create({ start_url: fx.url('/corner'), network: net(), viewport: { width: 1280, height: 800 }, resize: { mode: 'max_side', max_side: 1024 } });
    await sb.observe();
    const use = (input: object) => JSON.stringify([{ type: 'tool_use', id: 'toolu_1', name: 'computer', input }]);
    const move = parseModelOutput('anthropic', use({ action: 'mouse_move', coordinate: [512, 320] }), sb.parseContext());
    await sb.step(move.ok ? move.actions : []);
    const click = parseModelOutput('anthropic', use({ action: 'left_click' }), sb.parseContext());
    expect(click.ok).toBe(true);
    const r = await sb.step(click.ok ? click.actions : []);
    expect(r.observation.last_action_error).toBeNull();
    // 512, 320 on the 1024x640 screenshot is CSS 640, 400.
    expect(r.observation.title).toBe('at 640,400');
    await sb.close();
  });
});
