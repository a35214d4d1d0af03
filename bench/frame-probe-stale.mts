// The frame cache against pages that change by themselves on a timer (browser-env/frame-cache.ts): wait steps back to
// back; each cached answer is compared with a fresh capture, and a difference with no change between the step's
// request and the fresh capture is a stale answer. The pages record when they changed (performance.now()).
// `node --import tsx bench/frame-probe-stale.mts [steps per page] [page,...]`
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { createBrowserEnvironment } from '../browser-env/index.ts';
import { cdpCapture } from '../browser-env/observe.ts';
import type { ChromiumSandbox } from '../browser-env/sandbox.ts';
import type { SandboxState } from '../browser-env/sandbox-state.ts';
import { BrowserCreateOptions } from '../protocol/sandbox.ts';

const STEPS = Number(process.argv[2] ?? 150);
const PX = 'position:absolute;left:300px;top:10px;width:1px;height:1px';
const TIMER = (body: string) => `<script>window.changes=[];let n=0;setInterval(()=>{n++;${body};changes.push(performance.now())},230)</script>`;
/** Each page changes one pixel (or moves by one) every 230 ms, by a different path through Chromium. */
const PAGES: Record<string, string> = {
  // A main-thread paint.
  flip: `<div id="px" style="${PX};background:#fff"></div>${TIMER(`px.style.background=n%2?'#fefefe':'#fff'`)}`,
  // A canvas draw.
  canvas: `<canvas id="c" width="1" height="1" style="position:absolute;left:300px;top:10px"></canvas>${TIMER(`const g=c.getContext('2d');g.fillStyle=n%2?'#fefefe':'#fff';g.fillRect(0,0,1,1)`)}`,
  // A composited layer moved by a pixel: no repaint.
  transform: `<div id="px" style="${PX};background:#000;will-change:transform"></div>${TIMER(`px.style.transform='translateX('+(n%2)+'px)'`)}`,
  // A composited layer made transparent and back: no repaint.
  opacity: `<div id="px" style="${PX};background:#000;will-change:opacity"></div>${TIMER(`px.style.opacity=String(n%2)`)}`,
  // The page scrolled by script by one pixel.
  scroll: `<div style="height:3000px;background:linear-gradient(#fff,#000)"></div>${TIMER(`scrollTo(0,n%2)`)}`,
  // A worker's OffscreenCanvas: its frames go to the compositor without the page's main thread.
  worker: `<canvas id="c" width="1" height="1" style="position:absolute;left:300px;top:10px"></canvas><script>window.changes=[];
    const w=new Worker(URL.createObjectURL(new Blob(['let g,n=0;onmessage=(e)=>{g=e.data.getContext("2d");setInterval(()=>{g.fillStyle=n++%2?"#000":"#fff";g.fillRect(0,0,1,1);postMessage(performance.timeOrigin+performance.now())},230)}'])));
    const oc=c.transferControlToOffscreen();w.postMessage(oc,[oc]);w.onmessage=(e)=>changes.push(e.data-performance.timeOrigin)</script>`,
};
const pages = (process.argv[3] ?? Object.keys(PAGES).join(',')).split(',');

const server = http.createServer((q, r) => {
  r.writeHead(200, { 'content-type': 'text/html' });
  r.end(`<!doctype html><body style="margin:0;background:#fff">${PAGES[(q.url ?? '/').slice(1)] ?? ''}</body>`);
});
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const port = (server.address() as AddressInfo).port;
const dataDir = await mkdtemp(join(tmpdir(), 'grove-fcp-'));
const env = await createBrowserEnvironment({ executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, warmPool: 0, dataDir, headless: true, extraArgs: [] });
const raw = async (b: Buffer) => sharp(b).removeAlpha().raw().toBuffer();
let totalStale = 0;
console.log(`load ${loadavg()[0].toFixed(1)}`);
try {
  for (const name of pages) {
    const o = BrowserCreateOptions.parse({ type: 'browser', start_url: `http://127.0.0.1:${port}/${name}`, viewport: { width: 400, height: 300 }, screenshot_format: 'png', frame_cache: true, network: { allow: [`127.0.0.1:${port}`] } });
    const sb = (await env.create(`stale-${name}`, o)) as ChromiumSandbox;
    await sb.ready();
    const s = (sb as unknown as { s: SandboxState }).s;
    let cached = 0, captured = 0, stale = 0, changedBetween = 0;
    const t0 = Date.now();
    for (let i = 0; i < STEPS; i++) {
      const t1 = (await s.page.evaluate('performance.now()')) as number;
      const r = await sb.step([{ action: 'wait', ms: 5 }]);
      if (!r.observation.timings.cached) {
        captured++;
        continue;
      }
      cached++;
      const f = await cdpCapture(await s.session(s.page), 'png', 80, 10_000);
      const t2 = (await s.page.evaluate('performance.now()')) as number;
      if ((await raw(Buffer.from(r.observation.screenshot!.base64!, 'base64'))).equals(await raw(f.bytes))) continue;
      if ((await s.page.evaluate(`changes.some((c) => c > ${t1} && c < ${t2})`)) as boolean) changedBetween++;
      else {
        stale++;
        const last = (await s.page.evaluate(`Math.max(0, ...changes.filter((c) => c < ${t1}))`)) as number;
        console.log(`  ${name}: stale at step ${i}: last change ${(t1 - last).toFixed(0)} ms before the step`);
      }
    }
    totalStale += stale;
    console.log(`${name.padEnd(9)} steps ${STEPS} in ${((Date.now() - t0) / 1000).toFixed(1)} s: captured ${captured}, cached ${cached}, differing with a change between ${changedBetween}, STALE ${stale}`);
    await sb.close();
  }
  console.log(`all pages: STALE ${totalStale}; load ${loadavg()[0].toFixed(1)}`);
} finally {
  await env.shutdown();
  server.close();
  await rm(dataDir, { recursive: true, force: true });
}
