// Coordinate spaces → CSS pixels of the viewport. Pure: unit-tested without a browser.
import type { CoordinateSpace } from '../protocol/action.ts';

export interface Size {
  width: number;
  height: number;
}

/** What a resolver needs: the viewport and the size of the screenshot as returned to the policy. */
export interface CoordContext {
  viewport: Size;
  /** Screenshot size after resize (equal to the viewport when not resized). */
  image: Size;
  defaultSpace: CoordinateSpace;
  defaultDivisor: 1000 | 999;
}

export interface PointInput {
  x: number;
  y: number;
  space?: CoordinateSpace;
  rel_divisor?: 1000 | 999;
}

export type ResolveResult =
  | { ok: true; space: CoordinateSpace; raw: { x: number; y: number }; css: { x: number; y: number } }
  | { ok: false; space: CoordinateSpace; raw: { x: number; y: number }; message: string };

/** Rounds to 1/100 px so recorded coordinates stay readable. */
const r2 = (v: number) => Math.round(v * 100) / 100;

/**
 * Maps a point in `space` to viewport CSS px. Values on the far edge (v == extent) are accepted and
 * pulled just inside the viewport, since "1000" on a 0..1000 grid means the last pixel, not beyond it.
 */
export function resolvePoint(p: PointInput, ctx: CoordContext): ResolveResult {
  const space = p.space ?? ctx.defaultSpace;
  const raw = { x: p.x, y: p.y };
  let extentX: number;
  let extentY: number;
  let fx: number;
  let fy: number;
  switch (space) {
    case 'rel1000': {
      const d = p.rel_divisor ?? ctx.defaultDivisor;
      extentX = d;
      extentY = d;
      fx = ctx.viewport.width / d;
      fy = ctx.viewport.height / d;
      break;
    }
    case 'image_px':
      extentX = ctx.image.width;
      extentY = ctx.image.height;
      fx = ctx.viewport.width / ctx.image.width;
      fy = ctx.viewport.height / ctx.image.height;
      break;
    case 'css_px':
      extentX = ctx.viewport.width;
      extentY = ctx.viewport.height;
      fx = 1;
      fy = 1;
      break;
  }
  if (!Number.isFinite(p.x) || !Number.isFinite(p.y) || p.x < 0 || p.y < 0 || p.x > extentX || p.y > extentY) {
    return {
      ok: false,
      space,
      raw,
      message: `(${p.x}, ${p.y}) is outside the ${space} range 0..${extentX} x 0..${extentY}`,
    };
  }
  const cx = Math.min(p.x * fx, ctx.viewport.width - 0.5);
  const cy = Math.min(p.y * fy, ctx.viewport.height - 0.5);
  return { ok: true, space, raw, css: { x: r2(cx), y: r2(cy) } };
}

/** Maps a CSS-px point back into `space` (used by tests and by format printers). */
export function toSpace(css: { x: number; y: number }, space: CoordinateSpace, ctx: CoordContext, divisor?: 1000 | 999) {
  switch (space) {
    case 'rel1000': {
      const d = divisor ?? ctx.defaultDivisor;
      return { x: (css.x / ctx.viewport.width) * d, y: (css.y / ctx.viewport.height) * d };
    }
    case 'image_px':
      return { x: (css.x * ctx.image.width) / ctx.viewport.width, y: (css.y * ctx.image.height) / ctx.viewport.height };
    case 'css_px':
      return { x: css.x, y: css.y };
  }
}
