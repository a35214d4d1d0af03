// The capture gate's turn (browser-env/capture-gate.ts) with real Chromium: once a capture's turn has come it has
// the rest of its step's deadline while its page answers — on a loaded browser a responsive page's capture can take
// longer than any fixed try (it had 5 s: captures past that were cut, started again behind the queue and missed) —
// and a page that stops answering meanwhile gets an explicit error, never an observation silently without its
// screenshot. The captures are made slow by what they capture: large HiDPI pages of noise, several at once through
// one browser process's gate, on a machine whose cores they share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepBudgetMs } from '../../browser-env/step-budget.ts';
import type { Action } from '../../protocol/action.ts';
import type { StepResult } from '../../protocol/observation.ts';
import { html, openEnv, startFixture, type Fixture, type TestEnv } from './support.ts';

/** Sandboxes whose large captures queue through one gate at once. */
const HEAVY = 6;
/** The fixed try a capture had after its turn before (ms): the test needs captures longer than it. */
const OLD_TRY_MS = 5000;
const BIG = { viewport: { width: 3840, height: 2160 }, device_scale_factor: 2 } as const;

let fx: Fixture;
let te: TestEnv;
const net = () => ({ allow: [`127.0.0.1:${fx.port}`] });

// A canvas of noise over the whole viewport at the device's resolution: every capture encodes ~33 M pixels that do
// not compress. A click changes its filter (no work for the page's thread, a new frame for the compositor), so each
// step's capture is new work while the page stays responsive.
const noise = `<canvas id="c" style="position:fixed;inset:0;width:100vw;height:100vh"></canvas><script>
const c = document.getElementById('c');
c.width = innerWidth * devicePixelRatio; c.height = innerHeight * devicePixelRatio;
const g = c.getContext('2d');
function paint() {
  const img = g.createImageData(c.width, c.height);
  const u = new Uint32Array(img.data.buffer);
  let x = (Math.random() * 4294967296) >>> 0;
  for (let i = 0; i < u.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; u[i] = x | 0xff000000; }
  g.putImageData(img, 0, 0);
}
paint();
let n = 0;
// Cheap for the page, costly for the capture: the compositor filters the whole canvas again.
addEventListener('click', () => { n++; c.style.filter = 'hue-rotate(' + n * 37 + 'deg)'; document.title = 'painted ' + n; });
document.title = 'painted 0';
</script>`;

beforeAll(async () => {
  fx = await startFixture({
    '/noise': html(noise),
    // Busy from 50 ms after the click: the step's action is done (no settle) and its capture runs beside the large ones.
    '/busy': html(`<button style="position:absolute;left:10px;top:10px;width:200px;height:40px" onclick="setTimeout(() => { for (;;) {} }, 50)">go</button>`, '<script>document.title = "armed"</script>'),
  });
  te = await openEnv();
});

afterAll(async () => {
  await te?.close();
  await fx?.close();
});

describe('a capture in its turn', () => {
  it('of a responsive page gets the rest of the step deadline; of a page that stops answering, an explicit error', async () => {
    const heavy = await Promise.all(Array.from({ length: HEAVY }, () => te.create({ start_url: fx.url('/noise'), network: net(), settle: false, ...BIG })));
    const busy = await te.create({ start_url: fx.url('/busy'), network: net(), settle: false });
    // One look first: the page's CDP session exists before it hangs (attaching one to a hung renderer waits on it).
    expect((await busy.step([{ action: 'wait', ms: 100 }])).observation.screenshot).toBeDefined();
    const click: Action[] = [{ action: 'click', x: 100, y: 30 }];
    const t0 = Date.now();
    const [rs, rb] = await Promise.all([Promise.all(heavy.map((sb) => sb.step(click))), busy.step(click)]);
    const wall = Date.now() - t0;
    const show = (r: StepResult) => ({ err: r.observation.last_action_error, timings: r.observation.timings, shot: !!r.observation.screenshot });
    console.log(`capture turn: ${HEAVY} large captures + 1 busy page in ${wall} ms; heavy capture ms ${rs.map((r) => r.observation.timings.capture).join(', ')}; busy: ${JSON.stringify(show(rb))}`);

    // Every responsive page's step has its screenshot and no error, within its deadline.
    for (const [i, r] of rs.entries()) {
      expect(r.observation.last_action_error, JSON.stringify(show(r))).toBeNull();
      expect(r.observation.screenshot?.width).toBe(BIG.viewport.width * BIG.device_scale_factor);
      expect(r.observation.timings.total).toBeLessThanOrEqual(stepBudgetMs(heavy[i].options, click));
    }
    // And some took longer than the fixed try of old (the test's captures are as slow as it needs).
    expect(Math.max(...rs.map((r) => r.observation.timings.capture))).toBeGreaterThan(OLD_TRY_MS);

    // The busy page: an explicit error (its page reopened) or its screenshot; never neither.
    const e = rb.observation.last_action_error;
    expect(e !== null || rb.observation.screenshot !== undefined, JSON.stringify(show(rb))).toBe(true);
    if (e) expect(['page_unresponsive', 'capture_timeout']).toContain(e.code);
    expect(rb.observation.timings.total).toBeLessThanOrEqual(stepBudgetMs(busy.options, click));
    await Promise.all([...heavy, busy].map((sb) => sb.close()));
  }, 300_000);
});
