// Screenshot resizing: `max_side` and the Qwen2-VL-style smart resize. Size maths is pure; pixels via sharp.
import type { Sharp } from 'sharp';
import type { ResizeOptions } from '../protocol/sandbox.ts';
import type { ImageFormat } from '../protocol/observation.ts';
import { smartResize } from '../protocol/smart-resize.ts';
import type { Size } from './coords.ts';
import { IMAGE_MIME } from '../protocol/image.ts';

// Smart resize is computed exactly as qwen-vl-utils computes it (protocol/smart-resize.ts).
export { smartResize };

/** Longest side at most `maxSide`; never upscales. */
export function maxSideResize(width: number, height: number, maxSide: number): Size {
  const longest = Math.max(width, height);
  if (longest <= maxSide) return { width, height };
  const f = maxSide / longest;
  return { width: Math.max(1, Math.round(width * f)), height: Math.max(1, Math.round(height * f)) };
}

/** Size of the image returned to the policy for a capture of `size`. */
export function targetSize(size: Size, resize: ResizeOptions | undefined): Size {
  if (!resize) return { width: size.width, height: size.height };
  if (resize.mode === 'max_side') return maxSideResize(size.width, size.height, resize.max_side);
  return smartResize(size.width, size.height, resize.factor, resize.min_pixels, resize.max_pixels);
}

/** Size of the image returned to the policy for a viewport rendered at `scale` device px per CSS px. */
export function imageSize(viewport: Size, scale: number, resize: ResizeOptions | undefined): Size {
  return targetSize({ width: Math.round(viewport.width * scale), height: Math.round(viewport.height * scale) }, resize);
}

export const MIME: Record<ImageFormat, string> = IMAGE_MIME;

export async function encode(img: Sharp, format: ImageFormat, quality: number): Promise<Buffer> {
  if (format === 'jpeg') return img.jpeg({ quality }).toBuffer();
  if (format === 'webp') return img.webp({ quality }).toBuffer();
  return img.png().toBuffer();
}
