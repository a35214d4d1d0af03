// Animated images, for the frame cache (frame-cache.ts). An animated GIF, APNG, WebP or AVIF changes pixels on the
// compositor (it advances the image's frames itself): no paint, no new layer tree, nothing in the page's state.
// Only the screencast sees it, and the screencast has a hole (frame-damage.ts). So a document that holds one is busy:
// no capture of it is kept while it is open.
//
// Which images a document holds, Chromium says itself: Page.getResourceTree lists the resources its frames loaded
// (<img>, <picture>, CSS backgrounds, SVG <image>, an image opened as the document). Page.getResourceContent gives
// their bytes from the renderer's cache, with no new request. Chromium decodes an image by its bytes' signature, not
// by the served type, so every image is read; its frame count comes from its container:
// - a GIF with a second image descriptor;
// - a PNG with an acTL chunk (APNG) before its image data;
// - a WebP whose VP8X header sets the animation flag;
// - an ISO-BMFF image sequence (AVIF, brand 'avis');
// - JPEG XL is not read, and counts as animated.
// A file cut short (still loading) or unreadable counts as animated and is read again next time. An image the page
// removed stays listed, so the document stays busy: never stale, only fewer answers from the cache.
import type { CDPSession } from 'playwright-core';
import type { Progress } from '../sandbox/progress.ts';

/** A colour table's size from a GIF's flags byte. */
const colorTable = (flags: number): number => (flags & 0x80 ? 3 << ((flags & 7) + 1) : 0);

/** A GIF's frames up to 2 (2: two or more); -1 when it ends or breaks before its trailer. */
function gifFrames(b: Buffer): number {
  if (b.length < 13) return -1;
  let i = 13 + colorTable(b[10]);
  let frames = 0;
  // Data sub-blocks: a length byte, then that many bytes; a zero length ends them.
  const subBlocks = (): boolean => {
    while (i < b.length) {
      const n = b[i++];
      if (n === 0) return true;
      i += n;
    }
    return false;
  };
  while (i < b.length) {
    const tag = b[i++];
    if (tag === 0x3b) return frames; // the trailer
    if (tag === 0x21) {
      i++; // an extension's label
      if (!subBlocks()) return -1;
    } else if (tag === 0x2c) {
      if (++frames > 1) return frames;
      if (i + 9 > b.length) return -1;
      // position and size (8 bytes), flags, its own colour table, the LZW code size
      i += 9 + colorTable(b[i + 8]) + 1;
      if (!subBlocks()) return -1;
    } else return -1;
  }
  return -1;
}

/** A PNG with an animation control chunk for more than one frame; undefined when it ends before its image data. */
function apng(b: Buffer): boolean | undefined {
  for (let i = 8; i + 8 <= b.length; i += 12 + b.readUInt32BE(i)) {
    const type = b.toString('latin1', i + 4, i + 8);
    if (type === 'acTL') return i + 12 > b.length ? undefined : b.readUInt32BE(i + 8) !== 1;
    if (type === 'IDAT') return false;
  }
  return undefined;
}

/**
 * Whether an image file has more than one frame, read from its container: true, false, or undefined when it is cut
 * short (it may still be loading). Formats without animation (JPEG, BMP, ICO, SVG: an SVG image's animation paints)
 * and bytes no decoder takes are false.
 */
export function animatedImage(bytes: Uint8Array): boolean | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = (i: number, s: string) => b.length >= i + s.length && b.toString('latin1', i, i + s.length) === s;
  if (at(0, 'GIF8')) {
    const n = gifFrames(b);
    return n < 0 ? undefined : n > 1;
  }
  if (at(0, '\x89PNG\r\n\x1a\n')) return apng(b);
  if (at(0, 'RIFF') && at(8, 'WEBP')) return b.length < 21 ? undefined : at(12, 'VP8X') && (b[20] & 0x02) !== 0;
  if (at(4, 'ftyp')) {
    if (b.length < 16) return undefined;
    const end = Math.min(b.length, b.readUInt32BE(0));
    for (let i = 8; i + 4 <= end; i += 4) if (at(i, 'avis')) return true;
    return false;
  }
  if (at(0, '\xff\x0a') || at(4, 'JXL ')) return true;
  return false;
}

/** The bytes of a data: URL. */
function dataUrlBytes(url: string): Buffer {
  const comma = url.indexOf(',');
  if (comma < 0) throw new Error('not a data URL');
  const body = decodeURIComponent(url.slice(comma + 1));
  return /;base64$/i.test(url.slice(0, comma)) ? Buffer.from(body, 'base64') : Buffer.from(body, 'latin1');
}

interface FrameTree {
  frame: { id: string; loaderId: string; url: string; mimeType: string };
  childFrames?: FrameTree[];
  resources: { url: string; type: string; failed?: boolean; canceled?: boolean }[];
}

/** The images of one page's documents and whether any is animated. */
export class DocumentImages {
  /** Verdicts by document (loader) and URL: true animated (or not read yet). */
  private verdicts = new Map<string, Promise<boolean>>();
  /** Verdicts that are guesses (the bytes were cut short or unreadable): read again next time. */
  private readonly guessed = new Set<string>();
  /** One image read at a time: a page of many images does not flood the session (or this process) at once. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly cdp: CDPSession) {}

  /**
   * Whether a document of the page's frames holds an animated image; undefined when that could not be read in time.
   * Reads still running when `d` ends go on (one at a time, each bounded by Chromium's answer): the next look has
   * their verdicts.
   */
  async animated(d: Progress): Promise<boolean | undefined> {
    try {
      const { frameTree } = (await d.race(this.cdp.send('Page.getResourceTree'), 'resource tree')) as { frameTree: FrameTree };
      const next = new Map<string, Promise<boolean>>();
      const add = (frameId: string, loaderId: string, url: string) => {
        const key = `${loaderId} ${url}`;
        if (next.has(key)) return;
        const known = this.guessed.has(key) ? undefined : this.verdicts.get(key);
        this.guessed.delete(key);
        next.set(key, known ?? this.read(key, frameId, url));
      };
      const walk = (t: FrameTree) => {
        // A frame that shows an image file itself (an image document).
        if (t.frame.mimeType.startsWith('image/')) add(t.frame.id, t.frame.loaderId, t.frame.url);
        for (const r of t.resources) if (r.type === 'Image' && !r.failed && !r.canceled) add(t.frame.id, t.frame.loaderId, r.url);
        for (const c of t.childFrames ?? []) walk(c);
      };
      walk(frameTree);
      this.verdicts = next;
      return (await d.race(Promise.all(next.values()), 'image frames')).some(Boolean);
    } catch {
      return undefined;
    }
  }

  private read(key: string, frameId: string, url: string): Promise<boolean> {
    let bytes: Promise<Buffer>;
    if (url.startsWith('data:')) bytes = Promise.resolve().then(() => dataUrlBytes(url));
    else {
      bytes = this.queue
        .then(() => this.cdp.send('Page.getResourceContent', { frameId, url }) as Promise<{ content: string; base64Encoded: boolean }>)
        .then((r) => Buffer.from(r.content, r.base64Encoded ? 'base64' : 'utf8'));
      this.queue = bytes.catch(() => {});
    }
    return bytes.then(
      (b) => {
        const a = animatedImage(b);
        if (a === undefined) this.guessed.add(key);
        return a ?? true;
      },
      () => {
        this.guessed.add(key);
        return true;
      },
    );
  }
}
