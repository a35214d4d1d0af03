// The frame cache's animated-image check (browser-env/frame-images.ts) on images made here: the frame count read
// from each container, files cut short, and bytes made to mislead it.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { animatedImage } from '../../browser-env/frame-images.ts';
import { FLASH, gif, png, STILL, webp } from './anim-images.ts';

describe('animatedImage', () => {
  it('tells animated GIF, APNG and WebP from still ones', async () => {
    expect(animatedImage(await gif(8, 8, FLASH))).toBe(true);
    expect(animatedImage(await gif(8, 8, STILL))).toBe(false);
    expect(animatedImage(png(8, 8, FLASH))).toBe(true);
    expect(animatedImage(png(8, 8, STILL))).toBe(false);
    expect(animatedImage(await webp(8, 8, FLASH))).toBe(true);
    expect(animatedImage(await webp(8, 8, STILL))).toBe(false);
    // sharp's own PNG and JPEG: still
    const raw = { raw: { width: 4, height: 4, channels: 3 as const } };
    expect(animatedImage(await sharp(Buffer.alloc(48, 90), raw).png().toBuffer())).toBe(false);
    expect(animatedImage(await sharp(Buffer.alloc(48, 90), raw).jpeg().toBuffer())).toBe(false);
  });

  it('an APNG with one frame is still; an AVIF image sequence and JPEG XL count as animated', () => {
    const one = png(4, 4, STILL);
    // acTL for 1 frame before IDAT
    const ihdrEnd = 8 + 25;
    const actl = Buffer.from([0, 0, 0, 8, ...Buffer.from('acTL'), 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(animatedImage(Buffer.concat([one.subarray(0, ihdrEnd), actl, one.subarray(ihdrEnd)]))).toBe(false);
    const ftyp = (brands: string) => Buffer.concat([Buffer.from([0, 0, 0, 8 + brands.length]), Buffer.from(`ftyp${brands}`, 'latin1')]);
    expect(animatedImage(ftyp('avif\0\0\0\0mif1avis'))).toBe(true);
    expect(animatedImage(ftyp('avif\0\0\0\0mif1miaf'))).toBe(false);
    expect(animatedImage(Buffer.from([0xff, 0x0a, 0, 0]))).toBe(true);
  });

  it('a file cut short is undefined (read again), unknown bytes are still', async () => {
    const g = await gif(8, 8, FLASH);
    const w = await webp(8, 8, FLASH);
    const p = png(8, 8, FLASH);
    // cut inside the first frame: may still be loading
    expect(animatedImage(g.subarray(0, 40))).toBeUndefined();
    expect(animatedImage(p.subarray(0, 20))).toBeUndefined();
    expect(animatedImage(w.subarray(0, 16))).toBeUndefined();
    // a still GIF without its trailer: loading
    const s = await gif(8, 8, STILL);
    expect(animatedImage(s.subarray(0, s.length - 1))).toBeUndefined();
    expect(animatedImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><animate/></svg>'))).toBe(false);
    expect(animatedImage(Buffer.alloc(0))).toBe(false);
  });

  it('bytes made to mislead it end in an answer, never a hang or a throw', () => {
    // a PNG chunk that claims 4 GB; a GIF whose sub-block lengths run past its end; a GIF with a bad block tag
    const bigChunk = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from('tEXt')]);
    expect(animatedImage(bigChunk)).toBeUndefined();
    const head = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([1, 0, 1, 0, 0, 0, 0])]);
    expect(animatedImage(Buffer.concat([head, Buffer.from([0x21, 0xf9, 0xff, 1, 2])]))).toBeUndefined();
    expect(animatedImage(Buffer.concat([head, Buffer.from([0x99])]))).toBeUndefined();
    // a global colour table larger than the file
    expect(animatedImage(Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([1, 0, 1, 0, 0xf7, 0, 0])]))).toBeUndefined();
    // a WebP whose VP8X flags say animated, with nothing after: counted as animated
    const vp8x = Buffer.concat([Buffer.from('RIFF', 'latin1'), Buffer.alloc(4), Buffer.from('WEBPVP8X', 'latin1'), Buffer.from([10, 0, 0, 0, 0x02])]);
    expect(animatedImage(vp8x)).toBe(true);
    // an ftyp box whose size runs past the file: read to the file's end
    expect(animatedImage(Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from('ftypavif\0\0\0\0', 'latin1')]))).toBe(false);
  });
});
