// The frame cache (on by default) on pages with animated images, made here: a GIF, an APNG, an animated WebP, a CSS
// background GIF, a GIF in a data: URL, a GIF served as image/jpeg, a GIF opened as the document, and one inserted by
// the page after the cache has answered. Each changes pixels on the compositor with no paint, so a document that
// holds one is never answered from the cache (browser-env/frame-images.ts). Every cached answer is paired with a
// fresh capture and must be identical, and the captures must show the image animating (or a stale answer could not
// be seen). Still images of the same formats leave the cache answering.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChromiumSandbox } from '../../browser-env/sandbox.ts';
import type { Observation } from '../../protocol/observation.ts';
import { FLASH, gif, png, STILL, webp } from './anim-images.ts';
import { diffBox, fresh, page, pixels } from './frame-pairing.ts';
import { html, openEnv, startFixture, type Fixture, type Handler, type TestEnv } from './support.ts';

const W = 60;
const STYLE = '<style>body{margin:0;background:#fff} p{font:16px sans-serif}</style>';
const doc = (body: string) => html(`${body}<p>frame cache</p>`, STYLE);

let fx: Fixture;
let te: TestEnv;
/** Path → what the page shows; the paths of the animated pages. */
const ANIMATED: Record<string, string> = {};

beforeAll(async () => {
  const [agif, awebp, sgif, swebp] = await Promise.all([gif(W, W, FLASH), webp(W, W, FLASH), gif(W, W, STILL), webp(W, W, STILL)]);
  const image =
    (type: string, bytes: Buffer): Handler =>
    (_req, res) => {
      res.writeHead(200, { 'content-type': type });
      res.end(bytes);
    };
  const pages: Record<string, string | Handler> = {
    '/a.gif': image('image/gif', agif),
    '/a.png': image('image/png', png(W, W, FLASH)),
    '/a.webp': image('image/webp', awebp),
    '/b.gif': image('image/gif', agif),
    '/lying.jpg': image('image/jpeg', agif),
    '/s.gif': image('image/gif', sgif),
    '/s.png': image('image/png', png(W, W, STILL)),
    '/s.webp': image('image/webp', swebp),
    '/still': doc(`<img src="/s.gif"><img src="/s.png"><img src="/s.webp"><div style="width:${W}px;height:${W}px;background:url(/s.gif)"></div>`),
  };
  const animated: Record<string, string> = {
    gif: '<img src="/a.gif">',
    apng: '<img src="/a.png">',
    'animated webp': '<img src="/a.webp">',
    'css background gif': `<div style="width:${W}px;height:${W}px;background:url(/b.gif)"></div>`,
    'data: URL gif': `<img src="data:image/gif;base64,${agif.toString('base64')}">`,
    'gif served as image/jpeg': '<img src="/lying.jpg">',
  };
  for (const [name, body] of Object.entries(animated)) {
    const path = `/anim/${name.replace(/\W+/g, '-')}`;
    pages[path] = doc(body);
    ANIMATED[name] = path;
  }
  ANIMATED['gif opened as the document'] = '/a.gif';
  fx = await startFixture(pages);
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

const create = (path: string) =>
  te.create({ start_url: fx.url(path), network: { allow: [`127.0.0.1:${fx.port}`] }, viewport: { width: 300, height: 200 }, screenshot_format: 'png' });

interface Looks {
  cached: number;
  captured: number;
  /** Cached answers that differ from the fresh capture paired with them. */
  stale: number;
  /** Distinct images among the captures: more than one shows the page animating. */
  distinct: Set<string>;
}

/** `n` looks, observations and no-op steps in turn; every cached answer is paired with a fresh capture. */
async function look(sb: ChromiumSandbox, n: number): Promise<Looks> {
  const r: Looks = { cached: 0, captured: 0, stale: 0, distinct: new Set() };
  for (let i = 0; i < n; i++) {
    const o: Observation = i % 2 ? await sb.observe() : (await sb.step([{ action: 'wait', ms: 5 }])).observation;
    const shot = Buffer.from(o.screenshot!.base64!, 'base64');
    if (!o.timings.cached) {
      r.captured++;
      r.distinct.add(createHash('sha256').update(await pixels(shot)).digest('hex'));
      continue;
    }
    r.cached++;
    if (await diffBox(shot, (await fresh(sb)).bytes)) r.stale++;
  }
  return r;
}

describe('frame cache and animated images', () => {
  it('a document with an animated image is never answered from the cache; one with still images is', async () => {
    const lines: string[] = [];
    for (const [name, path] of Object.entries(ANIMATED)) {
      const sb = await create(path);
      const r = await look(sb, 16);
      lines.push(`${name}: ${r.cached} cached (${r.stale} stale), ${r.captured} captured, ${r.distinct.size} distinct captures`);
      expect(r.stale, `${name}: stale cached answers`).toBe(0);
      expect(r.cached, `${name}: answered from the cache`).toBe(0);
      expect(r.distinct.size, `${name}: the image did not animate in the captures`).toBeGreaterThan(1);
      await sb.close();
    }
    const sb = await create('/still');
    const r = await look(sb, 16);
    lines.push(`still GIF, PNG, WebP and CSS background: ${r.cached} cached (${r.stale} stale), ${r.captured} captured`);
    expect(r.stale).toBe(0);
    expect(r.cached, 'still images: the cache never answered').toBeGreaterThan(0);
    await sb.close();
    console.log(`animated images:\n  ${lines.join('\n  ')}`);
  }, 240_000);

  it('an animated GIF the page inserts after the cache answered: no cached answer after it is shown', async () => {
    const sb = await create('/still');
    const before = await look(sb, 14);
    expect(before.stale).toBe(0);
    expect(before.cached).toBeGreaterThan(0);
    // The page itself (no action) shows an animated GIF, and says when it has loaded.
    await page(sb).evaluate(
      () =>
        new Promise((loaded) => {
          const img = document.createElement('img');
          img.onload = loaded;
          img.src = '/a.gif';
          document.body.prepend(img);
        }),
    );
    const after = await look(sb, 16);
    console.log(`inserted GIF: before ${before.cached} cached; after ${after.cached} cached (${after.stale} stale), ${after.captured} captured, ${after.distinct.size} distinct`);
    expect(after.stale).toBe(0);
    expect(after.cached).toBe(0);
    expect(after.distinct.size).toBeGreaterThan(1);
    await sb.close();
  }, 120_000);
});
