import { chromium } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../browser-env/chromium-launch.ts';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
const dpr = Number(process.env.DPR ?? 1);
const ctx = await b.newContext({ viewport: { width: 640, height: 400 }, deviceScaleFactor: dpr });
const page = await ctx.newPage();
const cdp = await ctx.newCDPSession(page);
if (dpr !== 1) await cdp.send('Emulation.setDeviceMetricsOverride', { width: 640, height: 400, deviceScaleFactor: dpr, mobile: false, screenWidth: 640, screenHeight: 400 });
let frames = 0; let lastAt = 0;
cdp.on('Page.screencastFrame', (f) => { frames++; lastAt = performance.now(); void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {}); });
await page.setContent(`<style>#h:hover{background:red} .t{transition: background 1s} </style>
<div id=d>hello</div><input id=i><canvas id=c width=100 height=50></canvas>
<div id=h style="width:100px;height:40px">hover</div><div id=tall style="height:3000px">tall</div>`);
await cdp.send('Page.startScreencast', { format: 'jpeg', quality: 10, maxWidth: 8, maxHeight: 8, everyNthFrame: 1 });
await sleep(500);
async function count(label: string, fn: () => Promise<unknown>, wait = 300) {
  const f0 = frames; const t0 = performance.now();
  await fn();
  const tEv = performance.now();
  // barrier candidate: double rAF
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const afterRaf = frames - f0;
  const tr = performance.now();
  await sleep(wait);
  const n = frames - f0;
  console.log(`${label.padEnd(28)} frames=${n} atBarrier=${afterRaf} firstFrameLatency=${n ? (lastAt - t0).toFixed(0) : '-'} barrierMs=${(tr - tEv).toFixed(0)}`);
}
await count('idle', async () => {});
await count('idle2', async () => {});
await count('captureScreenshot', () => cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, optimizeForSpeed: true }));
await count('DOM text', () => page.evaluate(() => { document.getElementById('d')!.textContent = 'world'; }));
await count('1px color change', () => page.evaluate(() => { document.getElementById('d')!.style.color = '#000001'; }));
await count('canvas draw', () => page.evaluate(() => { const c = (document.getElementById('c') as HTMLCanvasElement).getContext('2d')!; c.fillRect(0, 0, 1, 1); }));
await count('rAF change after 1 frame', () => page.evaluate(() => { requestAnimationFrame(() => requestAnimationFrame(() => { document.getElementById('d')!.textContent = 'late'; })); }));
await count('focus input (caret)', () => page.focus('#i'), 1500);
await count('caret idle 1.5s', async () => {}, 1500);
await count('blur', () => page.evaluate(() => (document.activeElement as HTMLElement).blur()));
await count('hover', () => page.mouse.move(50, 50 + 40));
await count('scroll', () => page.mouse.wheel(0, 200));
await count('css animation', () => page.evaluate(() => { const s = document.createElement('style'); s.textContent = '@keyframes k{from{opacity:1}to{opacity:.2}} #d{animation:k 1s infinite}'; document.head.append(s); }), 500);
await count('anim running', async () => {}, 500);
await count('stop anim', () => page.evaluate(() => { document.getElementById('d')!.style.animation = 'none'; }));
await count('navigation', () => page.goto('data:text/html,<p>nav</p>'));
await count('resize', () => page.setViewportSize({ width: 600, height: 400 }));
await count('idle end', async () => {});
// transient change that reverts before barrier
await count('flash+revert same task', () => page.evaluate(() => { document.body.style.background = 'red'; document.body.offsetTop; document.body.style.background = ''; }));
console.log('total frames', frames);
await b.close();
