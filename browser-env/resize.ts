// Screenshot resizing: `max_side` and the Qwen2-VL-style smart resize. Size maths is pure; pixels via sharp.
import type { Sharp } from 'sharp';
import type { ResizeOptions } from '../protocol/sandbox.ts';
import type { ImageFormat } from '../protocol/observation.ts';
import type { Size } from './coords.ts';

/**
 * Qwen2-VL smart resize rule (as described in the Qwen2-VL/Qwen2.5-VL papers and model cards):
 * round each side to the nearest multiple of `factor`, then, if the pixel count leaves
 * [minPixels, maxPixels], rescale both sides by the same ratio (floor when shrinking, ceil when
 * growing) so the aspect ratio is kept as closely as the grid allows.
 */
export function smartResize(width: number, height: number, factor: number, minPixels: number, maxPixels: number): Size {
  if (width <= 0 || height <= 0) throw new RangeError('smartResize: sizes must be positive');
  if (Math.max(width, height) / Math.min(width, height) > 200) {
    throw new RangeError('smartResize: aspect ratio above 200 is not supported');
  }
  let w = Math.max(factor, Math.round(width / factor) * factor);
  let h = Math.max(factor, Math.round(height / factor) * factor);
  if (w * h > maxPixels) {
    const beta = Math.sqrt((width * height) / maxPixels);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
  } else if (w * h < minPixels) {
    const beta = Math.sqrt(minPixels / (width * height));
    w = Math.ceil((width * beta) / factor) * factor;
    h = Math.ceil((height * beta) / factor) * factor;
  }
  return { width: w, height: h };
}

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

export const MIME: Record<ImageFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

export async function encode(img: Sharp, format: ImageFormat, quality: number): Promise<Buffer> {
  if (format === 'jpeg') return img.jpeg({ quality }).toBuffer();
  if (format === 'webp') return img.webp({ quality }).toBuffer();
  return img.png().toBuffer();
}
