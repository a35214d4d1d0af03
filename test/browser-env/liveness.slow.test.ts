// Liveness (issue 8, points 4 and 6): every step ends within its deadline whatever the renderer does — a busy
// loop or a dialog storm that starts while the step settles ends in page_unresponsive and a recovered page —
// and a long `wait` is a wait, not a timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepBudgetMs } from '../../browser-env/step-budget.ts';
import type { Action } from '../../protocol/action.ts';
import type { StepResult } from '../../protocol/observation.ts';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

const BTN = 'position:absolute;left:10px;top:10px;width:200px;height:40px';
let fx: Fixture;
let te: TestEnv;
/** Requests for /busy-reload-hangs, and when the browser hung up on the one that never answers. */
const reloads = { asked: 0, hungUpAt: 0 };
const net = () => ({ allow: [`127.0.0.1:${fx.port}`] });

beforeAll(async () => {
  const button = (js: string) => html(`<button style="${BTN}" onclick="${js}">go</button>`, '<script>document.title = "armed"</script>');
  fx = await startFixture({
    '/ok': html(`<button style="${BTN}" onclick="document.title = 'clicked'">ok</button>`, '<script>document.title = "ok page"</script>'),
    // The loop starts 100 ms after the click: the click itself is acknowledged, the settle meets the loop.
    '/busy': button('setTimeout(() => { while (true) {} }, 100)'),
    // The same with a request in flight, so the settle is waiting on the network when the loop starts.
    '/busy-fetch': button("fetch('/slow'); setTimeout(() => { while (true) {} }, 100)"),
    '/alerts': button('setTimeout(() => { for (;;) alert(1) }, 100)'),
    '/confirms': button("setTimeout(() => { for (;;) { confirm('sure?'); prompt('name?', 'x') } }, 100)"),
    '/file': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="f.bin"' });
      res.end(Buffer.alloc(1000, 1));
    },
    '/slow': (_req, res) => {
      setTimeout(() => res.end('late'), 1500);
    },
    // A busy page whose reload (the recovery's) never answers; the load after that answers at once.
    '/busy-reload-hangs': (_req, res) => {
      const n = ++reloads.asked;
      if (n === 1 || n >= 3) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(button('setTimeout(() => { while (true) {} }, 100)'));
        return;
      }
      res.on('close', () => (reloads.hungUpAt = Date.now()));
    },
  });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

/** The step reported page_crashed with a recovered crash, and the next click works on the reopened page. */
async function expectRecovered(sb: Awaited<ReturnType<TestEnv['create']>>, r: StepResult): Promise<void> {
  expect(r.observation.last_action_error?.code).toBe('page_crashed');
  expect(r.observation.events).toContainEqual(expect.objectContaining({ type: 'crash', recovered: true }));
  const next = await sb.step([{ action: 'click', x: 100, y: 30 }], { screenshot: 'none' });
  expect(next.observation.last_action_error).toBeNull();
  expect(next.observation.title).toBe('clicked');
  await sb.close();
}

describe('a hostile renderer cannot hold a step past its deadline', () => {
  for (const path of ['/busy', '/busy-fetch', '/alerts', '/confirms']) {
    it(`${path}: the step ends in page_unresponsive and the page is recovered`, async () => {
      const sb = await te.create({ start_url: fx.url(path), network: net(), action_timeout_ms: 4000 });
      const actions: Action[] = [{ action: 'click', x: 100, y: 30 }];
      const r = await sb.step(actions, { accessibility: true, som: true });
      expect(r.observation.last_action_error?.code).toBe('page_unresponsive');
      expect(r.observation.events).toContainEqual(expect.objectContaining({ type: 'crash', recovered: true }));
      // The contract the soak also checks: the step's own deadline held.
      expect(r.observation.timings.total).toBeLessThanOrEqual(stepBudgetMs(sb.options, actions));
      expect(sb.status).toBe('ready');
      // The page was reopened on its last good URL (armed again, not looping) and answers.
      expect(r.observation.url).toBe(fx.url(path));
      expect(r.observation.title, JSON.stringify({ timings: r.observation.timings, events: r.observation.events.slice(0, 5) })).toBe('armed');
      const next = await sb.step([{ action: 'goto', url: fx.url('/ok') }, { action: 'click', x: 100, y: 30 }], { screenshot: 'none' });
      expect(next.observation.last_action_error).toBeNull();
      expect(next.observation.title).toBe('clicked');
      await sb.close();
    });
  }
});

describe('wait', () => {
  it('waits longer than the action timeout without reporting a timeout', async () => {
    // No start URL: under load a 1 s action timeout could fail the start page, which is not what this tests.
    const sb = await te.create({ network: net(), action_timeout_ms: 1000 });
    const r = await sb.step([{ action: 'wait', ms: 2500 }], { screenshot: 'none' });
    expect(r.actions[0].error).toBeNull();
    expect(r.observation.last_action_error).toBeNull();
    expect(r.actions[0].ms).toBeGreaterThanOrEqual(2500);
    await sb.close();
  });
});

describe('error codes', () => {
  it('a goto that starts a download is no error: the page stays and the download is reported', async () => {
    const sb = await te.create({ start_url: fx.url('/ok'), network: net() });
    const r = await sb.step([{ action: 'goto', url: fx.url('/file') }], { screenshot: 'none' });
    expect(r.observation.last_action_error).toBeNull();
    expect(r.observation.url).toBe(fx.url('/ok'));
    const events = r.observation.events.some((e) => e.type === 'download') ? r.observation.events : (await sb.observe({ screenshot: 'none' })).events;
    expect(events).toContainEqual(expect.objectContaining({ type: 'download', filename: 'f.bin', size: 1000 }));
    await sb.close();
  });

  it('a browser killed mid-step is page_crashed (not page_unresponsive), and the sandbox recovers', async () => {
    const sb = await te.create({ start_url: fx.url('/ok'), network: net() });
    const pid = (sb as unknown as { pooled: { browserPid: number } }).pooled.browserPid;
    const stepping = sb.step([{ action: 'wait', ms: 1500 }, { action: 'click', x: 100, y: 30 }], { screenshot: 'none' });
    await new Promise((r) => setTimeout(r, 300));
    process.kill(pid, 'SIGKILL');
    const r = await stepping;
    await expectRecovered(sb, r);
  });

  it("a context lost while it was being replaced (the soak's step 500s) is replaced at the next step, never a 500", async () => {
    const sb = await te.create({ start_url: fx.url('/ok'), network: net() });
    // The state the soak found after a browser kill: the old context closed during a replacement (so its close
    // was not noted), the active page closed with it, no tab left.
    const state = (sb as unknown as { s: { replacingContext: boolean; pooled: { release(): Promise<void> } } }).s;
    state.replacingContext = true;
    await state.pooled.release();
    state.replacingContext = false;
    const r = await sb.step([{ action: 'click', x: 100, y: 30 }], { screenshot: 'none' });
    await expectRecovered(sb, r);
  });
});

describe("the recovery's reload of the last good URL", () => {
  const reset = () => Object.assign(reloads, { asked: 0, hungUpAt: 0 });

  it('is stopped when the sandbox closes: the step answers sandbox_closed at once and the request is dropped', async () => {
    reset();
    const sb = await te.create({ start_url: fx.url('/busy-reload-hangs'), network: net(), action_timeout_ms: 4000 });
    const stepping = sb.step([{ action: 'click', x: 100, y: 30 }], { screenshot: 'none' }).then(
      () => ({ code: 'answered' as string | undefined, at: Date.now() }),
      (e: unknown) => ({ code: (e as { code?: string }).code, at: Date.now() }),
    );
    // The busy page was found hung and reopened: its reload is the second request, which never answers.
    const end = Date.now() + 60_000;
    while (reloads.asked < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(reloads.asked).toBe(2);
    const closing = Date.now();
    await sb.close();
    const out = await stepping;
    expect(out.code).toBe('sandbox_closed');
    expect(out.at - closing).toBeLessThan(5000);
    expect(reloads.hungUpAt).toBeGreaterThan(0);
    // Nothing reopened it afterwards (no recovery ran on in a closed sandbox).
    await new Promise((r) => setTimeout(r, 500));
    expect(reloads.asked).toBe(2);
  });

  it('out of time is handed on, not left: the next step finds the page never got there and loads it again', async () => {
    reset();
    const sb = await te.create({ start_url: fx.url('/busy-reload-hangs'), network: net(), action_timeout_ms: 4000 });
    const actions: Action[] = [{ action: 'click', x: 100, y: 30 }];
    const r = await sb.step(actions, { screenshot: 'none' });
    expect(r.observation.last_action_error?.code).toBe('page_unresponsive');
    expect(r.observation.timings.total).toBeLessThanOrEqual(stepBudgetMs(sb.options, actions));
    // The reload ran out of the step's time (its request never answers).
    expect(reloads.asked).toBe(2);
    const next = await sb.observe({ screenshot: 'none' });
    expect(reloads.asked).toBe(3);
    expect(next.url).toBe(fx.url('/busy-reload-hangs'));
    expect(next.title).toBe('armed');
    await sb.close();
  });
});
