// Pairing an observation with a fresh capture of the same page (the frame cache's tests): the capture through the
// sandbox's own CDP session, in the sandbox's format, and where two images differ.
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { cdpCapture } from '../../browser-env/observe.ts';
import type { Observer } from '../../browser-env/observer.ts';
import type { SandboxState } from '../../browser-env/sandbox-state.ts';
import type { ChromiumSandbox } from '../../browser-env/sandbox.ts';

export const inside = (sb: ChromiumSandbox) => sb as unknown as { s: SandboxState; observer: Observer };
export const page = (sb: ChromiumSandbox): Page => inside(sb).s.page;

export async function pixels(b: Buffer): Promise<Buffer> {
  return sharp(b).removeAlpha().raw().toBuffer();
}

/** A fresh capture of the sandbox's page through its own session, in the sandbox's format; and the damage count. */
export async function fresh(sb: ChromiumSandbox): Promise<{ bytes: Buffer; damage: { frames: number; tree: string } | undefined }> {
  const { s, observer } = inside(sb);
  const cdp = await s.session(s.page);
  const raw = await cdpCapture(cdp, s.options.screenshot_format, s.options.screenshot_quality, 10_000);
  return { bytes: raw.bytes, damage: await observer.frames.damage(cdp) };
}

/** Where two images differ: the bounding box of the differing pixels (image px), or null when identical. */
export async function diffBox(a: Buffer, b: Buffer): Promise<{ x0: number; y0: number; x1: number; y1: number } | null> {
  const ia = await sharp(a).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const pb = await pixels(b);
  if (ia.data.equals(pb)) return null;
  const w = ia.info.width;
  const box = { x0: Infinity, y0: Infinity, x1: -1, y1: -1 };
  for (let i = 0; i < ia.data.length; i += 3) {
    if (ia.data[i] === pb[i] && ia.data[i + 1] === pb[i + 1] && ia.data[i + 2] === pb[i + 2]) continue;
    const x = (i / 3) % w;
    const y = Math.floor(i / 3 / w);
    box.x0 = Math.min(box.x0, x);
    box.y0 = Math.min(box.y0, y);
    box.x1 = Math.max(box.x1, x);
    box.y1 = Math.max(box.y1, y);
  }
  return box;
}
