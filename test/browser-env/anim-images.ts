// Test images made here, each of solid-colour frames: animated (every frame shown `delayMs`, looping forever) and
// still, as GIF and WebP (sharp) and PNG/APNG (written chunk by chunk: sharp writes no APNG).
import sharp from 'sharp';
import { crc32, deflateSync } from 'node:zlib';

export type Rgb = [number, number, number];

const solid = (w: number, h: number, c: Rgb): Buffer => Buffer.from(Array.from({ length: w * h }, () => c).flat());

/** Frames stacked as one raw image of `pageHeight` h, for sharp's animated writers. */
function frames(w: number, h: number, colors: Rgb[]) {
  return sharp(Buffer.concat(colors.map((c) => solid(w, h, c))), { raw: { width: w, height: h * colors.length, channels: 3, pageHeight: h } });
}

export function gif(w: number, h: number, colors: Rgb[], delayMs = 100): Promise<Buffer> {
  return frames(w, h, colors)
    .gif({ loop: 0, delay: colors.map(() => delayMs) })
    .toBuffer();
}

export function webp(w: number, h: number, colors: Rgb[], delayMs = 100): Promise<Buffer> {
  return frames(w, h, colors)
    .webp({ loop: 0, delay: colors.map(() => delayMs), lossless: true })
    .toBuffer();
}

function u32(...n: number[]): Buffer {
  const b = Buffer.alloc(4 * n.length);
  n.forEach((v, i) => b.writeUInt32BE(v, 4 * i));
  return b;
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), body, u32(crc32(body))]);
}

/** A PNG; with more than one colour an APNG (acTL, an fcTL per frame, the first frame as IDAT, the others as fdAT). */
export function png(w: number, h: number, colors: Rgb[], delayMs = 100): Buffer {
  const image = (c: Rgb) => deflateSync(Buffer.concat(Array.from({ length: h }, () => Buffer.concat([Buffer.from([0]), solid(w, 1, c)]))));
  const parts = [Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', Buffer.concat([u32(w, h), Buffer.from([8, 2, 0, 0, 0])]))];
  if (colors.length === 1) return Buffer.concat([...parts, chunk('IDAT', image(colors[0])), chunk('IEND', Buffer.alloc(0))]);
  parts.push(chunk('acTL', u32(colors.length, 0)));
  let seq = 0;
  colors.forEach((c, i) => {
    const delay = Buffer.alloc(4);
    delay.writeUInt16BE(delayMs, 0);
    delay.writeUInt16BE(1000, 2);
    // sequence, size, offset; the delay as a fraction of a second; dispose and blend: none, source
    parts.push(chunk('fcTL', Buffer.concat([u32(seq++, w, h, 0, 0), delay, Buffer.from([0, 0])])));
    parts.push(i === 0 ? chunk('IDAT', image(c)) : chunk('fdAT', Buffer.concat([u32(seq++), image(c)])));
  });
  return Buffer.concat([...parts, chunk('IEND', Buffer.alloc(0))]);
}

/** Two high-contrast frames: a stale answer differs from a fresh capture in a whole block of pixels. */
export const FLASH: Rgb[] = [
  [255, 0, 0],
  [0, 0, 255],
];
export const STILL: Rgb[] = [[0, 128, 0]];
