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
/** A page that never answers: when its request arrived and when the browser hung up on it. */
const hang = { asked: 0, closedAt: 0 };
const ANSWER_AFTER_MS = 4000;

beforeAll(async () => {
  fx = await startFixture({
    '/start': html('<p>start</p>'),
    '/hang': (_req: IncomingMessage, res: ServerResponse) => {
      hang.asked = Date.now();
      res.on('close', () => (hang.closedAt = Date.now()));
    },
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
    // The action gave up at its deadline: a timeout, or — on a loaded machine, when the liveness probe after it also
    // misses — page_unresponsive (seen in CI at load ~15). What this test is about follows: the request is dropped.
    expect(r.observation.last_action_error?.code).toMatch(/timeout|page_unresponsive/);
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

/** Resolves once `check` holds (polled), failing after `ms`. */
async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('closing a sandbox stops the step running in it', () => {
  it('a goto in flight is stopped and the step answers sandbox_closed, not a result from a closed context', async () => {
    const sb = await te.create({ start_url: fx.url('/start'), network: { allow: [`127.0.0.1:${fx.port}`] }, action_timeout_ms: 20_000 });
    const stepping = sb.step([{ action: 'goto', url: fx.url('/hang') }]).then(
      (r) => ({ result: r }),
      (e: unknown) => ({ error: e as { code?: string; status?: number }, at: Date.now() }),
    );
    await until(() => hang.asked > 0, 10_000);
    const closing = Date.now();
    await sb.close();
    const out = await stepping;
    expect('error' in out ? { code: out.error.code, status: out.error.status } : out).toEqual({ code: 'sandbox_closed', status: 410 });
    // Stopped with the close, not at the action's 20 s timeout; the browser hung up on the request.
    expect('at' in out && out.at - closing).toBeLessThan(5000);
    expect(hang.closedAt).toBeGreaterThan(0);
    expect(sb.status).toBe('closed');
  });

  it('an episode reset in flight (its start URL loading) stops too; no context outlives the sandbox', async () => {
    const open = () => te.env.stats().contexts_open;
    const before = open();
    const sb = await te.create({ start_url: fx.url('/start'), network: { allow: [`127.0.0.1:${fx.port}`] }, action_timeout_ms: 20_000 });
    hang.asked = 0;
    const resetting = sb.reset({ start_url: fx.url('/hang') }).then(
      () => ({ code: 'reset' as string | undefined, at: Date.now() }),
      (e: unknown) => ({ code: (e as { code?: string }).code, at: Date.now() }),
    );
    await until(() => hang.asked > 0, 10_000);
    const closing = Date.now();
    await sb.close();
    const out = await resetting;
    expect(out.code).toBe('sandbox_closed');
    expect(out.at - closing).toBeLessThan(5000);
    expect(open()).toBe(before);
  });

  it('a long wait ends with the close', async () => {
    const sb = await te.create({ network: { allow: [`127.0.0.1:${fx.port}`] } });
    const t0 = Date.now();
    const stepping = sb.step([{ action: 'wait', ms: 20_000 }]).catch((e: unknown) => e as { code?: string });
    await new Promise((r) => setTimeout(r, 300));
    await sb.close();
    expect((await stepping as { code?: string }).code).toBe('sandbox_closed');
    expect(Date.now() - t0).toBeLessThan(6000);
  });
});

describe("a step's deadline lets go when the step ends", () => {
  it("back-to-back steps and observations leave no listener on the sandbox's life signal", async () => {
    const { getEventListeners } = (await import('node:events')).EventEmitter;
    const sb = await te.create({ start_url: fx.url('/start'), network: { allow: [`127.0.0.1:${fx.port}`] } });
    const life = (sb as unknown as { s: { lifeSignal: AbortSignal } }).s.lifeSignal;
    const base = getEventListeners(life, 'abort').length;
    for (let i = 0; i < 15; i++) {
      await sb.step([{ action: 'scroll', x: 10, y: 10, dy: 100, space: 'css_px' }], { screenshot: 'none' });
      await sb.observe({ screenshot: 'none' });
    }
    // Before, each step's and observation's deadline stayed attached until its own deadline (a minute or more).
    expect(getEventListeners(life, 'abort').length).toBe(base);
    await sb.close();
  });
});
