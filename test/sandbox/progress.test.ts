import { afterEach, describe, expect, it, vi } from 'vitest';
import { Progress, TimeoutError } from '../../sandbox/progress.ts';
import { actionMs, recoveryMs, stepBudgetMs, OBSERVE_MS } from '../../browser-env/step-budget.ts';

describe('Progress', () => {
  it('a sub-deadline never ends after its parent', () => {
    const d = Progress.after(1000);
    expect(d.within(60_000).at).toBe(d.at);
    expect(d.within(10).at).toBeLessThan(d.at);
    expect(d.reserve(400).at).toBe(d.at - 400);
    // Reserving more than is left leaves an expired deadline, not one in the past beyond now.
    const r = d.reserve(5000);
    expect(r.remaining()).toBe(0);
    expect(r.expired).toBe(true);
  });

  it('race rejects with a TimeoutError naming the stage when the time is up', async () => {
    const d = Progress.after(20, 'step');
    const never = new Promise<never>(() => {});
    const err = await d.race(never, 'settle').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/^settle did not finish within \d+ ms$/);
  });

  it('race passes a result through and swallows a late rejection of the loser', async () => {
    const d = Progress.after(5000);
    expect(await d.race(Promise.resolve(7), 'x')).toBe(7);
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 30));
    await expect(Progress.after(1).race(late, 'y')).rejects.toBeInstanceOf(TimeoutError);
    await new Promise((r) => setTimeout(r, 50)); // an unhandled rejection would fail the run
  });

  it('an expired deadline races to an immediate timeout and sleeps not at all', async () => {
    const d = Progress.after(0);
    await expect(d.race(new Promise(() => {}), 'z')).rejects.toBeInstanceOf(TimeoutError);
    // On a fake clock: the 10 s sleep must be over without the clock moving (a real sleep would pass the test
    // timeout's check only by luck, and reading remaining() before it proved nothing about the sleep).
    vi.useFakeTimers();
    const late = Progress.after(0);
    let slept = false;
    void late.sleep(10_000).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(slept).toBe(true);
  });

  it('a sleep ends with its deadline when that comes first, and after its own length otherwise', async () => {
    vi.useFakeTimers();
    const d = Progress.after(50);
    let capped = false;
    void d.sleep(10_000).then(() => (capped = true));
    let own = false;
    void Progress.after(60_000).sleep(30).then(() => (own = true));
    await vi.advanceTimersByTimeAsync(29);
    expect([own, capped]).toEqual([false, false]);
    await vi.advanceTimersByTimeAsync(1);
    expect([own, capped]).toEqual([true, false]);
    await vi.advanceTimersByTimeAsync(20);
    expect(capped).toBe(true);
  });
});

describe('Progress: cancellation, not abandonment', () => {
  it('a lost race cancels the work and disposes of a result that comes late', async () => {
    const p = Progress.after(20, 'step');
    const events: string[] = [];
    let deliver!: (v: string) => void;
    const work = new Promise<string>((r) => (deliver = r));
    const err = await p.race(work, 'new page', { cancel: () => events.push('cancel'), dispose: (v) => events.push(`dispose ${v}`) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/^new page did not finish within \d+ ms$/);
    expect(events).toEqual(['cancel']);
    deliver('page-1');
    await Promise.resolve();
    expect(events).toEqual(['cancel', 'dispose page-1']);
  });

  it('a won race neither cancels nor disposes', async () => {
    const events: string[] = [];
    const v = await Progress.after(5000).race(Promise.resolve(3), 'x', { cancel: () => events.push('cancel'), dispose: () => events.push('dispose') });
    expect(v).toBe(3);
    await new Promise((r) => setTimeout(r, 10));
    expect(events).toEqual([]);
  });

  it('work that takes the signal is stopped at the deadline: a ticking loop ticks no more', async () => {
    vi.useFakeTimers();
    const p = Progress.after(100, 'poll');
    let ticks = 0;
    const loop = (async () => {
      for (;;) {
        p.throwIfAborted();
        ticks++;
        await p.sleep(10);
      }
    })();
    const ended = loop.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(await ended).toBeInstanceOf(TimeoutError);
    const atEnd = ticks;
    expect(atEnd).toBeGreaterThanOrEqual(9);
    await vi.advanceTimersByTimeAsync(1000);
    expect(ticks).toBe(atEnd);
  });

  it('cleanups run once when the time is up, never after off() or done()', async () => {
    vi.useFakeTimers();
    const p = Progress.after(50, 'navigation');
    const ran: string[] = [];
    p.cleanupWhenAborted(() => ran.push('stop loading'));
    const off = p.cleanupWhenAborted(() => ran.push('finished already'));
    off();
    await vi.advanceTimersByTimeAsync(49);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(['stop loading']);
    expect(p.signal.aborted).toBe(true);
    // Registered after the abort: run at once.
    p.cleanupWhenAborted(() => ran.push('late'));
    expect(ran).toEqual(['stop loading', 'late']);
    const q = Progress.after(50);
    q.cleanupWhenAborted(() => ran.push('q'));
    q.done();
    await vi.advanceTimersByTimeAsync(100);
    expect(ran).toEqual(['stop loading', 'late']);
  });

  it('a child is aborted with its parent, with the parent\'s reason; abort() stops every race at once', async () => {
    const step = Progress.after(60_000, 'step');
    const action = step.within(30_000, 'action');
    const cleaned: string[] = [];
    action.cleanupWhenAborted(() => cleaned.push('action'));
    const racing = action.race(new Promise(() => {}), 'goto').catch((e: unknown) => e);
    const closed = new Error('sandbox closed');
    step.abort(closed);
    expect(await racing).toBe(closed);
    expect(cleaned).toEqual(['action']);
    expect(action.expired).toBe(true);
    expect(() => action.throwIfAborted()).toThrow('sandbox closed');
    // A child made after the abort starts aborted.
    expect(step.within(1000).signal.aborted).toBe(true);
  });

  it('a progress made with an owner signal is aborted with it: the owner closing stops every stage, with its reason', async () => {
    const life = new AbortController();
    const step = Progress.after(60_000, 'step', { signal: life.signal });
    // A stage whose signal nobody has read yet sees the abort too.
    const quiet = step.reserve(1000, 'observation');
    const action = step.within(30_000, 'action');
    const cleaned: string[] = [];
    action.cleanupWhenAborted(() => cleaned.push('stop loading'));
    const racing = action.race(new Promise(() => {}), 'goto').catch((e: unknown) => e);
    const closed = new Error('sandbox closed');
    life.abort(closed);
    expect(await racing).toBe(closed);
    expect(cleaned).toEqual(['stop loading']);
    expect(step.remaining()).toBe(0);
    expect(quiet.expired).toBe(true);
    expect(() => quiet.throwIfAborted()).toThrow('sandbox closed');
    // Made after the owner ended: aborted from the start.
    const late = Progress.after(60_000, 'late step', { signal: life.signal });
    expect(late.expired).toBe(true);
    expect(late.signal.reason).toBe(closed);
  });

  it('a sleep ends early when its progress is aborted', async () => {
    vi.useFakeTimers();
    const p = Progress.after(60_000);
    let slept = false;
    void p.sleep(10_000).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(100);
    p.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(slept).toBe(true);
  });
});
afterEach(() => void vi.useRealTimers());

describe('step budget', () => {
  const o = { action_timeout_ms: 10_000, settle_max_ms: 3000, settle: true };
  // Figures worked out by hand from the budget's contract (step-budget.ts's comments), not from its code: an action
  // its 10 s timeout, its settle 3 s, the observation 20 s, each of two recoveries 8 s + the action timeout (18 s).
  it('counts every action with its settle, the observation and two recoveries', () => {
    const click = { action: 'click', x: 1, y: 1 } as const;
    expect([OBSERVE_MS, recoveryMs(o)]).toEqual([20_000, 18_000]);
    expect(stepBudgetMs(o, [click])).toBe(69_000); // 10 + 3 + 20 + 2 × 18
    expect(stepBudgetMs(o, [click, click])).toBe(82_000); // 2 × (10 + 3) + 20 + 36
    expect(stepBudgetMs(o, [click], false)).toBe(66_000); // no settle: 10 + 20 + 36
    expect(stepBudgetMs({ ...o, settle: false }, [click])).toBe(66_000);
    expect(stepBudgetMs({ action_timeout_ms: 2000, settle_max_ms: 500, settle: true }, [click])).toBe(42_500); // 2 + 0.5 + 20 + 2 × 10
  });
  it('a wait counts its own length (capped at the schema limit, 60 s) plus 1 s, not the action timeout', () => {
    expect(stepBudgetMs(o, [{ action: 'wait', ms: 60_000 }])).toBe(120_000); // 61 + 3 + 20 + 36
    expect(stepBudgetMs(o, [{ action: 'wait', ms: 500 }])).toBe(60_500); // 1.5 + 3 + 20 + 36
    expect(stepBudgetMs(o, [{ action: 'wait' }])).toBe(61_000); // the default wait is 1 s
  });
  it('gives a typed text time for its keys (250 ms a key, at most 30 s; long texts are one insert)', () => {
    expect(actionMs(o, { action: 'type', text: 'Lemon Garlic Roast Chicken' })).toBe(16_500); // 10 + 26 × 0.25
    expect(actionMs(o, { action: 'type_label', label: 1, text: 'x'.repeat(300) })).toBe(40_000); // 10 + min(75, 30)
    expect(actionMs(o, { action: 'type', text: 'x'.repeat(301) })).toBe(10_000);
    expect(stepBudgetMs(o, [{ action: 'type', text: 'abcd' }])).toBe(70_000); // 10 + 1 + 3 + 20 + 36
  });
  it('gives a wait its full length, whatever the action timeout', () => {
    expect(actionMs(o, { action: 'wait', ms: 60_000 })).toBeGreaterThan(60_000);
    expect(actionMs({ action_timeout_ms: 100 }, { action: 'wait', ms: 30_000 })).toBeGreaterThan(30_000);
  });
});
