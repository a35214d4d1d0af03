// The frame cache's known hole, measured (browser-env/frame-cache.ts): a page flipping 1 px on a timer, wait steps
// back to back; each cached answer is compared with a fresh capture, and a difference with no flip between the
// step's request and the fresh capture is a stale answer. `node --import tsx bench/frame-probe-stale.mts [steps]`
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { createBrowserEnvironment } from '../browser-env/index.ts';
import { cdpCapture } from '../browser-env/observe.ts';
import type { ChromiumSandbox } from '../browser-env/sandbox.ts';
import type { SandboxState } from '../browser-env/sandbox-state.ts';
import { BrowserCreateOptions } from '../protocol/sandbox.ts';

const STEPS = Number(process.argv[2] ?? 150);
const PAGE = `<!doctype html><body style="margin:0;background:#fff"><div id="px" style="position:absolute;left:300px;top:10px;width:1px;height:1px;background:#fff"></div>
<script>window.flips=[];let n=0;setInterval(()=>{document.getElementById('px').style.background=n++%2?'#fff':'#fefefe';flips.push(performance.now())},230)</script></body>`;
const server = http.createServer((_q, r) => { r.writeHead(200, { 'content-type': 'text/html' }); r.end(PAGE); });
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const port = (server.address() as AddressInfo).port;
const dataDir = await mkdtemp(join(tmpdir(), 'grove-fcp-'));
const env = await createBrowserEnvironment({ executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, warmPool: 0, dataDir, headless: true, extraArgs: [] });
try {
  const o = BrowserCreateOptions.parse({ type: 'browser', start_url: `http://127.0.0.1:${port}/`, viewport: { width: 400, height: 300 }, screenshot_format: 'png', frame_cache: true, network: { allow: [`127.0.0.1:${port}`] } });
  const sb = (await env.create('stale-probe', o)) as ChromiumSandbox;
  await sb.ready();
  const s = (sb as unknown as { s: SandboxState }).s;
  const raw = async (b: Buffer) => sharp(b).removeAlpha().raw().toBuffer();
  let cached = 0, stale = 0, flipBetween = 0;
  for (let i = 0; i < STEPS; i++) {
    await sb.step([{ action: 'wait', ms: 5 }]);
    const t1 = (await s.page.evaluate('performance.now()')) as number;
    const r = await sb.step([{ action: 'wait', ms: 5 }]);
    if (!r.observation.timings.cached) continue;
    cached++;
    const obs = (sb as unknown as { observer: { frames: { damage(c: unknown): Promise<number | undefined> } } }).observer;
    const cdp = await s.session(s.page);
    const d0 = (await obs.frames.damage(cdp)) ?? 0;
    const f = await cdpCapture(await s.session(s.page), 'png', 80, 10_000);
    const t2 = (await s.page.evaluate('performance.now()')) as number;
    if ((await raw(Buffer.from(r.observation.screenshot!.base64!, 'base64'))).equals(await raw(f.bytes))) continue;
    const between = (await s.page.evaluate(`flips.some((f) => f > ${t1} && f < ${t2})`)) as boolean;
    if (between) flipBetween++;
    else {
      stale++;
      await new Promise((r) => setTimeout(r, 300));
      const d1 = (await obs.frames.damage(cdp)) ?? 0;
      console.log(`stale at step ${i}: frames since the cached answer ${d1 - d0} (our fresh capture's own: 1); last flip ${(t1 - ((await s.page.evaluate(`Math.max(0, ...flips.filter((f) => f < ${t1}))`)) as number)).toFixed(0)} ms before the step`);
    }
  }
  console.log(`steps ${STEPS}: cached answers ${cached}, differing with a flip between ${flipBetween}, STALE (no flip between) ${stale}`);
  await sb.close();
} finally {
  await env.shutdown();
  server.close();
  await rm(dataDir, { recursive: true, force: true });
}
