// Does every 1-px flip send a screencast frame when nothing else captures? Flips every 230 ms for ~7 s, frames
// counted; then the same with a Page.captureScreenshot every 60 ms in between.
import { chromium } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../browser-env/chromium-launch.ts';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
const ctx = await b.newContext({ viewport: { width: 400, height: 300 } });
const page = await ctx.newPage();
const cdp = await ctx.newCDPSession(page);
let frames = 0;
cdp.on('Page.screencastFrame', (f) => { frames++; void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {}); });
await page.setContent('<body style="margin:0;background:#fff"><div id="px" style="position:absolute;left:300px;top:10px;width:1px;height:1px;background:#fff"></div></body>');
await cdp.send('Page.startScreencast', { format: 'jpeg', quality: 1, maxWidth: 8, maxHeight: 8 });
await sleep(300);
for (const captures of [false, true]) {
  await page.evaluate(() => { (window as any).flips = 0; let n = 0; (window as any).iv = setInterval(() => { document.getElementById('px')!.style.background = n++ % 2 ? '#fff' : '#fefefe'; (window as any).flips++; }, 230); });
  const f0 = frames; let caps = 0;
  const end = Date.now() + 7000;
  while (Date.now() < end) { if (captures) { await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, optimizeForSpeed: true }); caps++; } await sleep(60); }
  const flips = await page.evaluate(() => { clearInterval((window as any).iv); return (window as any).flips as number; });
  await sleep(300);
  console.log(`captures ${captures ? 'every 60 ms' : 'none'}: flips ${flips}, screencast frames ${frames - f0}, our captures ${caps}, frames not explained by flips+captures ${frames - f0 - flips - caps}`);
}
await b.close();
