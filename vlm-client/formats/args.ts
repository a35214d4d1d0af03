// Tool-call argument readers (a wrong type is a structured failure, never coerced silently) and point checks for the
// two coordinate spaces formats write (the rel1000 grid with its divisor, screenshot pixels).
import { describe, fail } from './failure.ts';
import type { FormatOptions } from './types.ts';

export function num(args: Record<string, unknown>, key: string, ctx: string): number {
  const v = args[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${ctx}: "${key}" must be a number, got ${describe(v)}.`);
  return v;
}

export function str(args: Record<string, unknown>, key: string, ctx: string): string {
  const v = args[key];
  if (typeof v !== 'string') fail(`${ctx}: "${key}" must be a string, got ${describe(v)}.`);
  return v;
}

export function point(args: Record<string, unknown>, key: string, ctx: string): [number, number] {
  const v = args[key];
  if (!Array.isArray(v) || v.length !== 2 || !v.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    fail(`${ctx}: "${key}" must be an [x, y] pair of numbers, got ${describe(v)}.`);
  }
  return [v[0] as number, v[1] as number];
}

// Coordinates

export function divisorOf(opts?: FormatOptions): 1000 | 999 {
  return opts?.rel_divisor ?? 1000;
}

/** " <lead> WxH pixels." when the screenshot size is known (prompts of image_px formats), else ''. */
export function sizeNote(opts: FormatOptions | undefined, lead: string): string {
  return opts?.width && opts?.height ? ` ${lead} ${opts.width}x${opts.height} pixels.` : '';
}

/** Point fields for a rel1000 format, with a range check (a value above the grid is a model error). */
export function relPoint(x: number, y: number, ctx: string, opts?: FormatOptions) {
  const d = divisorOf(opts);
  if (x < 0 || y < 0 || x > d || y > d) fail(`${ctx}: coordinate (${x}, ${y}) is outside the 0..${d} grid.`);
  return d === 1000 ? { x, y, space: 'rel1000' as const } : { x, y, space: 'rel1000' as const, rel_divisor: 999 as const };
}

/** Point fields for an image-pixel format; checked against the image size when it is known. */
export function pxPoint(x: number, y: number, ctx: string, opts?: FormatOptions) {
  if (x < 0 || y < 0) fail(`${ctx}: coordinate (${x}, ${y}) is negative.`);
  if (opts?.width !== undefined && opts?.height !== undefined && (x > opts.width || y > opts.height)) {
    fail(`${ctx}: coordinate (${x}, ${y}) is outside the ${opts.width}x${opts.height} screenshot.`);
  }
  return { x, y, space: 'image_px' as const };
}
