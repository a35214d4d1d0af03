import { afterEach, describe, expect, it, vi } from 'vitest';
import { Deadline, TimeoutError } from '../../sandbox/deadline.ts';
import { actionMs, recoveryMs, stepBudgetMs, OBSERVE_MS } from '../../browser-env/step-budget.ts';

describe('Deadline', () => {
  it('a sub-deadline never ends after its parent', () => {
    const d = Deadline.after(1000);
    expect(d.within(60_000).at).toBe(d.at);
    expect(d.within(10).at).toBeLessThan(d.at);
    expect(d.reserve(400).at).toBe(d.at - 400);
    // Reserving more than is left leaves an expired deadline, not one in the past beyond now.
    const r = d.reserve(5000);
    expect(r.remaining()).toBe(0);
    expect(r.expired).toBe(true);
  });

  it('race rejects with a TimeoutError naming the stage when the time is up', async () => {
    const d = Deadline.after(20, 'step');
    const never = new Promise<never>(() => {});
    const err = await d.race(never, 'settle').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/^settle did not finish within \d+ ms$/);
  });

  it('race passes a result through and swallows a late rejection of the loser', async () => {
    const d = Deadline.after(5000);
    expect(await d.race(Promise.resolve(7), 'x')).toBe(7);
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 30));
    await expect(Deadline.after(1).race(late, 'y')).rejects.toBeInstanceOf(TimeoutError);
    await new Promise((r) => setTimeout(r, 50)); // an unhandled rejection would fail the run
  });

  it('an expired deadline races to an immediate timeout and sleeps not at all', async () => {
    const d = Deadline.after(0);
    await expect(d.race(new Promise(() => {}), 'z')).rejects.toBeInstanceOf(TimeoutError);
    // On a fake clock: the 10 s sleep must be over without the clock moving (a real sleep would pass the test
    // timeout's check only by luck, and reading remaining() before it proved nothing about the sleep).
    vi.useFakeTimers();
    const late = Deadline.after(0);
    let slept = false;
    void late.sleep(10_000).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(slept).toBe(true);
  });

  it('a sleep ends with its deadline when that comes first, and after its own length otherwise', async () => {
    vi.useFakeTimers();
    const d = Deadline.after(50);
    let capped = false;
    void d.sleep(10_000).then(() => (capped = true));
    let own = false;
    void Deadline.after(60_000).sleep(30).then(() => (own = true));
    await vi.advanceTimersByTimeAsync(29);
    expect([own, capped]).toEqual([false, false]);
    await vi.advanceTimersByTimeAsync(1);
    expect([own, capped]).toEqual([true, false]);
    await vi.advanceTimersByTimeAsync(20);
    expect(capped).toBe(true);
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
