// WebRTC cannot bypass the network gate (issue 8, point 2): a page's STUN/TURN/ICE traffic is UDP, which the
// HTTP proxy never sees. A real UDP listener on loopback must receive nothing from a sandbox, under any network
// rules, while the same page in a plain Chromium (the control) reaches it.
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

let udp: Socket;
let udpPort: number;
let datagrams: { from: string; bytes: number }[] = [];
let fx: Fixture;
let te: TestEnv;

/** In the page: gather ICE with STUN/TURN servers on the listener, and probe it as a remote host candidate. */
const rtcScript = (port: number) => `
  (async () => {
    const servers = [{ urls: 'stun:127.0.0.1:${port}' }, { urls: 'turn:127.0.0.1:${port}?transport=udp', username: 'u', credential: 'p' }];
    const a = new RTCPeerConnection({ iceServers: servers });
    const b = new RTCPeerConnection();
    a.createDataChannel('x');
    const cands = [];
    a.onicecandidate = (e) => { if (e.candidate) cands.push(e.candidate.candidate); };
    await a.setLocalDescription(await a.createOffer());
    await b.setRemoteDescription(a.localDescription);
    await b.setLocalDescription(await b.createAnswer());
    await a.setRemoteDescription(b.localDescription);
    await a.addIceCandidate({ candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 ${port} typ host', sdpMid: '0', sdpMLineIndex: 0 }).catch(() => {});
    await new Promise((r) => setTimeout(r, 2500));
    document.title = 'rtc done ' + cands.length;
  })().catch((e) => { document.title = 'rtc error ' + e.message; });
`;

beforeAll(async () => {
  udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => datagrams.push({ from: `${rinfo.address}:${rinfo.port}`, bytes: msg.length }));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  udpPort = (udp.address() as AddressInfo).port;
  fx = await startFixture({ '/rtc': html('<p>rtc</p>', `<script>${rtcScript(udpPort)}</script>`) });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
  udp?.close();
});

async function waitTitle(get: () => Promise<string>): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const t = await get();
    if (t.startsWith('rtc ')) return t;
    await new Promise((r) => setTimeout(r, 100));
  }
  return get();
}

describe('WebRTC and UDP', () => {
  it('control: the same page in a plain Chromium sends UDP to the listener', async () => {
    datagrams = [];
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      await page.goto(fx.url('/rtc'));
      expect(await waitTitle(() => page.title())).toMatch(/^rtc done/);
    } finally {
      await browser.close();
    }
    expect(datagrams.length).toBeGreaterThan(0);
  });

  for (const [name, network] of [
    ['allowed host', () => ({ allow: [`127.0.0.1:${fx.port}`, `127.0.0.1:${udpPort}`] })],
    ['block_network (data: page)', () => ({ block_network: true })],
  ] as const) {
    it(`a sandbox sends no UDP at all (${name})`, async () => {
      datagrams = [];
      const sb = await te.create({ network: network() });
      const url = name.startsWith('block') ? `data:text/html,${encodeURIComponent(html('<p>rtc</p>', `<script>${rtcScript(udpPort)}</script>`))}` : fx.url('/rtc');
      await sb.step([{ action: 'goto', url }], { screenshot: 'none' });
      let title = '';
      for (let i = 0; i < 60 && !title.startsWith('rtc '); i++) {
        title = (await sb.step([{ action: 'wait', ms: 100 }], { screenshot: 'none' })).observation.title;
      }
      expect(title).toMatch(/^rtc (done|error)/);
      // Some extra time for late retransmissions, then: nothing arrived.
      await new Promise((r) => setTimeout(r, 500));
      expect(datagrams).toEqual([]);
      await sb.close();
    });
  }
});
