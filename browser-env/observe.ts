// Screenshot capture through CDP `Page.captureScreenshot` (never page.screenshot: it waits for web fonts
// and can hang while the main resource loads), then an optional sharp resize / SoM overlay.
import { Progress } from '../sandbox/progress.ts';
import sharp from 'sharp';
import type { CDPSession } from 'playwright-core';
import type { ImageFormat, SomElement } from '../protocol/observation.ts';
import type { ResizeOptions } from '../protocol/sandbox.ts';
import type { Size } from './coords.ts';
import { encode, imageSize, MIME } from './resize.ts';
import { somOverlaySvg } from './som.ts';
import { onFreshStack } from './util.ts';

export interface RawCapture {
  /** Decoded from `base64` on first use. */
  bytes: Buffer;
  /** Chromium's base64 of `bytes`. */
  base64: string;
  format: ImageFormat;
  ms: number;
}

/** One CDP capture of the viewport, bounded by `timeoutMs` (a hung renderer never answers). */
export async function cdpCapture(cdp: CDPSession, format: ImageFormat, quality: number, timeoutMs: number): Promise<RawCapture> {
  return Progress.after(timeoutMs, 'screenshot capture').race(sendCapture(cdp, format, quality));
}

/** One CDP capture of the viewport, unbounded: the caller bounds it (cdpCapture, or the capture gate's turn). */
export async function sendCapture(cdp: CDPSession, format: ImageFormat, quality: number): Promise<RawCapture> {
  const t0 = Date.now();
  const params: { format: ImageFormat; quality?: number; captureBeyondViewport: boolean; optimizeForSpeed: boolean } = {
    format,
    captureBeyondViewport: false,
    optimizeForSpeed: true,
  };
  if (format !== 'png') params.quality = quality;
  // On a fresh stack: Playwright's per-call stack capture walks 2 frames, not the step's chain (util.ts).
  const res = await onFreshStack(() => cdp.send('Page.captureScreenshot', params));
  return withLazyBytes({ base64: res.data, format, ms: Date.now() - t0 });
}

/**
 * `o` with `bytes` decoded from its base64 on first use: the JSON step answer sends the base64 as it came from
 * Chromium, so most steps never need the ~100 KB decoded copy (one large allocation less per step for the GC).
 */
function withLazyBytes<T extends { base64: string }>(o: T): T & { bytes: Buffer } {
  let bytes: Buffer | undefined;
  return Object.defineProperty(o, 'bytes', {
    enumerable: true,
    get: () => (bytes ??= Buffer.from(o.base64, 'base64')),
  }) as T & { bytes: Buffer };
}

export interface EncodedShot {
  bytes: Buffer;
  /** The bytes as base64 when Chromium's own encoding is passed through (saves re-encoding on the step path). */
  base64?: string;
  mime: string;
  width: number;
  height: number;
  /** image px per CSS px, horizontally and vertically (smart resize scales the axes differently). */
  scale_x: number;
  scale_y: number;
  ms: number;
}

export interface ShotSettings {
  viewport: Size;
  /** Device px per CSS px (1 when absent): Chromium's capture is `viewport × scale` px. */
  scale?: number;
  format: ImageFormat;
  quality: number;
  resize?: ResizeOptions;
}

/** Format to ask Chromium for: the final one when no post-processing is needed, else a near-lossless JPEG. */
export function captureFormat(s: ShotSettings, labelled: boolean): { format: ImageFormat; quality: number } {
  if (!s.resize && !labelled) return { format: s.format, quality: s.quality };
  return { format: 'jpeg', quality: 95 };
}

/** Resizes / labels a capture when configured; otherwise returns it untouched. */
export async function finishShot(raw: RawCapture, s: ShotSettings, som?: SomElement[]): Promise<EncodedShot> {
  const t0 = Date.now();
  const captured = imageSize(s.viewport, s.scale ?? 1, undefined);
  const to = imageSize(s.viewport, s.scale ?? 1, s.resize);
  const sx = to.width / s.viewport.width;
  const sy = to.height / s.viewport.height;
  if (!s.resize && !som && raw.format === s.format) {
    return withLazyBytes({ base64: raw.base64, mime: MIME[s.format], width: to.width, height: to.height, scale_x: sx, scale_y: sy, ms: 0 });
  }
  let img = sharp(raw.bytes);
  if (to.width !== captured.width || to.height !== captured.height) {
    img = img.resize(to.width, to.height, { fit: 'fill' });
  }
  if (som) {
    // Composite is applied after resize only when the resize is materialised first.
    const base = await img.png({ compressionLevel: 0 }).toBuffer();
    img = sharp(base).composite([{ input: somOverlaySvg(som, to.width, to.height, sx, sy), top: 0, left: 0 }]);
  }
  const bytes = await encode(img, s.format, s.quality);
  return { bytes, mime: MIME[s.format], width: to.width, height: to.height, scale_x: sx, scale_y: sy, ms: Date.now() - t0 };
}
