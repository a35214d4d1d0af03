// Does the last damage always reach the screencast? Flip the page colour at random moments around our own captures
// and check that the last screencast frame shows the final colour.
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { CHROMIUM_FLAGS } from '../browser-env/chromium-launch.ts';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
const ctx = await b.newContext({ viewport: { width: 320, height: 240 } });
const page = await ctx.newPage();
const cdp = await ctx.newCDPSession(page);
let last = ''; let frames = 0;
cdp.on('Page.screencastFrame', (f) => { frames++; last = f.data; void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {}); });
await page.setContent('<body style="margin:0;background:rgb(0,0,0)"></body>');
await cdp.send('Page.startScreencast', { format: 'png', maxWidth: 8, maxHeight: 8 });
await sleep(300);
const red = async (b64: string) => (await sharp(Buffer.from(b64, 'base64')).raw().toBuffer())[0];
let bad = 0; const N = Number(process.env.N ?? 60);
for (let i = 0; i < N; i++) {
  const v = (i % 2) ? 0 : 255;
  const delay = Math.random() * 30;
  const cap = cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 50 });
  await sleep(delay);
  await page.evaluate((v) => { document.body.style.background = `rgb(${v},0,0)`; }, v);
  await cap;
  await sleep(250);
  const r = await red(last);
  if (Math.abs(r - v) > 30) { bad++; console.log('LOST final damage at trial', i, 'delay', delay.toFixed(1), 'last frame red', r, 'want', v); }
}
console.log(`trials ${N}, final state missing from the screencast: ${bad}, frames ${frames}`);
await b.close();
