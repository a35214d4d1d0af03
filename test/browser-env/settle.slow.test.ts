// Settle by causality on real Chromium: what the action caused is waited for (timers, promise chains,
// MessageChannel, animation frames, fetch/XHR, WebSocket replies, navigations, out-of-process iframes),
// what was running before it (intervals, animation loops, polls, socket pushes) is not, and the observation
// says what the settle waited for and why it stopped.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

const BTN = 'position:absolute;left:10px;top:10px;width:200px;height:40px';
const button = (onclick: string) => `<button style="${BTN}" onclick="${onclick}">go</button>`;
const page = (onclick: string, script = '') => html(`${button(onclick)}<script>${script}</script>`);

/** Answers every WebSocket text message with `echo:<text>` after 300 ms, and pushes `tick` every 50 ms. */
function acceptWebSocket(req: IncomingMessage, socket: Duplex): void {
  const key = req.headers['sec-websocket-key'] as string;
  const accept = createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  const send = (text: string) => {
    const body = Buffer.from(text);
    socket.write(Buffer.concat([Buffer.from([0x81, body.length]), body]));
  };
  const ticker = setInterval(() => send('tick'), 50);
  socket.on('close', () => clearInterval(ticker));
  socket.on('error', () => clearInterval(ticker));
  socket.on('data', (buf: Buffer) => {
    // Client frames are masked; short text frames only (what the fixture page sends).
    if ((buf[0] & 0x0f) === 0x8) return socket.end();
    const len = buf[1] & 0x7f;
    const mask = buf.subarray(2, 6);
    const text = Buffer.from(buf.subarray(6, 6 + len).map((b, i) => b ^ mask[i % 4])).toString();
    setTimeout(() => send(`echo:${text}`), 300);
  });
}

let fx: Fixture;
let te: TestEnv;
const net = () => ({ allow: [`127.0.0.1:${fx.port}`, `localhost:${fx.port}`] });

beforeAll(async () => {
  const later = (ms: number, body: string) => (_req: IncomingMessage, res: import('node:http').ServerResponse) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(body);
    }, ms);
  };
  fx = await startFixture({
    '/slow': later(300, 'fetched'),
    '/poll': later(10, 'p'),
    // The click sets the title and asks an interval that was running before it (ambient) to set another later.
    '/ambient-title': page(`document.title = 'clicked'; window.next = 'by interval'`, `setInterval(() => { if (window.next) document.title = window.next; }, 100)`),
    '/busy': page(
      `document.title = 'final'`,
      `let n = 0; setInterval(() => { document.body.dataset.n = String(++n); }, 50);
       setInterval(() => { fetch('/poll').then((r) => r.text()).then((t) => { document.body.dataset.p = t + n; }); }, 200);
       (function spin() { document.body.dataset.f = String(performance.now()); requestAnimationFrame(spin); })();`,
    ),
    '/chain': page(
      `setTimeout(async () => { const t = await (await fetch('/slow')).text(); setTimeout(() => { document.title = t + ' chained'; }, 100); }, 100)`,
    ),
    '/channel': page(
      `const ch = new MessageChannel(); ch.port1.onmessage = () => setTimeout(() => { document.title = 'via channel'; }, 200); ch.port2.postMessage(1)`,
    ),
    '/raf-loop': page(
      `want = true`,
      `var want = false; (function loop() { if (want) { document.title = 'applied by loop'; want = false; } requestAnimationFrame(loop); })();`,
    ),
    '/raf-anim': page(`let k = 0; (function step() { if (++k < 20) requestAnimationFrame(step); else document.title = 'animated ' + k; })()`),
    '/raf-forever': page(`(function spin() { document.body.dataset.t = String(performance.now()); requestAnimationFrame(spin); })()`),
    '/xhr': page(`const x = new XMLHttpRequest(); x.open('GET', '/slow'); x.onload = () => { setTimeout(() => { document.title = 'xhr ' + x.responseText; }, 50); }; x.send()`),
    '/ws': page(
      `ws.send('hello')`,
      `var ws = new WebSocket('ws://' + location.host + '/socket'); var ticks = 0; ws.onmessage = (e) => { if (e.data !== 'tick') document.title = e.data; else if (++ticks === 3) document.title = 'ticking'; };`,
    ),
    '/nav': page(`location.href = '/landing'`),
    '/landing': (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html('<p>landed</p>', `<script>setTimeout(() => { document.title = 'landed'; }, 100)</script>`));
      }, 200);
    },
    // One popup the browser refuses (a local URL: window.open returns null), one it opens without an opener (null too).
    '/popups': html(
      `<button style="${BTN}" onclick="window.open('file:///etc/hostname')">refused</button>` +
        `<button style="position:absolute;left:10px;top:100px;width:200px;height:40px" onclick="window.open('/landing', '_blank', 'noopener')">noopener</button>`,
    ),
    '/opener': html(`<a href="/landing" target="_blank" style="${BTN};display:block">open</a>`),
    '/outer': (req, res) => {
      // The child document on another site (localhost vs 127.0.0.1): Chromium puts it in its own process.
      const port = fx.port;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html(`<iframe src="http://localhost:${port}/inner" style="position:absolute;left:0;top:100px;width:400px;height:200px;border:0"></iframe>`));
      void req;
    },
    '/inner': page(`setTimeout(() => { document.body.dataset.state = 'late'; }, 300)`, `document.body.dataset.state = 'early'`),
  });
  fx.server.on('upgrade', (req: IncomingMessage, socket: Duplex) => acceptWebSocket(req, socket));
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

const click = (x = 100, y = 30) => [{ action: 'click' as const, x, y }];

describe('settle by causality', () => {
  it('does not wait for ambient work on a busy page (interval ticker, poll, animation loop)', async () => {
    const sb = await te.create({ start_url: fx.url('/busy'), network: net() });
    for (let i = 0; i < 3; i++) {
      const r = await sb.step(click(), { screenshot: 'none' });
      expect(r.observation.title).toBe('final');
      expect(r.observation.settle?.stopped).toBe('caused_done');
      expect(r.observation.settle?.waited_for).toEqual({});
    }
    await sb.close();
  });

  it("reports the title as the observation is taken, not as an earlier action's settle read it", async () => {
    const sb = await te.create({ start_url: fx.url('/ambient-title'), network: net() });
    // The click's settle ends at once (the interval is ambient); during the wait the interval changes the title.
    const r = await sb.step([...click(), { action: 'wait', ms: 400 }], { screenshot: 'none' });
    expect(r.actions.map((a) => a.error)).toEqual([null, null]);
    expect(r.observation.title).toBe('by interval');
    await sb.close();
  });

  it('follows a chain: timer → fetch → body → timer', async () => {
    const sb = await te.create({ start_url: fx.url('/chain'), network: net() });
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.title).toBe('fetched chained');
    expect(r.observation.settle?.stopped).toBe('caused_done');
    expect(r.observation.settle?.waited_for).toMatchObject({ timer: 2, fetch: 2 });
    await sb.close();
  });

  it('follows MessageChannel tasks (React scheduler style)', async () => {
    const sb = await te.create({ start_url: fx.url('/channel'), network: net() });
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.title).toBe('via channel');
    expect(r.observation.settle?.waited_for).toMatchObject({ message: 1, timer: 1 });
    await sb.close();
  });

  it('observes an effect that an already-running animation-frame loop applies', async () => {
    const sb = await te.create({ start_url: fx.url('/raf-loop'), network: net() });
    for (let i = 0; i < 5; i++) {
      const r = await sb.step(click(), { screenshot: 'none' });
      expect(r.observation.title).toBe('applied by loop');
      expect(r.observation.settle?.stopped).toBe('caused_done');
      await sb.step([{ action: 'reload' }], { screenshot: 'none' });
    }
    await sb.close();
  });

  it('waits for an animation-frame chain the click started, and caps one that never ends', async () => {
    const sb = await te.create({ start_url: fx.url('/raf-anim'), network: net() });
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.title).toBe('animated 20');
    expect(r.observation.settle?.waited_for['animation frame']).toBeGreaterThanOrEqual(19);
    await sb.close();
    const forever = await te.create({ start_url: fx.url('/raf-forever'), network: net(), settle_max_ms: 400 });
    const f = await forever.step(click(), { screenshot: 'none' });
    expect(f.observation.settle?.stopped).toBe('cap');
    expect(f.observation.last_action_error).toBeNull();
    await forever.close();
  });

  it('follows XHR into its load handler', async () => {
    const sb = await te.create({ start_url: fx.url('/xhr'), network: net() });
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.title).toBe('xhr fetched');
    expect(r.observation.settle?.waited_for).toMatchObject({ xhr: 1, timer: 1 });
    await sb.close();
  });

  it('waits for the WebSocket reply to a message the click sent, not for the socket pushes', async () => {
    const sb = await te.create({ start_url: fx.url('/ws'), network: net() });
    // The pushes seen before the click are what tells a reply from a push.
    while ((await sb.pageState()).title !== 'ticking') await new Promise((r) => setTimeout(r, 20));
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.title).toBe('echo:hello');
    expect(r.observation.settle).toMatchObject({ stopped: 'caused_done', waited_for: { 'websocket reply': 1 } });
    // Pushes alone: a click that sends nothing waits for none of them.
    const again = await sb.step([{ action: 'click', x: 600, y: 600 }], { screenshot: 'none' });
    expect(again.observation.settle?.stopped).toBe('caused_done');
    expect(again.observation.settle?.waited_for).toEqual({});
    await sb.close();
  });

  it('follows a navigation into the new document and its own load-time work', async () => {
    const sb = await te.create({ start_url: fx.url('/nav'), network: net() });
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.title).toBe('landed');
    expect(r.observation.settle?.stopped).toBe('navigation');
    expect(r.observation.settle?.waited_for).toMatchObject({ navigation: 1, 'document load': 1, timer: 1 });
    await sb.close();
  });

  it('follows a tab the click opened into its load', async () => {
    const sb = await te.create({ start_url: fx.url('/opener'), network: net() });
    const r = await sb.step(click(), { screenshot: 'none' });
    expect(r.observation.url).toBe(fx.url('/landing'));
    expect(r.observation.title).toBe('landed');
    expect(r.observation.settle?.waited_for).toMatchObject({ 'new tab': 1, 'document load': 1 });
    await sb.close();
  });

  it('waits for a tab only when the page got one: a refused window.open is not a popup, a noopener one is', async () => {
    const sb = await te.create({ start_url: fx.url('/popups'), network: net() });
    // When the page last opened a tab, as the settle's page script saw it (0: never).
    const popupAt = (pg: Page) => pg.evaluate('window.__grove.settle(0, 0, 0).then((a) => a.popupAt)');
    const refused = await sb.step(click(), { screenshot: 'none' });
    expect(refused.observation.last_action_error).toBeNull();
    expect(refused.observation.tabs).toHaveLength(1);
    expect(await popupAt((sb as unknown as { page: Page }).page)).toBe(0);
    const opened = await sb.step(click(100, 120), { screenshot: 'none' });
    expect(await popupAt((sb as unknown as { tabs: Page[] }).tabs[0])).toBeGreaterThan(0);
    expect(opened.observation.url).toBe(fx.url('/landing'));
    expect(opened.observation.title).toBe('landed');
    expect(opened.observation.settle?.waited_for).toMatchObject({ 'new tab': 1 });
    await sb.close();
  });

  it('waits for work a click caused inside an out-of-process iframe', async () => {
    const sb = await te.create({ network: net() });
    // With a screenshot: the browser routes a click into an out-of-process frame by what it has composited, and a
    // frame not drawn yet would leave the click to the outer page (seen once under load).
    await sb.step([{ action: 'goto', url: fx.url('/outer') }]);
    const inner = () => (sb as unknown as { page: Page }).page.frames().find((f) => f.url().includes('/inner'));
    expect(inner()).toBeDefined();
    const r = await sb.step(click(100, 130), { screenshot: 'none' });
    expect(await inner()!.evaluate(() => document.body.dataset.state)).toBe('late');
    expect(r.observation.settle?.waited_for).toMatchObject({ 'frame timer': 1 });
    await sb.close();
  });
});
