import { describe, expect, it } from 'vitest';
import { resolvePoint, toSpace, type CoordContext } from '../../browser-env/coords.ts';
import { maxSideResize, smartResize, targetSize } from '../../browser-env/resize.ts';
import { normalizeCombo, normalizeKeys } from '../../browser-env/keys.ts';
import { classifyNavError, classifyResponse, isRetryable, normalizeUrl } from '../../browser-env/classify.ts';
import { truncate } from '../../browser-env/a11y.ts';

const ctx = (over: Partial<CoordContext> = {}): CoordContext => ({
  viewport: { width: 1280, height: 1000 },
  image: { width: 1280, height: 1000 },
  defaultSpace: 'css_px',
  defaultDivisor: 1000,
  ...over,
});

describe('resolvePoint', () => {
  it('maps rel1000 with divisor 1000 and 999', () => {
    const r = resolvePoint({ x: 500, y: 250, space: 'rel1000' }, ctx());
    expect(r).toEqual({ ok: true, space: 'rel1000', raw: { x: 500, y: 250 }, css: { x: 640, y: 250 } });
    const r999 = resolvePoint({ x: 999, y: 0, space: 'rel1000', rel_divisor: 999 }, ctx());
    expect(r999.ok && r999.css).toEqual({ x: 1279.5, y: 0 });
    const d = resolvePoint({ x: 333, y: 333 }, ctx({ defaultSpace: 'rel1000', defaultDivisor: 999 }));
    expect(d.ok && d.css).toEqual({ x: 426.67, y: 333.33 });
  });

  it('maps image_px through the resize scale, per axis', () => {
    const image = smartResize(1280, 1000, 32, 64 * 32 * 32, 1280 * 32 * 32);
    const c = ctx({ image });
    const r = resolvePoint({ x: image.width / 2, y: image.height / 4, space: 'image_px' }, c);
    expect(r.ok && r.css).toEqual({ x: 640, y: 250 });
    const small = ctx({ image: { width: 640, height: 500 } });
    expect(resolvePoint({ x: 100, y: 50, space: 'image_px' }, small)).toMatchObject({ ok: true, css: { x: 200, y: 100 } });
  });

  it('passes css_px through and rejects out-of-range points', () => {
    expect(resolvePoint({ x: 10.5, y: 20 }, ctx())).toMatchObject({ ok: true, space: 'css_px', css: { x: 10.5, y: 20 } });
    expect(resolvePoint({ x: 1281, y: 20 }, ctx()).ok).toBe(false);
    expect(resolvePoint({ x: -1, y: 20, space: 'rel1000' }, ctx()).ok).toBe(false);
    expect(resolvePoint({ x: 1001, y: 20, space: 'rel1000' }, ctx()).ok).toBe(false);
    expect(resolvePoint({ x: 1000, y: 20, space: 'rel1000', rel_divisor: 999 }, ctx()).ok).toBe(false);
    expect(resolvePoint({ x: 641, y: 20, space: 'image_px' }, ctx({ image: { width: 640, height: 500 } })).ok).toBe(false);
    const bad = resolvePoint({ x: 2000, y: 5 }, ctx());
    expect(!bad.ok && bad.message).toMatch(/outside the css_px range 0\.\.1280 x 0\.\.1000/);
  });

  it('round-trips through toSpace', () => {
    const c = ctx({ image: { width: 896, height: 700 } });
    for (const space of ['rel1000', 'image_px', 'css_px'] as const) {
      const p = toSpace({ x: 321, y: 654 }, space, c);
      const r = resolvePoint({ ...p, space }, c);
      expect(r.ok && r.css).toEqual({ x: 321, y: 654 });
    }
  });
});

describe('resize', () => {
  it('smart resize keeps multiples of factor and the pixel budget', () => {
    expect(smartResize(1280, 1000, 32, 64 * 32 * 32, 1280 * 32 * 32)).toEqual({ width: 1280, height: 992 });
    // Large screens shrink under max_pixels, aspect preserved within one grid cell.
    const big = smartResize(3840, 2160, 28, 56 * 56, 1280 * 28 * 28);
    expect(big.width % 28).toBe(0);
    expect(big.height % 28).toBe(0);
    expect(big.width * big.height).toBeLessThanOrEqual(1280 * 28 * 28);
    expect(Math.abs(big.width / big.height - 3840 / 2160)).toBeLessThan(0.05);
    expect(big).toEqual({ width: 1316, height: 728 });
    // Tiny images grow above min_pixels.
    const tiny = smartResize(100, 80, 28, 56 * 56 * 4, 1280 * 28 * 28);
    expect(tiny.width * tiny.height).toBeGreaterThanOrEqual(56 * 56 * 4);
    expect(tiny).toEqual({ width: 140, height: 112 });
    expect(() => smartResize(10, 5000, 28, 1, 1e9)).toThrow(/aspect/);
  });

  // Expected sizes computed with qwen-vl-utils' published smart_resize (Python: round() takes halves to even).
  it.each([
    // [width, height, factor, min_pixels, max_pixels, expected width, expected height]
    [1280, 720, 32, 64 * 32 * 32, 1280 * 32 * 32, 1280, 704], // 720/32 = 22.5 → 22 (JS Math.round: 23 → 736)
    [1280, 1000, 32, 64 * 32 * 32, 1280 * 32 * 32, 1280, 992],
    [1280, 800, 32, 64 * 32 * 32, 1280 * 32 * 32, 1280, 800],
    [1920, 1080, 32, 64 * 32 * 32, 1280 * 32 * 32, 1504, 832],
    [1366, 768, 32, 64 * 32 * 32, 1280 * 32 * 32, 1376, 768],
    [1440, 900, 32, 64 * 32 * 32, 1280 * 32 * 32, 1440, 896],
    [1024, 768, 28, 56 * 56, 1280 * 28 * 28, 1036, 756],
    [1280, 720, 28, 56 * 56, 1280 * 28 * 28, 1288, 728],
    [1920, 1080, 28, 56 * 56, 1280 * 28 * 28, 1316, 728],
    [3840, 2160, 28, 56 * 56, 1280 * 28 * 28, 1316, 728],
    [100, 80, 28, 56 * 56 * 4, 1280 * 28 * 28, 140, 112],
    [800, 600, 32, 64 * 32 * 32, 16384 * 32 * 32, 800, 608],
    [1280, 720, 32, 4 * 32 * 32, 16384 * 32 * 32, 1280, 704],
    [1000, 1000, 28, 4 * 28 * 28, 16384 * 28 * 28, 1008, 1008],
    [1470, 956, 32, 4 * 32 * 32, 16384 * 32 * 32, 1472, 960],
    [1296, 720, 32, 1, 1e9, 1280, 704], // 1296/32 = 40.5 → 40
    [1328, 816, 32, 1, 1e9, 1344, 832], // 1328/32 = 41.5 → 42, 816/32 = 25.5 → 26
    [1360, 1000, 16, 1, 1e9, 1360, 992], // 1000/16 = 62.5 → 62
    [1302, 742, 28, 1, 1e9, 1288, 728], // 46.5 → 46, 26.5 → 26
  ])('smart resize %ix%i factor %i matches qwen-vl-utils', (w, h, f, min, max, ew, eh) => {
    expect(smartResize(w, h, f, min, max)).toEqual({ width: ew, height: eh });
  });

  it('max_side never upscales', () => {
    expect(maxSideResize(1280, 1000, 640)).toEqual({ width: 640, height: 500 });
    expect(maxSideResize(800, 600, 1024)).toEqual({ width: 800, height: 600 });
    expect(targetSize({ width: 1000, height: 1280 }, { mode: 'max_side', max_side: 512 })).toEqual({ width: 400, height: 512 });
    expect(targetSize({ width: 1000, height: 1280 }, undefined)).toEqual({ width: 1000, height: 1280 });
  });
});

describe('keys', () => {
  it('normalises aliases and combos', () => {
    expect(normalizeCombo('ctrl+a')).toBe('Control+a');
    expect(normalizeCombo('CMD+Shift+T')).toBe('Meta+Shift+T');
    expect(normalizeCombo('esc')).toBe('Escape');
    expect(normalizeCombo('Return')).toBe('Enter');
    expect(normalizeCombo('pgdn')).toBe('PageDown');
    expect(normalizeCombo('Page_Down')).toBe('PageDown');
    expect(normalizeCombo('del')).toBe('Delete');
    expect(normalizeCombo('space')).toBe('Space');
    expect(normalizeCombo('BackSpace')).toBe('Backspace');
    expect(normalizeCombo('alt + left')).toBe('Alt+ArrowLeft');
    expect(normalizeCombo('f5')).toBe('F5');
    expect(normalizeCombo('Control++')).toBe('Control++');
    expect(normalizeCombo('+')).toBe('+');
    expect(normalizeKeys(['ctrl+c', 'tab', 'Enter'])).toEqual(['Control+c', 'Tab', 'Enter']);
  });
});

describe('navigation error classification', () => {
  it('maps net::ERR_* codes', () => {
    expect(classifyNavError('page.goto: net::ERR_NAME_NOT_RESOLVED at http://x')).toBe('dns_error');
    expect(classifyNavError('net::ERR_CONNECTION_REFUSED')).toBe('connection_refused');
    expect(classifyNavError('net::ERR_CONNECTION_RESET')).toBe('connection_reset');
    expect(classifyNavError('net::ERR_EMPTY_RESPONSE')).toBe('connection_reset');
    expect(classifyNavError('net::ERR_CERT_AUTHORITY_INVALID')).toBe('tls_error');
    expect(classifyNavError('net::ERR_SSL_PROTOCOL_ERROR')).toBe('tls_error');
    expect(classifyNavError('net::ERR_TIMED_OUT')).toBe('timeout');
    expect(classifyNavError('page.goto: Timeout 3000ms exceeded.')).toBe('timeout');
    expect(classifyNavError('net::ERR_TUNNEL_CONNECTION_FAILED')).toBe('navigation_failed');
  });

  it('maps responses and gate headers', () => {
    expect(classifyResponse(200, {}, 'u')).toBeNull();
    expect(classifyResponse(404, {}, 'u')).toEqual({ code: 'http_error', message: 'HTTP 404 for u' });
    expect(classifyResponse(403, { 'x-grove-blocked': 'private address' }, 'u')?.code).toBe('network_blocked');
    expect(classifyResponse(502, { 'x-grove-error': 'dns_error' }, 'u')?.code).toBe('dns_error');
    expect(classifyResponse(502, { 'x-grove-error': 'bogus' }, 'u')?.code).toBe('http_error');
    expect(isRetryable({ code: 'http_error', message: 'HTTP 503 for u' })).toBe(true);
    expect(isRetryable({ code: 'http_error', message: 'HTTP 404 for u' })).toBe(false);
    expect(isRetryable({ code: 'network_blocked', message: '' })).toBe(false);
  });

  it('adds a scheme to bare hosts', () => {
    expect(normalizeUrl('example.com/a')).toBe('https://example.com/a');
    expect(normalizeUrl('127.0.0.1:8080/x')).toBe('http://127.0.0.1:8080/x');
    expect(normalizeUrl('localhost:3000')).toBe('http://localhost:3000');
    expect(normalizeUrl('http://a.b')).toBe('http://a.b');
    expect(normalizeUrl('about:blank')).toBe('about:blank');
  });
});

describe('a11y truncate', () => {
  it('cuts on a line boundary with a marker', () => {
    const text = Array.from({ length: 100 }, (_, i) => `- button "b${i}"`).join('\n');
    const t = truncate(text, 200);
    expect(t.length).toBeLessThanOrEqual(200);
    expect(t.endsWith('… (truncated)')).toBe(true);
    expect(truncate('short', 200)).toBe('short');
  });
});
