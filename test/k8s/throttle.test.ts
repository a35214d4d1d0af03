// The API throttle: bounded concurrency, retries only of retryable failures (Retry-After honoured), and background
// calls (warm-pool refills) kept to a quarter of the slots and behind every waiting foreground call.
import { expect, test } from 'vitest';
import { Throttle, type CallFailure } from '../../k8s/throttle.ts';

const classify = (err: unknown): CallFailure => ({ status: (err as { status: number }).status, retryAfterSeconds: (err as { ra?: number }).ra });

test('background calls have a quarter of the slots to themselves: never more, and foreground cannot starve them', async () => {
  const t = new Throttle({ concurrency: 8, retries: 0, backoffMs: 1, maxBackoffMs: 1 }, classify);
  let bgNow = 0;
  let bgMax = 0;
  let fgNow = 0;
  let fgMax = 0;
  const tick = () => new Promise((r) => setTimeout(r, 1));
  const job = (bg: boolean) => async () => {
    if (bg) bgMax = Math.max(bgMax, ++bgNow);
    else fgMax = Math.max(fgMax, ++fgNow);
    await tick();
    if (bg) bgNow--;
    else fgNow--;
  };
  const bg = Array.from({ length: 20 }, () => t.run(job(true), true));
  const fg = Array.from({ length: 40 }, () => t.run(job(false)));
  await Promise.all([...bg, ...fg]);
  expect(bgMax).toBe(2); // 8 / 4, kept busy while foreground calls queue: no starvation
  expect(fgMax).toBe(6);
  expect(t.maxActive).toBe(8);
  // With no background work, foreground calls get every slot.
  fgMax = 0;
  await Promise.all(Array.from({ length: 16 }, () => t.run(job(false))));
  expect(fgMax).toBe(8);
});

test('429 and 5xx are retried (Retry-After first), 4xx is not', async () => {
  const slept: number[] = [];
  const t = new Throttle({ concurrency: 2, retries: 3, backoffMs: 100, maxBackoffMs: 1000 }, classify, async (ms) => void slept.push(ms));
  let n = 0;
  const fails = [{ status: 429, ra: 2 }, { status: 500 }];
  await expect(t.run(async () => (n < 2 ? Promise.reject(fails[n++]) : 'ok'))).resolves.toBe('ok');
  expect(slept[0]).toBe(1000); // Retry-After 2 s, capped at maxBackoffMs
  expect(slept[1]).toBeGreaterThanOrEqual(100);
  expect(slept[1]).toBeLessThanOrEqual(200);
  await expect(t.run(async () => Promise.reject({ status: 409 }))).rejects.toEqual({ status: 409 });
  expect(t.retried).toBe(2);
  let tries = 0;
  await expect(t.run(async () => (tries++, Promise.reject({ status: 503 })))).rejects.toEqual({ status: 503 });
  expect(tries).toBe(4);
});
