// Which damage signal sees a 1-px change made a few ms after one of our captures (the frame cache's hole,
// browser-env/frame-cache.ts)? Each trial: an event (a capture, or a first flip and its frame), then d = 0-50 ms later
// a 1-px flip, then the two-rAF barrier; what each signal had reported by the end of the barrier, and how long the
// screencast took to send a frame for the flip (up to 1.5 s).
// `node --import tsx bench/frame-probe-signals.mts [trials] [mode,...]`
// Modes:
//   cap        8x8 screencast on the capturing session, Page.captureScreenshot as the event (what the cache does)
//   cap-split  the same, the screencast on a second session of the page
//   cap-last   the same as cap, the screencast started with sendLastFrame and maxFramesInFlight 10
//   cap-layer  the same as cap, plus LayerTree.enable: layerPainted / layerTreeDidChange counted
//   flip2      no capture: a first flip and its screencast frame are the event
//   cap-layer-osc  cap-layer, the pixel drawn by a worker's OffscreenCanvas (no main-thread paint)
//   cap-layer-wc / cap-layer-op  cap-layer, the pixel a will-change layer moved by 1 px / made opaque (no repaint)
//   gif        an animated GIF for 3 s: screencast frames, paint events, layer trees (no trials)
//   layers     prints the layer trees of a few pages (no trials)
//   full       flip2 with a full-size PNG screencast; checks the latest frame shows the flip (capture from the screencast)
import { chromium, type CDPSession } from 'playwright-core';
import sharp from 'sharp';
import { CHROMIUM_FLAGS } from '../browser-env/chromium-launch.ts';

const TRIALS = Number(process.argv[2] ?? 30);
const MODES = (process.argv[3] ?? 'cap,cap-split,cap-last,cap-layer,cap-layer-osc,cap-layer-wc,cap-layer-op,flip2,full').split(',');
const W = 400;
const H = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BARRIER = 'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(0))))';

const b = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
const pct = (a: number[], p: number) => (a.length ? [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))] : NaN);

async function run(mode: string): Promise<void> {
  const ctx = await b.newContext({ viewport: { width: W, height: H } });
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  const counter: CDPSession = mode === 'cap-split' ? await ctx.newCDPSession(page) : cdp;
  let frames = 0;
  let lastFrame = '';
  const arrivals: number[] = [];
  counter.on('Page.screencastFrame', (f) => {
    frames++;
    arrivals.push(Date.now());
    lastFrame = f.data;
    void counter.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {});
  });
  let layer = 0;
  let painted = 0;
  let changed = 0;
  let lastTree = '';
  let treeDigests = 0;
  const layers = mode.startsWith('cap-layer');
  if (layers) {
    cdp.on('LayerTree.layerPainted', () => (layer++, painted++));
    cdp.on('LayerTree.layerTreeDidChange', (e) => {
      layer++;
      changed++;
      const t = JSON.stringify(e.layers ?? null);
      if (t !== lastTree) (treeDigests++, (lastTree = t));
    });
  }
  // osc: the pixel is drawn by a worker into an OffscreenCanvas (frames go to the compositor without a main-thread paint).
  const osc = mode.endsWith('-osc');
  // wc / op: the pixel is a composited layer (will-change) moved by 1 px / made transparent: no repaint.
  const wc = mode.endsWith('-wc');
  const op = mode.endsWith('-op');
  const style = wc ? 'will-change:transform;background:#000' : op ? 'will-change:opacity;background:#000;opacity:0' : 'background:#fff';
  await page.setContent(
    osc
      ? `<body style="margin:0;background:#fff"><canvas id="c" width="1" height="1" style="position:absolute;left:300px;top:10px"></canvas><script>
         const w = new Worker(URL.createObjectURL(new Blob(['let g; onmessage = (e) => { if (e.data.c) { g = e.data.c.getContext("2d"); return; } g.fillStyle = e.data.v; g.fillRect(0, 0, 1, 1); }'])));
         const oc = document.getElementById('c').transferControlToOffscreen(); w.postMessage({ c: oc }, [oc]); window.paint = (v) => w.postMessage({ v });</script></body>`
      : `<body style="margin:0;background:#fff"><div id="px" style="position:absolute;left:300px;top:10px;width:1px;height:1px;${style}"></div></body>`,
  );
  if (layers) await cdp.send('LayerTree.enable');
  const full = mode === 'full';
  const params: Record<string, unknown> = full ? { format: 'png', maxWidth: W, maxHeight: H, everyNthFrame: 1 } : { format: 'jpeg', quality: 1, maxWidth: 8, maxHeight: 8, everyNthFrame: 1 };
  if (mode === 'cap-last') Object.assign(params, { sendLastFrame: true, maxFramesInFlight: 10 });
  await counter.send('Page.startScreencast', params);
  await sleep(300);
  let colour = 0;
  const flip = async () => {
    colour ^= 1;
    const v = colour ? '#000' : '#fff';
    const el = `document.getElementById('px').style`;
    const expression = osc ? `paint('${v}')` : wc ? `${el}.transform = 'translateX(${colour}px)'` : op ? `${el}.opacity = '${colour}'` : `${el}.background = '${v}'`;
    await cdp.send('Runtime.evaluate', { expression });
  };
  const pxOfLast = async () => {
    const { data, info } = await sharp(Buffer.from(lastFrame, 'base64')).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    return data[(10 * info.width + 300) * 3];
  };
  const waitFrames = async (n: number, ms: number) => {
    const end = Date.now() + ms;
    while (frames < n && Date.now() < end) await sleep(2);
    return frames >= n;
  };
  // At rest: what our own barrier and our own capture send.
  await sleep(300);
  const rest = { f: frames, p: painted, c: changed };
  for (let i = 0; i < 5; i++) await cdp.send('Runtime.evaluate', { expression: BARRIER, awaitPromise: true });
  await sleep(200);
  const afterBarriers = { f: frames - rest.f, p: painted - rest.p, c: changed - rest.c };
  const rest2 = { f: frames, p: painted, c: changed };
  for (let i = 0; i < 5; i++) {
    await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, captureBeyondViewport: false, optimizeForSpeed: true });
    await sleep(100);
  }
  const afterCaptures = { f: frames - rest2.f, p: painted - rest2.p, c: changed - rest2.c };
  const lags: number[] = [];
  let treeByBarrier = 0;
  let byBarrier = 0, by300 = 0, never = 0, layerByBarrier = 0, ownMissing = 0, fullStaleAtBarrier = 0, fullStaleAt300 = 0;
  for (let i = 0; i < TRIALS; i++) {
    await sleep(120 + Math.random() * 60);
    const f0 = frames;
    if (mode.startsWith('cap')) {
      await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: 80, captureBeyondViewport: false, optimizeForSpeed: true });
      if (!(await waitFrames(f0 + 1, 100))) ownMissing++;
    } else {
      await flip();
      if (!(await waitFrames(f0 + 1, 300))) ownMissing++;
    }
    const f1 = frames;
    const l1 = layer;
    const p1 = painted;
    const t1 = treeDigests;
    await sleep(Math.random() * 50);
    const tFlip = Date.now();
    await flip();
    await cdp.send('Runtime.evaluate', { expression: BARRIER, awaitPromise: true });
    if (frames > f1) byBarrier++;
    if (painted > p1) layerByBarrier++;
    if (treeDigests > t1) treeByBarrier++;
    if (full && (await pxOfLast()) !== (colour ? 0 : 255)) fullStaleAtBarrier++;
    const got = await waitFrames(f1 + 1, 1500);
    if (got) {
      const lag = arrivals[f1] - tFlip;
      lags.push(lag);
      if (lag <= 300) by300++;
    } else never++;
    if (full) {
      await sleep(Math.max(0, tFlip + 300 - Date.now()));
      if ((await pxOfLast()) !== (colour ? 0 : 255)) fullStaleAt300++;
    }
  }
  const extra = layers ? `, layerPainted by the barrier ${layerByBarrier}/${TRIALS}, a changed layer tree by the barrier ${treeByBarrier}/${TRIALS} (painted ${painted}, treeDidChange ${changed} in all, layers ${(JSON.parse(lastTree || 'null') ?? []).length})` : '';
  console.log(`${mode.padEnd(9)} at rest: 5 barriers sent frames ${afterBarriers.f}, painted ${afterBarriers.p}, treeDidChange ${afterBarriers.c}; 5 captures sent frames ${afterCaptures.f}, painted ${afterCaptures.p}, treeDidChange ${afterCaptures.c}`);
  const fullNote = full ? `, latest full frame without the flip: at the barrier ${fullStaleAtBarrier}, at +300 ms ${fullStaleAt300}` : '';
  console.log(
    `${mode.padEnd(9)} trials ${TRIALS}: event without its own frame ${ownMissing}; flip's frame by the barrier ${byBarrier}, within 300 ms ${by300}, never (1.5 s) ${never}; lag p50 ${pct(lags, 0.5)} ms max ${Math.max(...lags)} ms${extra}${fullNote}`,
  );
  if (layers) {
    type L = { layerId: string; parentLayerId?: string; backendNodeId?: number; drawsContent: boolean; width: number; height: number; transform?: number[] };
    const ls = (JSON.parse(lastTree || 'null') ?? []) as L[];
    console.log(`  layers: ${ls.map((l) => `${l.layerId}<${l.parentLayerId ?? '-'} node ${l.backendNodeId ?? '-'} ${l.drawsContent ? 'draws' : 'nodraw'} ${l.width}x${l.height}${l.transform ? ' T' : ''}`).join('; ')}`);
  }
  await counter.send('Page.stopScreencast').catch(() => {});
  await ctx.close();
}

/** The layer trees (LayerTree.layerTreeDidChange) of a few pages: which layers a plain page has. */
async function layerTrees(): Promise<void> {
  const pages: Record<string, string> = {
    plain: '<p>text</p>',
    tall: '<div style="height:3000px">tall</div>',
    canvas: '<canvas id="c" width="40" height="40"></canvas><script>c.getContext("2d").fillRect(0,0,5,5)</script>',
    input: '<input id="i" autofocus>',
    willchange: '<div style="will-change:transform;width:10px;height:10px;background:#000"></div>',
    fixed: '<div style="position:fixed;top:0;width:100%;height:20px;background:#eee">bar</div><div style="height:3000px"></div>',
    iframe: '<iframe srcdoc="<p>inner</p>"></iframe>',
    overflow: '<div style="height:100px;overflow:auto"><div style="height:1000px">scroll</div></div>',
  };
  for (const [name, body] of Object.entries(pages)) {
    const ctx = await b.newContext({ viewport: { width: W, height: H } });
    const page = await ctx.newPage();
    const cdp = await ctx.newCDPSession(page);
    let last = '[]';
    cdp.on('LayerTree.layerTreeDidChange', (e) => (last = JSON.stringify(e.layers ?? [])));
    await page.setContent(`<body style="margin:0">${body}</body>`);
    await cdp.send('LayerTree.enable');
    await cdp.send('Runtime.evaluate', { expression: BARRIER, awaitPromise: true });
    type L = { layerId: string; parentLayerId?: string; backendNodeId?: number; drawsContent: boolean; width: number; height: number };
    const ls = JSON.parse(last) as L[];
    console.log(`layers ${name}: ${ls.map((l) => `${l.layerId}<${l.parentLayerId ?? '-'} node ${l.backendNodeId ?? '-'} ${l.drawsContent ? 'draws' : 'nodraw'} ${l.width}x${l.height}`).join('; ')}`);
    await ctx.close();
  }
}

/** A 1x1 GIF alternating black and white every 230 ms, forever. */
function blinkGif(): Buffer {
  const frame = (pixel: number) => [0x21, 0xf9, 0x04, 0x00, 23, 0x00, 0x00, 0x00, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0x00, 0x02, 0x02, pixel ? 0x4c : 0x44, 0x01, 0x00];
  const head = [...Buffer.from('GIF89a'), 1, 0, 1, 0, 0xf0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff];
  const loop = [0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0'), 0x03, 0x01, 0x00, 0x00, 0x00];
  return Buffer.from([...head, ...loop, ...frame(0), ...frame(1), 0x3b]);
}

/** An animated GIF for 3 s: how many screencast frames and paint events it sends (it changes ~13 times). */
async function gifCount(): Promise<void> {
  const ctx = await b.newContext({ viewport: { width: W, height: H } });
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  let frames = 0, painted = 0, trees = 0, last = '';
  cdp.on('Page.screencastFrame', (f) => (frames++, void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {})));
  cdp.on('LayerTree.layerPainted', () => painted++);
  cdp.on('LayerTree.layerTreeDidChange', (e) => {
    const t = JSON.stringify(e.layers ?? []);
    if (t !== last) (trees++, (last = t));
  });
  await page.setContent(`<body style="margin:0;background:#fff"><img src="data:image/gif;base64,${blinkGif().toString('base64')}" style="position:absolute;left:300px;top:10px;width:1px;height:1px"></body>`);
  await cdp.send('LayerTree.enable');
  await cdp.send('Page.startScreencast', { format: 'jpeg', quality: 1, maxWidth: 8, maxHeight: 8 });
  await sleep(500);
  const f0 = frames, p0 = painted, t0 = trees;
  await sleep(3000);
  console.log(`gif       3 s (~13 GIF frames): screencast frames ${frames - f0}, layerPainted ${painted - p0}, changed layer trees ${trees - t0}`);
  await ctx.close();
}

const load = async () => (await import('node:os')).loadavg()[0].toFixed(1);
console.log(`load ${await load()}`);
for (const m of MODES) await (m === 'layers' ? layerTrees() : m === 'gif' ? gifCount() : run(m));
console.log(`load ${await load()}`);
await b.close();
