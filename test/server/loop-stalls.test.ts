// The event-loop stall monitor (server/loop-stalls.ts): a loop blocked past the threshold is counted with when it
// ended and how long it was late; ordinary timer jitter is not.
import { expect, it } from 'vitest';
import { followLoopStalls, loopStalls, STALL_MS } from '../../server/loop-stalls.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('counts a blocked loop as a stall, with its time and length, and a free loop not', async () => {
  followLoopStalls();
  await tick(600); // a few ordinary ticks
  const before = loopStalls();
  const blockedAt = Date.now();
  while (Date.now() - blockedAt < STALL_MS + 400) {
    // blocked: no timer can run
  }
  await tick(400);
  const after = loopStalls();
  expect(after.count).toBe(before.count + 1);
  const last = after.recent.at(-1)!;
  expect(last.at).toBeGreaterThanOrEqual(blockedAt + STALL_MS);
  expect(last.ms).toBeGreaterThanOrEqual(STALL_MS);
  expect(after.maxMs).toBeGreaterThanOrEqual(last.ms);
  await tick(700);
  expect(loopStalls().count).toBe(after.count);
});
