// Image-size maths shared by the environment (what it sends) and the policy formats (what the model saw):
// Qwen-VL's smart resize, computed exactly as qwen-vl-utils computes it (`smart_resize` in
// QwenLM/Qwen3-VL qwen-vl-utils/src/qwen_vl_utils/vision_process.py), including Python's rounding of halves to
// even — JS `Math.round` rounds them up, which turned 1280x720 at factor 32 into 1280x736 instead of 1280x704.

export interface ImageSize {
  width: number;
  height: number;
}

/** Python 3 `round(v)`: to the nearest integer, halves to the even neighbour. */
function roundHalfEven(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/**
 * Both sides rounded to the nearest multiple of `factor` (halves to even); when the pixel count leaves
 * [minPixels, maxPixels], both sides are scaled by one ratio, floored to the grid when shrinking and ceiled when
 * growing. Sides never go below one `factor` (where qwen-vl-utils would produce an unusable 0).
 */
export function smartResize(width: number, height: number, factor: number, minPixels: number, maxPixels: number): ImageSize {
  if (!(width > 0) || !(height > 0)) throw new RangeError('smartResize: sizes must be positive');
  if (Math.max(width, height) / Math.min(width, height) > 200) {
    throw new RangeError('smartResize: aspect ratio above 200 is not supported');
  }
  let w = Math.max(factor, roundHalfEven(width / factor) * factor);
  let h = Math.max(factor, roundHalfEven(height / factor) * factor);
  if (w * h > maxPixels) {
    const beta = Math.sqrt((height * width) / maxPixels);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
  } else if (w * h < minPixels) {
    const beta = Math.sqrt(minPixels / (height * width));
    w = Math.ceil((width * beta) / factor) * factor;
    h = Math.ceil((height * beta) / factor) * factor;
  }
  return { width: w, height: h };
}
