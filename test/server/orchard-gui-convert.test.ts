// Orchard-GUI env-server wire values: coordinates onto the orchard format's grid as web_env reads env_config,
// observations (a11ytree from SoM, bbox normalised), the sandbox for a reset.
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { Observation } from '../../protocol/observation.ts';
import { cssPoints, EnvConfig, observationOf, onGrid, sandboxFor, ResetBody } from '../../server/orchard-gui/convert.ts';

const base = { width: 1280, height: 1000, dpr: 1, max_retries: 1, wait_timeout: 5000, resize_output_coords: true, resize_scale: 1000, image_patch_size: 32 };

describe('onGrid', () => {
  it('resize_scale 1000 at dpr 1 is already the grid', () => {
    expect(onGrid({ name: 'click', args: { point_2d: [500, 250] } }, EnvConfig.parse(base)).args.point_2d).toEqual([500, 250]);
  });
  it('screen pixels (no resize) become a share of the viewport', () => {
    const c = EnvConfig.parse({ ...base, resize_output_coords: false });
    expect(onGrid({ name: 'click', args: { point_2d: [640, 250] } }, c).args.point_2d).toEqual([500, 250]);
    const d = onGrid({ name: 'drag', args: { start_point_2d: [0, 0], end_point_2d: [1280, 1000] } }, c).args;
    expect([d.start_point_2d, d.end_point_2d]).toEqual([[0, 0], [1000, 1000]]);
  });
  it('another resize_scale, and dpr 2 (css viewport half the screen) as web_env computes it', () => {
    expect(onGrid({ name: 'hover', args: { point_2d: [50, 25] } }, EnvConfig.parse({ ...base, resize_scale: 100 })).args.point_2d).toEqual([500, 250]);
    const hi = EnvConfig.parse({ ...base, resize_output_coords: false, dpr: 2 });
    expect(onGrid({ name: 'click', args: { point_2d: [640, 500] } }, hi).args.point_2d).toEqual([500, 500]);
  });
  it('leaves calls without points alone', () => {
    expect(onGrid({ name: 'write', args: { message: 'x' } }, EnvConfig.parse(base)).args).toEqual({ message: 'x' });
  });
});

describe('observationOf and sandboxFor', () => {
  it('maps SoM to a normalised a11ytree and tabs to all_tab_url', async () => {
    const obs = {
      step: 0, url: 'http://a/x', title: 'X', viewport: { width: 1280, height: 1000 }, last_action_error: null, events: [],
      timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
      tabs: [{ index: 0, url: 'http://a/x', title: 'a'.repeat(80), active: true }, { index: 1, url: 'http://b/', title: 'B', active: false }],
      screenshot: { mime: 'image/png', width: 1280, height: 1000, base64: 'iVBOR', scale: 1 },
      som: [{ label: 0, tag: 'a', text: 'next', x: 128, y: 100, width: 128, height: 50 }],
    } as unknown as Observation;
    const o = await observationOf(obs, EnvConfig.parse(base));
    expect(o.screenshot).toBe('iVBOR');
    expect(o.screen_size).toEqual([1280, 1000]);
    expect(o.a11ytree).toEqual([{ tag: 'a', textContent: 'next', bbox: [0.1, 0.1, 0.2, 0.15] }]);
    expect(o.all_tab_url[0].title).toHaveLength(50);
    expect(o.active_tab_url).toBe('http://a/x');
  });

  it('a reset opens the (first) start page at the css viewport, PNG, SoM on, its hosts allowed', () => {
    const body = ResetBody.parse({ task_id: 't1', task_data: { start_url: 'http://127.0.0.1:9000/a |AND| http://127.0.0.1:9001/b' }, env_config: { ...base, dpr: 2 } });
    const s = sandboxFor(body, 'env3');
    expect(s).toMatchObject({ viewport: { width: 640, height: 500 }, start_url: 'http://127.0.0.1:9000/a', screenshot_format: 'png', som: true,
      network: { allow: ['127.0.0.1:9000', '127.0.0.1:9001'] }, labels: { orchard_gui_env: 'env3', task: 't1' } });
  });
});

describe('dpr 2', () => {
  it('the PNG has the screen size (web_env renders at device scale dpr), the points are CSS px as web_env converts them', async () => {
    const css = await sharp({ create: { width: 640, height: 500, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
    const obs = {
      step: 0, url: 'http://a/', title: '', viewport: { width: 640, height: 500 }, last_action_error: null, events: [], tabs: [],
      timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
      screenshot: { mime: 'image/png', width: 640, height: 500, base64: css.toString('base64'), scale: 1 },
    } as unknown as Observation;
    const c = EnvConfig.parse({ ...base, dpr: 2 });
    const o = await observationOf(obs, c);
    const meta = await sharp(Buffer.from(o.screenshot, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1280, 1000]);
    expect(o.screen_size).toEqual([1280, 1000]);
    // web_env: 500 / dpr / 1000 * 1280 = 320 (the middle of the 640 CSS px page)
    expect(cssPoints({ name: 'click', args: { point_2d: [500, 400] } }, c)).toEqual({ point_2d: [320, 200] });
  });
});
