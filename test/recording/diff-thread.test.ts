// The frame diff on its worker thread: the same answers as on the main thread, and the main thread keeps running
// while a large diff is computed (its timers fire meanwhile; with the synchronous diff none can).
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { changedShare, decodeSmall } from '../../recording/diff.ts';
import { changedShareOffThread, stopDiffThread } from '../../recording/diff-thread.ts';

afterAll(stopDiffThread);

/** A w×h JPEG: a grey page with a coloured box at (x, y). */
const frame = (w: number, h: number, x: number, y: number, colour = '#d03030') =>
  sharp({ create: { width: w, height: h, channels: 3, background: '#eeeeee' } })
    .composite([{ input: Buffer.from(`<svg width="200" height="120"><rect width="200" height="120" fill="${colour}"/></svg>`), left: x, top: y }])
    .jpeg()
    .toBuffer();

/** Two frames that differ at every pixel (noise against its inverse), raw RGBA. */
function noisePair(w: number, h: number) {
  const a = Buffer.alloc(w * h * 4);
  const b = Buffer.alloc(w * h * 4);
  for (let i = 0; i < a.length; i++) {
    a[i] = (i * 7919) & 255;
    b[i] = 255 - a[i];
  }
  return [{ data: a, width: w, height: h }, { data: b, width: w, height: h }] as const;
}

describe('changedShareOffThread', () => {
  it('answers what the main-thread diff answers', async () => {
    const [f0, f1, f2] = await Promise.all([frame(1280, 1000, 100, 100), frame(1280, 1000, 100, 100), frame(1280, 1000, 600, 500, '#3030d0')]);
    const [a, b, c] = await Promise.all([decodeSmall(f0), decodeSmall(f1), decodeSmall(f2)]);
    expect(await changedShareOffThread(a, b)).toBe(changedShare(a, b));
    const moved = await changedShareOffThread(a, c);
    expect(moved).toBe(changedShare(a, c));
    expect(moved).toBeGreaterThan(0.01);
    expect(await changedShareOffThread(a, { ...c, width: c.width - 1 })).toBe(1);
    // Several at once come back to their own callers.
    const all = await Promise.all([changedShareOffThread(a, c), changedShareOffThread(a, b), changedShareOffThread(c, a)]);
    expect(all).toEqual([moved, 0, changedShare(c, a)]);
  });

  it('leaves the event loop free while it diffs', async () => {
    const [a, b] = noisePair(1280, 1000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      // The synchronous diff holds the loop: no timer can fire until it returns.
      const before = ticks;
      changedShare(a, b);
      expect(ticks).toBe(before);
      ticks = 0;
      const share = await changedShareOffThread(a, b);
      expect(share).toBe(changedShare(a, b));
      expect(share).toBeGreaterThan(0.5);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });
});
