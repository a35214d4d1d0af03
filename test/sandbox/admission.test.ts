// Admission control on its own measurements (sandbox/admission.ts): creates are refused with 503 overloaded and a
// Retry-After while the measured pressure is past its limits or the start queue is full, and admitted again once
// the window has drained; starts beyond maxStarting wait for a slot in order.
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
