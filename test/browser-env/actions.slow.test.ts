// Every canonical action against real Chromium and local fixture pages.
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Action } from '../../protocol/action.ts';
import { toSpace } from '../../browser-env/coords.ts';
import { targetSize } from '../../browser-env/resize.ts';
import type { ResizeOptions } from '../../protocol/sandbox.ts';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

// A full-viewport grid of cells; each cell reports the last pointer event on it through document.title.
const GRID = html(
  `<div id="g"></div><script>
  const R = 5, C = 8, g = document.getElementById('g');
  g.style.cssText = 'position:fixed;inset:0;display:grid;grid-template-columns:repeat(' + C + ',1fr);grid-template-rows:repeat(' + R + ',1fr)';
  for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) {
    const b = document.createElement('button');
    b.id = 'r' + r + 'c' + c; b.textContent = b.id; b.style.cssText = 'margin:0;border:1px solid #888';
    const mods = (e) => ['altKey','ctrlKey','metaKey','shiftKey'].filter((k) => e[k]).map((k) => k.slice(0, -3)).join('+');
    b.addEventListener('click', (e) => { document.title = 'click:' + b.id + ':' + e.detail + ':' + mods(e); });
    b.addEventListener('dblclick', () => { document.title = 'dblclick:' + b.id; });
    b.addEventListener('contextmenu', (e) => { e.preventDefault(); document.title = 'contextmenu:' + b.id; });
    b.addEventListener('auxclick', (e) => { if (e.button === 1) document.title = 'middle:' + b.id; });
    b.addEventListener('mouseenter', () => { if (!document.title.startsWith('click')) document.title = 'hover:' + b.id; });
    g.appendChild(b);
  }
  </script>`,
  '<style>body{margin:0}</style>',
);

const FORM = html(`
  <form id="f" onsubmit="event.preventDefault(); document.title = 'submitted:' + document.getElementById('q').value">
    <input id="q" value="old text" style="width:300px;height:30px;position:absolute;left:20px;top:20px">
    <textarea id="t" style="position:absolute;left:20px;top:80px;width:300px;height:80px"></textarea>
    <div id="nope" style="position:absolute;left:400px;top:20px;width:200px;height:50px">not editable</div>
  </form>
  <script>
    document.addEventListener('keydown', (e) => {
      if (e.target.id === 'q' || ['Control', 'Shift', 'Alt', 'Meta'].includes(e.key)) return;
      const m = [['ctrlKey', 'Control'], ['shiftKey', 'Shift']].filter(([k]) => e[k]).map(([, n]) => n);
      window.keys = (window.keys || []).concat([m.concat(e.key).join('+')]);
      document.title = 'keys:' + window.keys.join(',');
    });
  </script>`);

const SCROLL = html(
  `<div style="height:6000px;width:4000px;background:linear-gradient(#fff,#000)">tall</div>
   <script>addEventListener('scroll', () => { document.title = 'scroll:' + Math.round(scrollX) + ',' + Math.round(scrollY); });</script>`,
  '<style>body{margin:0}</style>',
);

const DRAG = html(
  `<div id="pad" style="position:fixed;inset:0"></div><script>
  let down = null, moves = 0;
  pad.addEventListener('mousedown', (e) => { down = [e.clientX, e.clientY]; moves = 0; });
  pad.addEventListener('mousemove', () => { if (down) moves++; });
  pad.addEventListener('mouseup', (e) => { document.title = 'drag:' + down.join(',') + '->' + e.clientX + ',' + e.clientY + ':' + (moves >= 10 ? 'many' : moves); down = null; });
  </script>`,
  '<style>body{margin:0}</style>',
);

const TABS = html(`
  <a id="blank" href="/page2" target="_blank" style="display:block;position:absolute;left:10px;top:10px;width:200px;height:40px">open blank</a>
  <button id="close" onclick="window.close()" style="position:absolute;left:10px;top:100px;width:200px;height:40px">close me</button>`);
const PAGE2 = html('<h1>page two</h1>', '<script>document.title = "page two"</script>');

const DIALOGS = html(`
  <button style="position:absolute;left:10px;top:10px;width:200px;height:40px"
    onclick="alert('hello'); const c = confirm('sure?'); const p = prompt('name?', 'dflt'); document.title = 'dialogs:' + c + ':' + p">go</button>`);

const DOWNLOAD = html(`<a href="/file.txt" download style="position:absolute;left:10px;top:10px;width:200px;height:40px;display:block">get</a>`);

const SOM = html(
  `<a href="/page2" style="position:absolute;left:10px;top:10px;width:120px;height:30px;display:block">A link</a>
   <button id="b1" style="position:absolute;left:10px;top:60px;width:120px;height:30px" onclick="document.title='b1 clicked'">Button one</button>
   <input id="name" placeholder="Your name" style="position:absolute;left:10px;top:110px;width:200px;height:30px" oninput="document.title='name:' + this.value">
   <button id="covered" style="position:absolute;left:300px;top:10px;width:120px;height:30px">Covered</button>
   <div style="position:absolute;left:290px;top:0;width:200px;height:60px;background:#eee"></div>
   <button style="position:absolute;left:10px;top:3000px">Far below</button>
   <button style="display:none">Hidden</button>
   <a href="/x" style="position:absolute;left:10px;top:200px;display:block;width:200px;height:40px"><span role="button" id="inner" style="display:block;width:180px;height:30px">Inner</span></a>
   <div style="position:absolute;left:10px;top:300px;width:100px;height:30px">plain text</div>`,
  '<style>body{margin:0}</style>',
);

const MANY = html(Array.from({ length: 1500 }, (_, i) => `<button>button number ${i}</button>`).join(''));

let fx: Fixture;
let te: TestEnv;
const net = () => ({ allow: [`127.0.0.1:${fx.port}`] });

beforeAll(async () => {
  fx = await startFixture({
    '/grid': GRID,
    '/form': FORM,
    '/scroll': SCROLL,
    '/drag': DRAG,
    '/tabs': TABS,
    '/page2': PAGE2,
    '/dialogs': DIALOGS,
    '/download': DOWNLOAD,
    '/som': SOM,
    '/many': MANY,
    '/file.txt': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="report.txt"' });
      res.end('grove download body\n');
    },
  });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

describe('coordinate spaces hit the right element', () => {
  const cases: { viewport: { width: number; height: number }; resize?: ResizeOptions }[] = [
    { viewport: { width: 1280, height: 1000 } },
    { viewport: { width: 1280, height: 1000 }, resize: { mode: 'smart', factor: 28, min_pixels: 56 * 56, max_pixels: 1280 * 28 * 28 } },
    { viewport: { width: 800, height: 600 }, resize: { mode: 'max_side', max_side: 512 } },
    { viewport: { width: 1366, height: 768 }, resize: { mode: 'smart', factor: 32, min_pixels: 64 * 32 * 32, max_pixels: 500 * 32 * 32 } },
  ];
  for (const c of cases) {
    it(`viewport ${c.viewport.width}x${c.viewport.height} resize ${c.resize?.mode ?? 'none'}`, async () => {
      const sb = await te.create({ viewport: c.viewport, resize: c.resize, start_url: fx.url('/grid'), network: net() });
      const obs = await sb.observe();
      const image = targetSize(c.viewport, c.resize);
      expect(obs.screenshot).toMatchObject({ width: image.width, height: image.height, mime: 'image/jpeg' });
      const meta = await sharp(Buffer.from(obs.screenshot!.base64!, 'base64')).metadata();
      expect([meta.width, meta.height]).toEqual([image.width, image.height]);
      const png = await sb.screenshot();
      expect([png.mime, png.width, png.height]).toEqual(['image/jpeg', image.width, image.height]);
      const ctx = { viewport: c.viewport, image, defaultSpace: 'css_px' as const, defaultDivisor: 1000 as const };
      const cellW = c.viewport.width / 8;
      const cellH = c.viewport.height / 5;
      const targets = [
        [0, 0],
        [2, 5],
        [4, 7],
        [3, 1],
      ] as const;
      for (const space of ['css_px', 'image_px', 'rel1000'] as const) {
        for (const [r, col] of targets) {
          const css = { x: (col + 0.5) * cellW, y: (r + 0.5) * cellH };
          const divisor = space === 'rel1000' && r === 3 ? 999 : undefined;
          const p = toSpace(css, space, ctx, divisor);
          const res = await sb.step([{ action: 'click', x: Math.round(p.x), y: Math.round(p.y), space, rel_divisor: divisor }], { screenshot: 'none' });
          expect(res.observation.last_action_error).toBeNull();
          expect(res.observation.title).toBe(`click:r${r}c${col}:1:`);
          expect(res.actions[0]).toMatchObject({ space, raw: { x: Math.round(p.x), y: Math.round(p.y) } });
          expect(Math.abs(res.actions[0].css!.x - css.x)).toBeLessThan(3);
        }
      }
      const bad = await sb.step([{ action: 'click', x: 1001, y: 10, space: 'rel1000' }, { action: 'click', x: 10, y: 10 }]);
      expect(bad.observation.last_action_error?.code).toBe('invalid_coordinates');
      expect(bad.actions).toHaveLength(1);
      await sb.close();
    });
  }
});

describe('screenshot formats', () => {
  it('returns png and webp (resized) as configured', async () => {
    const png = await te.create({ start_url: fx.url('/grid'), network: net(), screenshot_format: 'png' });
    const o1 = await png.observe();
    expect(o1.screenshot).toMatchObject({ mime: 'image/png', width: 1280, height: 1000, scale: 1 });
    expect((await sharp(Buffer.from(o1.screenshot!.base64!, 'base64')).metadata()).format).toBe('png');
    const webp = await te.create({
      start_url: fx.url('/grid'),
      network: net(),
      screenshot_format: 'webp',
      screenshot_quality: 50,
      resize: { mode: 'max_side', max_side: 640 },
    });
    const o2 = await webp.observe();
    expect(o2.screenshot).toMatchObject({ mime: 'image/webp', width: 640, height: 500, scale: 0.5 });
    const meta = await sharp(Buffer.from(o2.screenshot!.base64!, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 640, 500]);
    expect(o2.timings.encode).toBeGreaterThan(0);
    const none = await webp.observe({ screenshot: 'none' });
    expect(none.screenshot).toBeUndefined();
    await Promise.all([png.close(), webp.close()]);
  });
});

describe('pointer, keyboard and scroll actions', () => {
  it('click variants, hover and drag', async () => {
    const sb = await te.create({ start_url: fx.url('/grid'), network: net(), coordinate_space: 'css_px' });
    const cell = (r: number, c: number) => ({ x: (c + 0.5) * 160, y: (r + 0.5) * 200 });
    const title = async (a: Action) => (await sb.step([a], { screenshot: 'none' })).observation.title;
    expect(await title({ action: 'hover', ...cell(1, 1) })).toBe('hover:r1c1');
    expect(await title({ action: 'double_click', ...cell(1, 2) })).toBe('dblclick:r1c2');
    expect(await title({ action: 'triple_click', ...cell(1, 3) })).toBe('click:r1c3:3:');
    expect(await title({ action: 'right_click', ...cell(2, 2) })).toBe('contextmenu:r2c2');
    expect(await title({ action: 'click', ...cell(2, 3), button: 'right' })).toBe('contextmenu:r2c3');
    expect(await title({ action: 'click', ...cell(2, 4), button: 'middle' })).toBe('middle:r2c4');
    expect(await title({ action: 'click', ...cell(3, 4), modifiers: ['Shift', 'Alt'] })).toBe('click:r3c4:1:alt+shift');
    await sb.step([{ action: 'goto', url: fx.url('/drag') }]);
    const d = await sb.step([{ action: 'drag', x: 100, y: 100, to_x: 500, to_y: 300, path: [{ x: 200, y: 400 }] }], { screenshot: 'none' });
    expect(d.observation.title).toBe('drag:100,100->500,300:many');
    expect(d.actions[0].to_css).toEqual({ x: 500, y: 300 });
    await sb.close();
  });

  it('type (focus, clear, submit), key aliases and element_not_editable', async () => {
    const sb = await te.create({ start_url: fx.url('/form'), network: net() });
    let r = await sb.step([{ action: 'type', x: 100, y: 35, text: 'new text', clear: true, submit: true }], { screenshot: 'none' });
    expect(r.observation.title).toBe('submitted:new text');
    r = await sb.step([{ action: 'type', x: 100, y: 35, text: ' more' }, { action: 'key', keys: 'return' }], { screenshot: 'none' });
    expect(r.observation.title).toBe('submitted:new text more');
    r = await sb.step([{ action: 'type', x: 500, y: 40, text: 'x' }], { screenshot: 'none' });
    expect(r.observation.last_action_error?.code).toBe('element_not_editable');
    // Keys into the textarea: aliases, combos and sequences.
    r = await sb.step(
      [
        { action: 'click', x: 100, y: 120 },
        { action: 'key', keys: ['esc', 'ctrl+a', 'pgdn', 'space'] },
        // Last: Shift+Tab moves the focus out of the textarea.
        { action: 'key', keys: 'shift+Tab' },
      ],
      { screenshot: 'none' },
    );
    expect(r.observation.last_action_error).toBeNull();
    expect(r.observation.title).toBe('keys:Escape,Control+a,PageDown, ,Shift+Tab');
    r = await sb.step([{ action: 'key', keys: 'NoSuchKeyName' }], { screenshot: 'none' });
    expect(r.observation.last_action_error?.code).toBe('action_failed');
    await sb.close();
  });

  it('scroll by delta, by direction, in notches and px', async () => {
    const sb = await te.create({ start_url: fx.url('/scroll'), network: net() });
    let r = await sb.step([{ action: 'scroll', dy: 300 }], { screenshot: 'none' });
    expect(r.observation.title).toBe('scroll:0,300');
    r = await sb.step([{ action: 'scroll', x: 640, y: 500, direction: 'down', amount: 2 }], { screenshot: 'none' });
    expect(r.observation.title).toBe('scroll:0,500');
    r = await sb.step([{ action: 'scroll', direction: 'right', amount: 150, unit: 'px' }], { screenshot: 'none' });
    expect(r.observation.title).toBe('scroll:150,500');
    r = await sb.step([{ action: 'scroll', direction: 'up', amount: 1 }], { screenshot: 'none' });
    expect(r.observation.title).toBe('scroll:150,400');
    r = await sb.step([{ action: 'scroll' }], { screenshot: 'none' });
    expect(r.observation.last_action_error?.code).toBe('action_failed');
    await sb.close();
  });
});

describe('navigation, tabs, wait and terminal actions', () => {
  it('goto/back/forward/reload, tabs and popups', async () => {
    const sb = await te.create({ start_url: fx.url('/tabs'), network: net() });
    let r = await sb.step([{ action: 'goto', url: `127.0.0.1:${fx.port}/page2` }]);
    expect(r.observation.url).toBe(fx.url('/page2'));
    expect(r.observation.title).toBe('page two');
    // The first observation also reports the start URL's navigation.
    expect(r.observation.events).toEqual([
      { type: 'navigation', url: fx.url('/tabs') },
      { type: 'navigation', url: fx.url('/page2') },
    ]);
    r = await sb.step([{ action: 'reload' }]);
    expect(r.observation.events).toEqual([{ type: 'navigation', url: fx.url('/page2') }]);
    r = await sb.step([{ action: 'back' }]);
    expect(r.observation.url).toBe(fx.url('/tabs'));
    r = await sb.step([{ action: 'forward' }, { action: 'reload' }]);
    expect(r.observation.url).toBe(fx.url('/page2'));
    r = await sb.step([{ action: 'goto', url: fx.url('/missing') }]);
    expect(r.observation.last_action_error).toMatchObject({ code: 'http_error' });
    expect(r.observation.last_action_error?.message).toMatch(/404/);
    await sb.step([{ action: 'goto', url: fx.url('/tabs') }]);

    // target=_blank link: the popup is followed.
    r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    expect(r.observation.events).toContainEqual({ type: 'popup', url: fx.url('/page2'), tab_index: 1, switched: true });
    expect(r.observation.tabs.map((t) => [t.index, t.active, t.url])).toEqual([
      [0, false, fx.url('/tabs')],
      [1, true, fx.url('/page2')],
    ]);
    expect(r.observation.url).toBe(fx.url('/page2'));

    r = await sb.step([{ action: 'new_tab', url: fx.url('/page2') }]);
    expect(r.observation.tabs).toHaveLength(3);
    expect(r.observation.tabs[2].active).toBe(true);
    expect(r.observation.events.filter((e) => e.type === 'popup')).toEqual([]);
    r = await sb.step([{ action: 'switch_tab', index: 0 }]);
    expect(r.observation.url).toBe(fx.url('/tabs'));
    r = await sb.step([{ action: 'switch_tab', index: 7 }]);
    expect(r.observation.last_action_error?.code).toBe('no_such_tab');
    r = await sb.step([{ action: 'close_tab', index: 1 }]);
    expect(r.observation.tabs.map((t) => t.url)).toEqual([fx.url('/tabs'), fx.url('/page2')]);
    expect(r.observation.tabs[0].active).toBe(true);
    // The page closes itself (window.close on a tab it may close: the one opened by new_tab... here tab 0 was
    // opened by us, so close tab 1 through the action and then the last one).
    r = await sb.step([{ action: 'close_tab' }]);
    expect(r.observation.tabs).toHaveLength(1);
    r = await sb.step([{ action: 'close_tab' }]);
    expect(r.observation.tabs).toHaveLength(1);
    expect(r.observation.url).toBe('about:blank');

    const t0 = Date.now();
    r = await sb.step([{ action: 'wait', ms: 300 }], { screenshot: 'none' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    r = await sb.step([{ action: 'answer', text: '42' }, { action: 'click', x: 1, y: 1 }]);
    expect(r.done).toBe(true);
    expect(r.answer).toBe('42');
    expect(r.actions).toHaveLength(1);
    r = await sb.step([{ action: 'terminate', status: 'failure' }]);
    expect(r.done).toBe(true);
    expect(r.observation.step).toBe(sb.steps);
    await sb.close();
  });

  it('a page closing itself reports tab_closed', async () => {
    const sb = await te.create({ start_url: fx.url('/tabs'), network: net() });
    let r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    expect(r.observation.tabs).toHaveLength(2);
    // Make the popup (opened by script-less link, so closable by script) close itself.
    await sb.step([{ action: 'goto', url: fx.url('/tabs') }]);
    r = await sb.step([{ action: 'click', x: 100, y: 120 }]);
    expect(r.observation.events).toContainEqual({ type: 'tab_closed', tab_index: 1 });
    expect(r.observation.tabs).toHaveLength(1);
    expect(r.observation.tabs[0].active).toBe(true);
    await sb.close();
  });
});

describe('watchdogs: dialogs and downloads', () => {
  it('answers alert, confirm and prompt and reports them', async () => {
    const sb = await te.create({ start_url: fx.url('/dialogs'), network: net() });
    const r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    expect(r.observation.title).toBe('dialogs:true:dflt');
    expect(r.observation.events.filter((e) => e.type === 'dialog')).toEqual([
      { type: 'dialog', dialog_type: 'alert', message: 'hello', handled: 'accepted' },
      { type: 'dialog', dialog_type: 'confirm', message: 'sure?', handled: 'accepted' },
      { type: 'dialog', dialog_type: 'prompt', message: 'name?', handled: 'accepted', prompt_value: 'dflt' },
    ]);
    await sb.close();
  });

  it('saves downloads under the sandbox directory', async () => {
    const sb = await te.create({ start_url: fx.url('/download'), network: net() });
    const r = await sb.step([{ action: 'click', x: 100, y: 30 }]);
    const ev = r.observation.events.find((e) => e.type === 'download');
    expect(ev).toMatchObject({ type: 'download', filename: 'report.txt', size: 20, url: fx.url('/file.txt') });
    const list = sb.downloads();
    expect(list).toHaveLength(1);
    const path = sb.downloadPath(list[0].id)!;
    expect(path.startsWith(`${te.dataDir}/downloads/${sb.id}/`)).toBe(true);
    expect(await readFile(path, 'utf8')).toBe('grove download body\n');
    expect(sb.downloadPath('nope')).toBeUndefined();
    await sb.close();
  });
});

describe('Set-of-Mark and accessibility', () => {
  it('lists visible uncovered interactive elements, innermost first, and acts on labels', async () => {
    const sb = await te.create({ start_url: fx.url('/som'), network: net() });
    let r = await sb.step([{ action: 'click_label', label: 0 }]);
    expect(r.observation.last_action_error?.code).toBe('label_not_found');
    const obs = await sb.observe({ som: true, accessibility: true });
    const som = obs.som!;
    expect(som.map((e) => [e.label, e.tag, e.text])).toEqual([
      [0, 'a', 'A link'],
      [1, 'button', 'Button one'],
      [2, 'input', 'Your name'],
      [3, 'span', 'Inner'],
    ]);
    expect(som[1]).toMatchObject({ role: 'button', x: 10, y: 60, width: 120, height: 30 });
    expect(obs.accessibility).toContain('button "Button one"');
    r = await sb.step([{ action: 'click_label', label: 1 }]);
    expect(r.observation.title).toBe('b1 clicked');
    expect(r.actions[0].css).toEqual({ x: 70, y: 75 });
    r = await sb.step([{ action: 'type_label', label: 2, text: 'Ada' }]);
    expect(r.observation.title).toBe('name:Ada');
    r = await sb.step([{ action: 'type_label', label: 1, text: 'x' }]);
    expect(r.observation.last_action_error?.code).toBe('element_not_editable');
    r = await sb.step([{ action: 'click_label', label: 99 }]);
    expect(r.observation.last_action_error?.code).toBe('label_not_found');

    // Labelled screenshot: differs from the plain one around the labelled boxes only on request.
    const plain = await sb.observe({ som: true });
    const labelled = await sb.observe({ som: true, som_overlay: true });
    const a = await sharp(Buffer.from(plain.screenshot!.base64!, 'base64')).raw().toBuffer();
    const b = await sharp(Buffer.from(labelled.screenshot!.base64!, 'base64')).raw().toBuffer();
    expect(a.length).toBe(b.length);
    let diff = 0;
    for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > 40) diff++;
    expect(diff).toBeGreaterThan(500);
    await sb.close();
  });

  it('bounds the accessibility text', async () => {
    const sb = await te.create({ start_url: fx.url('/many'), network: net(), accessibility: true });
    const obs = await sb.observe();
    expect(obs.accessibility!.length).toBeLessThanOrEqual(8000);
    expect(obs.accessibility).toContain('button "button number 0"');
    expect(obs.accessibility!.endsWith('(truncated)')).toBe(true);
    await sb.close();
  });
});
