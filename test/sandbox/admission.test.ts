// Admission control on its own measurements (sandbox/admission.ts): creates are refused with 503 overloaded and a
// Retry-After while the measured pressure is past its limits or the start queue is full, and admitted again once
// the window has drained; starts beyond the start limit wait for a slot in order; the start limit is learned from
// start latency against the start deadline.
import { describe, expect, it } from 'vitest';
import { GroveError } from '../../protocol/errors.ts';
import { Admission } from '../../sandbox/admission.ts';

const refusal = (f: () => void): GroveError | null => {
  try {
    f();
    return null;
  } catch (e) {
    return e as GroveError;
  }
};

describe('Admission', () => {
  it('refuses on slow captures, slow steps and a late event loop, above its floor only, until the window drains', () => {
    let now = 0;
    const a = new Admission({ maxStarting: 2, windowMs: 10_000, now: () => now });
    expect(refusal(() => a.admit(5))).toBeNull();
    for (let i = 0; i < 10; i++) a.observeStep(2000, 60_000, 3000);
    const e = refusal(() => a.admit(2));
    expect(e).toBeInstanceOf(GroveError);
    expect(e).toMatchObject({ code: 'overloaded', status: 503 });
    expect(e?.message).toMatch(/screenshot captures take 3000 ms \(p90; limit 2500 ms\)/);
    expect(e?.retryAfter).toBeGreaterThanOrEqual(1);
    // Below the floor the server always runs a few sandboxes.
    expect(refusal(() => a.admit(1))).toBeNull();
    now += 10_001;
    expect(refusal(() => a.admit(2))).toBeNull();
    for (let i = 0; i < 10; i++) a.observeStep(40_000, 60_000, 100);
    expect(refusal(() => a.admit(2))?.message).toMatch(/steps use 67 % of their deadline/);
    now += 10_001;
    for (let i = 0; i < 10; i++) a.observeLoopLag(i < 8 ? 900 : 0);
    expect(refusal(() => a.admit(2))?.message).toMatch(/event loop runs 900 ms late/);
    // One stall among many punctual ticks is not a state.
    now += 10_001;
    for (let i = 0; i < 20; i++) a.observeLoopLag(i === 0 ? 5000 : 1);
    expect(refusal(() => a.admit(2))).toBeNull();
    expect(a.pressure()).toMatchObject({ loopLagMax: 5000, overloaded: null });
  });

  it('starts maxStarting at once, queues the next ones in order, and refuses beyond the queue', async () => {
    const a = new Admission({ maxStarting: 2, startQueue: 1 });
    const r1 = await a.startSlot();
    const r2 = await a.startSlot();
    const order: string[] = [];
    const third = a.startSlot().then((r) => (order.push('third'), r));
    expect(a.pressure()).toMatchObject({ starting: 2, queued: 1 });
    const full = refusal(() => a.admit(3));
    expect(full).toMatchObject({ code: 'overloaded' });
    expect(full?.message).toMatch(/2 sandboxes are starting and 1 are waiting to start/);
    expect(full?.retryAfter).toBeGreaterThanOrEqual(1);
    r1();
    r1(); // a second release is a no-op
    const r3 = await third;
    expect(order).toEqual(['third']);
    expect(a.pressure()).toMatchObject({ starting: 2, queued: 0 });
    expect(refusal(() => a.admit(3))).toBeNull();
    r2();
    r3();
    expect(a.pressure()).toMatchObject({ starting: 0, queued: 0 });
  });
});

describe('Admission: capacity learned from capture misses', () => {
  it('after a miss at N sandboxes carries at most 3/4 N (never fewer than maxStarting) until a window passes without one', () => {
    let now = 0;
    const a = new Admission({ maxStarting: 2, windowMs: 10_000, now: () => now });
    expect(a.capacity()).toBe(Infinity);
    a.observeCaptureMiss(16);
    expect(a.capacity()).toBe(12);
    expect(refusal(() => a.admit(11))).toBeNull();
    const e = refusal(() => a.admit(12));
    expect(e).toMatchObject({ code: 'overloaded', status: 503 });
    expect(e?.message).toMatch(/a screenshot missed its deadline recently, so it carries 12 sandboxes/);
    // Another miss lowers it further, never below maxStarting.
    a.observeCaptureMiss(12);
    expect(a.capacity()).toBe(9);
    a.observeCaptureMiss(1);
    expect(a.capacity()).toBe(2);
    now += 9_999;
    expect(a.capacity()).toBe(2);
    now += 1;
    expect(a.capacity()).toBe(Infinity);
    expect(refusal(() => a.admit(40))).toBeNull();
  });

  it('refuses a queued start whose turn comes after a capture missed while it waited; earlier ones start', async () => {
    let now = 0;
    const a = new Admission({ maxStarting: 1, startQueue: 4, windowMs: 10_000, now: () => now });
    const first = await a.startSlot();
    const queued = a.startSlot();
    now += 5;
    a.observeCaptureMiss(3);
    now += 1;
    const next = a.startSlot();
    first();
    await expect(queued).rejects.toMatchObject({ code: 'overloaded', status: 503 });
    // The slot went on: a start queued after the miss (the miss is older than it) is served.
    const release = await next;
    release();
    expect(a.pressure()).toMatchObject({ starting: 0, queued: 0 });
  });
});

describe('Admission: capture capacity (browser-env/capture-gate.ts measures it)', () => {
  it('refuses creates at the sandboxes the browsers serve screenshots for, above its floor only; unmeasured: no bound', () => {
    let served: number | undefined;
    const a = new Admission({ maxStarting: 2, captureCapacity: () => served });
    expect(refusal(() => a.admit(40))).toBeNull();
    served = 6;
    expect(refusal(() => a.admit(5))).toBeNull();
    const e = refusal(() => a.admit(6));
    expect(e).toMatchObject({ code: 'overloaded', status: 503 });
    expect(e?.message).toMatch(/its browsers serve screenshots for 6 sandboxes at once .* \(it holds 6\); retry later/);
    expect(e?.retryAfter).toBeGreaterThanOrEqual(1);
    // Below maxStarting the server always runs a few, whatever it measured.
    served = 0;
    expect(refusal(() => a.admit(1))).toBeNull();
    expect(refusal(() => a.admit(2))).toMatchObject({ code: 'overloaded' });
  });

  it('refuses a queued start whose turn comes when the sandboxes started meanwhile use the capacity (the next queued one too); with capacity back a queued one starts', async () => {
    let served: number | undefined;
    let live = 0;
    // A fixed start limit: this test is about the capacity, not the limit's learning.
    const a = new Admission({ maxStarting: 2, learnStarts: false, startQueue: 8, captureCapacity: () => served });
    // As the registry counts: a create is live from its admission until it fails.
    const slot = () => {
      live++;
      return a.startSlot(undefined, () => live).catch((e: unknown) => {
        live--;
        throw e;
      });
    };
    const r1 = await slot();
    const r2 = await slot();
    const queued = [slot(), slot()];
    // Four sandboxes run beside the two starting ones by the time the turns come; the captures serve five.
    live += 4;
    served = 5;
    r1();
    await expect(queued[0]).rejects.toMatchObject({ code: 'overloaded', status: 503, message: expect.stringMatching(/its browsers came to serve screenshots for 5 sandboxes at once and \d+ hold them/) });
    // The refused one handed its slot on: the next waiter was judged the same way.
    await expect(queued[1]).rejects.toMatchObject({ code: 'overloaded' });
    expect(a.pressure()).toMatchObject({ starting: 1, queued: 0 });
    // Capacity came back: a create queued behind two starting ones starts in its turn.
    const r3 = await slot();
    const last = slot();
    expect(a.pressure()).toMatchObject({ starting: 2, queued: 1 });
    served = 50;
    r2();
    const r4 = await last;
    r3();
    r4();
    expect(a.pressure()).toMatchObject({ starting: 0, queued: 0 });
  });
});

describe('Admission: the start limit is learned from start latency against the start deadline', () => {
  it('a slow start halves it (once per round, never below 1); fast starts while others wait raise it by one each, up to its ceiling', async () => {
    let now = 0;
    const a = new Admission({ maxStarting: 4, startDeadlineMs: 40_000, startQueue: 64, now: () => now });
    expect(a.pressure().startLimit).toBe(4);
    const four = await Promise.all([a.startSlot(), a.startSlot(), a.startSlot(), a.startSlot()]);
    const waiting = Array.from({ length: 6 }, () => a.startSlot());
    expect(a.pressure()).toMatchObject({ starting: 4, queued: 6 });
    // Two starts of the same round past half the deadline: one cut, not two.
    now += 20_001;
    four[0]();
    four[1]();
    expect(a.pressure()).toMatchObject({ startLimit: 2, starting: 2, queued: 6 });
    // The round's other starts were slow too; they began before the cut and do not cut again. Their slots go to the
    // waiting ones only as far as the new limit allows.
    four[2]();
    expect(a.pressure()).toMatchObject({ startLimit: 2, starting: 2, queued: 5 });
    four[3]();
    expect(a.pressure()).toMatchObject({ startLimit: 2, starting: 2, queued: 4 });
    // The next round is slow as well: the limit halves again, and never goes below 1.
    const [w0, w1] = await Promise.all([waiting[0], waiting[1]]);
    now += 30_000;
    w0();
    expect(a.pressure().startLimit).toBe(1);
    w1();
    const [w2] = await Promise.all([waiting[2]]);
    now += 30_000;
    w2();
    expect(a.pressure()).toMatchObject({ startLimit: 1, starting: 1, queued: 2 });
    // Fast starts (under an eighth of the deadline) while others wait: +1 each.
    const w3 = await waiting[3];
    now += 1000;
    w3();
    expect(a.pressure()).toMatchObject({ startLimit: 2, starting: 2, queued: 0 });
    const [w4, w5] = await Promise.all([waiting[4], waiting[5]]);
    // A fast start with nobody waiting says nothing about more at once: no raise.
    w4();
    expect(a.pressure().startLimit).toBe(2);
    w5();
    // Bounded above: a long run of fast, contended starts stops at maxStarting.
    for (let round = 0; round < 10; round++) {
      const running = Array.from({ length: 12 }, () => a.startSlot());
      for (let i = 0; i < 12; i++) (await running[i])();
    }
    expect(a.pressure()).toMatchObject({ startLimit: 4, starting: 0, queued: 0 });
    // At the ceiling, that many start at once and the next waits.
    const slots = await Promise.all(Array.from({ length: 4 }, () => a.startSlot()));
    const fifth = a.startSlot();
    expect(a.pressure()).toMatchObject({ starting: 4, queued: 1 });
    slots.forEach((r) => r());
    (await fifth)();
  });

  it('a queued create refused when its turn comes (the machine cannot serve more episodes) halves it', async () => {
    let now = 0;
    const a = new Admission({ maxStarting: 4, startQueue: 8, windowMs: 10_000, now: () => now });
    const four = await Promise.all(Array.from({ length: 4 }, () => a.startSlot()));
    const queued = a.startSlot();
    now += 5;
    a.observeCaptureMiss(6);
    four[0]();
    await expect(queued).rejects.toMatchObject({ code: 'overloaded' });
    expect(a.pressure()).toMatchObject({ startLimit: 2, starting: 3, queued: 0 });
    for (const r of four.slice(1)) r();
  });

  it('learnStarts false is a fixed limit (neither fast nor slow starts move it); a full queue is judged against it', async () => {
    let now = 0;
    const a = new Admission({ maxStarting: 2, learnStarts: false, startQueue: 1, now: () => now });
    const r = await Promise.all([a.startSlot(), a.startSlot()]);
    const next = [a.startSlot()];
    now += 60_000;
    r[0]();
    expect(a.pressure()).toMatchObject({ startLimit: 2, starting: 2, queued: 0 });
    next.push(a.startSlot());
    expect(refusal(() => a.admit(4))).toMatchObject({ code: 'overloaded' });
    r[1]();
    for (const p of next) (await p)();
    expect(a.pressure()).toMatchObject({ starting: 0, queued: 0 });
  });
});
