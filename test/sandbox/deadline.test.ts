import { describe, expect, it } from 'vitest';
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
    const before = d.remaining();
    await d.sleep(10_000);
    expect(before).toBe(0);
  });
});

describe('step budget', () => {
  const o = { action_timeout_ms: 10_000, settle_max_ms: 3000, settle: true };
  it('counts every action with its settle, the observation and two recoveries', () => {
    const click = { action: 'click', x: 1, y: 1 } as const;
    expect(stepBudgetMs(o, [click])).toBe(10_000 + 3000 + OBSERVE_MS + 2 * recoveryMs(o));
    expect(stepBudgetMs(o, [click, click])).toBe(2 * 13_000 + OBSERVE_MS + 2 * recoveryMs(o));
    expect(stepBudgetMs(o, [click], false)).toBe(10_000 + OBSERVE_MS + 2 * recoveryMs(o));
  });
  it('gives a wait its full length, whatever the action timeout', () => {
    expect(actionMs(o, { action: 'wait', ms: 60_000 })).toBeGreaterThan(60_000);
    expect(actionMs({ action_timeout_ms: 100 }, { action: 'wait', ms: 30_000 })).toBeGreaterThan(30_000);
  });
});
