// The capture gate on its own (browser-env/capture-gate.ts): captures of one browser process run a few at a time in
// order of arrival, the limit halves on slow captures and grows back on fast ones, a capture that waited past its
// deadline leaves the queue with CaptureQueueTimeout, a timed-out capture keeps its slot until Chromium answers,
// and the capacity it reports comes from the times it measured while full. The work is a promise the test settles
// (what Chromium's Page.captureScreenshot answer is to the gate); the gate's clock is the test's.
import { describe, expect, it } from 'vitest';
import { BURST_MS, CaptureGate, CaptureQueueTimeout, MAX_LIMIT, MIN_LIMIT, START_LIMIT } from '../../browser-env/capture-gate.ts';
import { Progress, TimeoutError } from '../../sandbox/progress.ts';

/** A capture the test answers: `done()` settles it. */
function capture(): { work: () => Promise<string>; done: (v?: string) => void; started: () => boolean } {
  let ok!: (v: string) => void;
  let began = false;
  const p = new Promise<string>((r) => (ok = r));
  return {
    work: () => ((began = true), p),
    done: (v = 'shot') => ok(v),
    started: () => began,
  };
}

const tick = () => new Promise((r) => setImmediate(r));
const long = () => Progress.after(60_000, 'step');

describe('CaptureGate', () => {
  it('runs START_LIMIT captures at once without a wait, queues the next ones and serves them in order', async () => {
    let now = 0;
    const g = new CaptureGate(() => now);
    let waits = 0;
    g.onWait = () => waits++;
    const caps = Array.from({ length: START_LIMIT + 3 }, capture);
    const order: number[] = [];
    const runs = caps.map((c, i) => g.run(long(), () => 60_000, c.work).then((v) => (order.push(i), v)));
    await tick();
    expect(caps.map((c) => c.started())).toEqual(caps.map((_, i) => i < START_LIMIT));
    expect(waits).toBe(3);
    expect(g.stats()).toMatchObject({ limit: START_LIMIT, active: START_LIMIT, queued: 3 });
    // Fast answers (100 ms by the gate's clock) while others wait: each frees its slot for the next in line.
    for (let i = 0; i < caps.length; i++) {
      now += 100;
      caps[i].done();
      await tick();
      if (i + START_LIMIT < caps.length) expect(caps[i + START_LIMIT].started()).toBe(true);
    }
    expect(await Promise.all(runs)).toEqual(caps.map(() => 'shot'));
    expect(order).toEqual(caps.map((_, i) => i));
    // The first two answers came while others waited: each grew the limit by one (past START_LIMIT, up to MAX_LIMIT).
    expect(g.stats()).toMatchObject({ active: 0, queued: 0, limit: START_LIMIT + 2 });
  });

  it('grows the limit no further than MAX_LIMIT', async () => {
    let now = 0;
    const g = new CaptureGate(() => now);
    const caps = Array.from({ length: 3 * MAX_LIMIT }, capture);
    const runs = caps.map((c) => g.run(long(), () => 60_000, c.work));
    await tick();
    for (const c of caps) {
      now += 10;
      c.done();
      await tick();
      expect(g.stats().limit).toBeLessThanOrEqual(MAX_LIMIT);
    }
    await Promise.all(runs);
    expect(g.stats().limit).toBe(MAX_LIMIT);
  });

  it('halves the limit once per cohort of slow captures, never below MIN_LIMIT, and grows it back on fast ones', async () => {
    let now = 0;
    const g = new CaptureGate(() => now);
    // A cohort of 8 begun together, all slow: one cut (8 -> 4), not eight.
    const first = Array.from({ length: START_LIMIT }, capture);
    const firstRuns = first.map((c) => g.run(long(), () => 60_000, c.work));
    await tick();
    now += 1500;
    for (const c of first) c.done();
    await Promise.all(firstRuns);
    expect(g.stats().limit).toBe(START_LIMIT / 2);
    // Begun after the cut and slow again: 4 -> 2, then it stays at MIN_LIMIT.
    for (let round = 0; round < 3; round++) {
      const c = capture();
      const r = g.run(long(), () => 60_000, c.work);
      await tick();
      now += 1500;
      c.done();
      await r;
    }
    expect(g.stats().limit).toBe(MIN_LIMIT);
    // Twelve captures at limit 2: fast answers while others wait grow the limit by one each, up to MAX_LIMIT.
    const more = Array.from({ length: 12 }, capture);
    const moreRuns = more.map((c) => g.run(long(), () => 60_000, c.work));
    await tick();
    expect(more.filter((c) => c.started())).toHaveLength(MIN_LIMIT);
    now += 50;
    more[0].done();
    await tick();
    expect(g.stats().limit).toBe(MIN_LIMIT + 1);
    // The grown limit and the freed slot both went to waiters.
    expect(more.filter((c) => c.started())).toHaveLength(MIN_LIMIT + 2);
    for (const c of more) c.done();
    await Promise.all(moreRuns);
  });

  it('reports no capacity until it was full; then the captures per ms it served while full times BURST_MS, until that is stale', async () => {
    let now = 0;
    const g = new CaptureGate(() => now);
    // Never full: one capture at a time says nothing of what the process serves in parallel.
    for (let i = 0; i < 3; i++) {
      const c = capture();
      const r = g.run(long(), () => 60_000, c.work);
      now += 400;
      c.done();
      await r;
    }
    expect(g.capacity()).toBeUndefined();
    // Full (START_LIMIT in flight, two waiting): every capture took 800 ms -> START_LIMIT / 800 captures per ms.
    const caps = Array.from({ length: START_LIMIT + 2 }, capture);
    const runs = caps.map((c) => g.run(long(), () => 60_000, c.work));
    await tick();
    now += 800;
    for (const c of caps.slice(0, START_LIMIT)) c.done();
    await tick();
    now += 800;
    for (const c of caps.slice(START_LIMIT)) c.done();
    await Promise.all(runs);
    const cap = g.capacity();
    expect(cap).toBeGreaterThan(0);
    // Sampled while full: the capture that filled the gate (START_LIMIT in flight, 800 ms); the two served after it may
    // count too, with fewer in flight.
    expect(cap).toBeLessThanOrEqual(Math.floor((START_LIMIT / 800) * BURST_MS));
    expect(cap).toBeGreaterThanOrEqual(Math.floor((2 / 800) * BURST_MS));
    expect(g.stats().capacity).toBe(cap);
    now += 30_001;
    expect(g.capacity()).toBeUndefined();
  });

  it('a capture whose deadline runs out in the queue gets CaptureQueueTimeout and leaves the queue; the line moves on', async () => {
    // The gate's clock stands still: no capture is slow to it, whatever this machine's timers do.
    const g = new CaptureGate(() => 0);
    const busy = Array.from({ length: START_LIMIT }, capture);
    const busyRuns = busy.map((c) => g.run(long(), () => 60_000, c.work));
    const late = capture();
    const lateRun = g.run(Progress.after(30, 'step'), () => 60_000, late.work);
    const next = capture();
    const nextRun = g.run(long(), () => 60_000, next.work);
    const err = await lateRun.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptureQueueTimeout);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/^waiting for a screenshot turn \(1 queued on this browser\) did not finish within \d+ ms$/);
    expect(g.stats().queued).toBe(1);
    busy[0].done();
    await tick();
    expect(late.started()).toBe(false);
    expect(next.started()).toBe(true);
    for (const c of busy) c.done();
    next.done();
    await Promise.all([...busyRuns, nextRun]);
    expect(g.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('a capture that ran out of time keeps its slot until Chromium answers it (bounded by one more try)', async () => {
    const g = new CaptureGate(() => 0);
    const slow = Array.from({ length: START_LIMIT }, capture);
    const slowRuns = slow.map((c) => g.run(long(), () => 300, c.work).catch((e: unknown) => e));
    const waiting = capture();
    const waitingRun = g.run(long(), () => 60_000, waiting.work);
    for (const e of await Promise.all(slowRuns)) expect(e).toBeInstanceOf(TimeoutError);
    await tick();
    // Timed out, still held: Chromium works on them yet.
    expect(waiting.started()).toBe(false);
    expect(g.stats().active).toBe(START_LIMIT);
    // One answers late: its slot goes to the waiter.
    slow[0].done();
    await tick();
    expect(waiting.started()).toBe(true);
    expect(g.stats().active).toBe(START_LIMIT);
    // The rest never answer: their slots come back after one more try's time (300 ms).
    await new Promise((r) => setTimeout(r, 1000));
    expect(g.stats().active).toBe(1);
    waiting.done();
    await waitingRun;
    expect(g.stats()).toMatchObject({ active: 0, queued: 0 });
  });
});
