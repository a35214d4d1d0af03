// An action that runs out of time is cancelled, not abandoned (sandbox/progress.ts): a navigation the step gave up
// on is stopped in the browser. Before, Playwright's timeout only ended the wait: Chromium kept the request open and
// committed the late answer under the next step (the page changed with no action).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

let fx: Fixture;
let te: TestEnv;
/** The slow page: when its request arrived, whether the browser hung up on it, and whether it was answered. */
const slow = { asked: 0, closedAt: 0, answered: false };
const ANSWER_AFTER_MS = 4000;

beforeAll(async () => {
  fx = await startFixture({
    '/start': html('<p>start</p>'),
    // Answers only after ANSWER_AFTER_MS, long past the 1 s action timeout below.
    '/slow': (req: IncomingMessage, res: ServerResponse) => {
      slow.asked = Date.now();
      const timer = setTimeout(() => {
        slow.answered = true;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<title>late</title><p>late</p>');
      }, ANSWER_AFTER_MS);
      res.on('close', () => {
        clearTimeout(timer);
        if (!slow.answered) slow.closedAt = Date.now();
      });
    },
  });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

describe('a timed-out action is cancelled', () => {
  it('a goto past its deadline is stopped: its request is dropped and the late answer never commits', async () => {
    const net = { allow: [`127.0.0.1:${fx.port}`] };
    const sb = await te.create({ start_url: fx.url('/start'), network: net, action_timeout_ms: 1000 });
    const r = await sb.step([{ action: 'goto', url: fx.url('/slow') }], { screenshot: 'none' });
    expect(r.observation.last_action_error?.code).toMatch(/timeout/);
    expect(slow.asked).toBeGreaterThan(0);
    // The browser hung up on the request as the action gave up (not after the server's answer).
    await new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_MS + 1000));
    expect(slow.answered).toBe(false);
    expect(slow.closedAt).toBeGreaterThan(0);
    expect(slow.closedAt - slow.asked).toBeLessThan(ANSWER_AFTER_MS);
    // Nothing committed afterwards: the page is still the start page.
    const later = await sb.observe({ screenshot: 'none' });
    expect(later.url).toBe(fx.url('/start'));
    expect(later.title).not.toBe('late');
    await sb.close();
  });
});
