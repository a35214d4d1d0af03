// Visual diff between consecutive frames. Frames are downscaled before pixelmatch so a step costs a few
// milliseconds; the changed-pixel share is resolution-independent enough to flag "nothing happened".
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
import type { Action } from '../protocol/action.ts';

/** Width frames are downscaled to before diffing; height keeps the aspect ratio. */
const DIFF_WIDTH = 400;
/** Below this changed share a step is "visually unchanged" (at 400x250: fewer than ~30 pixels changed). */
export const NOOP_THRESHOLD = 0.0003;

export interface RawFrame {
  data: Buffer;
  width: number;
  height: number;
}

/** Decodes an image to small raw RGBA at a fixed width (and a height forced when given, so two frames match). */
export async function decodeSmall(bytes: Buffer, width = DIFF_WIDTH, height?: number): Promise<RawFrame> {
  const img = sharp(bytes).removeAlpha().ensureAlpha();
  const resized = height ? img.resize(width, height, { fit: 'fill' }) : img.resize({ width });
  const { data, info } = await resized.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Share (0..1) of pixels that differ between two raw frames; frames of different sizes are fully changed. */
export function changedShare(a: RawFrame, b: RawFrame): number {
  if (a.width !== b.width || a.height !== b.height) return 1;
  const n = pixelmatch(a.data, b.data, undefined, a.width, a.height, { threshold: 0.1 });
  return n / (a.width * a.height);
}

/** Actions that are expected to change what is on screen; a step made only of others is never a no-op. */
const SILENT_ACTIONS = new Set<Action['action']>(['wait', 'answer', 'terminate', 'hover']);

export function expectsVisibleChange(actions: { action: Action; error?: unknown }[]): boolean {
  return actions.some((a) => !SILENT_ACTIONS.has(a.action.action));
}

/** Full-resolution diff image (PNG) of two frames, for the viewer's diff view. */
export async function diffImage(before: Buffer, after: Buffer, maxWidth = 1280): Promise<{ png: Buffer; share: number }> {
  const meta = await sharp(after).metadata();
  const width = Math.min(maxWidth, meta.width ?? maxWidth);
  const b = await decodeSmall(after, width);
  const a = await decodeSmall(before, width, b.height);
  const out = Buffer.alloc(b.data.length);
  const n = pixelmatch(a.data, b.data, out, b.width, b.height, { threshold: 0.1, alpha: 0.25, diffColor: [255, 0, 80] });
  const png = await sharp(out, { raw: { width: b.width, height: b.height, channels: 4 } }).png().toBuffer();
  return { png, share: n / (b.width * b.height) };
}
