// HAR record → stop the server → replay offline: the page comes back identical, and a request the HAR does not
// hold is aborted rather than reaching the network.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { harRecordOptions, replayFromHar, summariseHar } from '../../recording/har.ts';

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

let browser: Browser;
let dir: string;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
  dir = await mkdtemp(join(tmpdir(), 'grove-har-'));
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A site whose every response differs per request, so a replay can be told apart from a live fetch. */
function startSite(): Promise<{ server: Server; base: string; hits: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    n++;
    if (req.url === '/data.json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ served: n, at: process.hrtime.bigint().toString() }));
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><title>live ${n}</title><h1 id="h">request ${n}</h1><p id="d">loading</p>
<script>fetch('/data.json').then(r => r.json()).then(j => { document.getElementById('d').textContent = 'data ' + j.served + ' ' + j.at; });</script>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => n })));
}

describe('HAR record and replay', () => {
  it('replays a recorded page offline with the same content', async () => {
    const site = await startSite();
    const har = join(dir, 'network.har');
    const rec = await browser.newContext(harRecordOptions(har));
    const page = await rec.newPage();
    await page.goto(`${site.base}/`);
    await page.waitForFunction(() => document.getElementById('d')?.textContent?.startsWith('data '));
    const live = { h: await page.textContent('#h'), d: await page.textContent('#d'), title: await page.title() };
    await rec.close(); // writes the HAR
    await new Promise<void>((r) => site.server.close(() => r()));
    const hitsAfterRecording = site.hits();

    const summary = await summariseHar(har);
    expect(summary.urls).toEqual([`${site.base}/`, `${site.base}/data.json`]);
    expect(summary.statuses['2xx']).toBe(2);

    const replay = await browser.newContext();
    await replayFromHar(replay, har);
    const p2 = await replay.newPage();
    await p2.goto(`${site.base}/`);
    await p2.waitForFunction(() => document.getElementById('d')?.textContent?.startsWith('data '));
    expect({ h: await p2.textContent('#h'), d: await p2.textContent('#d'), title: await p2.title() }).toEqual(live);
    // A URL that was never recorded is aborted (the server is down either way, but the HAR must not fall through).
    const missing = await p2.evaluate(() => fetch('/not-recorded').then(() => 'ok', (e) => `failed: ${e.name}`));
    expect(missing).toMatch(/^failed/);
    expect(site.hits()).toBe(hitsAfterRecording);
    await replay.close();
  });
});
