// UI-TARS-1.5's coordinate space: absolute pixels of the screenshot after Qwen2.5-VL's smart resize with UI-TARS'
// own constants (bytedance/UI-TARS codes/ui_tars/action_parser.py).
import { smartResize, type ImageSize } from '../../protocol/smart-resize.ts';
import { fail } from './failure.ts';
import type { FormatOptions } from './types.ts';

/** UI-TARS' smart-resize constants (codes/ui_tars/action_parser.py). */
const FACTOR = 28;
const MIN_PIXELS = 100 * 28 * 28;
const MAX_PIXELS = 16384 * 28 * 28;

/** The screenshot as returned and the size the UI-TARS-1.5 model saw it at (its coordinate space). */
export function absoluteSizes(opts: FormatOptions | undefined, ctx: string): { shot: ImageSize; seen: ImageSize } {
  if (!opts?.width || !opts?.height) fail(`${ctx}: UI-TARS-1.5 absolute coordinates need the screenshot size.`);
  const shot = { width: opts.width, height: opts.height };
  return { shot, seen: smartResize(shot.width, shot.height, FACTOR, MIN_PIXELS, MAX_PIXELS) };
}
