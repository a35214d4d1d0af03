// The event-loop stall monitor (server/loop-stalls.ts): a loop blocked past the threshold is counted with when it
// ended and how long it was late; ordinary timer jitter is not. Whether the loop's thread ran meanwhile tells its own
// synchronous work from a lack of CPU.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { BUSY_MS, followLoopStalls, loopStalls, STALL_MS } from '../../server/loop-stalls.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** This thread's CPU ms (utime + stime of /proc/thread-self/stat, 10 ms ticks). */
function threadCpuMs(): number {
  const f = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

it('counts a blocked loop as a stall, with its time and length, and a free loop not', async () => {
  followLoopStalls();
  await tick(600); // a few ordinary ticks
  const before = loopStalls();
  const blockedAt = Date.now();
  // Blocked past a stall by the clock, and until the thread itself has run past BUSY_MS (on a loaded machine that
  // takes longer than by the clock).
  const cpu0 = threadCpuMs();
  while (Date.now() - blockedAt < STALL_MS + 400 || threadCpuMs() - cpu0 < BUSY_MS + 100) {
    // blocked: no timer can run
  }
  await tick(400);
  const after = loopStalls();
  expect(after.count).toBe(before.count + 1);
  // The loop's own thread ran the whole stall: its own work, not a lack of CPU.
  expect(after.busyCount).toBe(before.busyCount + 1);
  const last = after.recent.at(-1)!;
  expect(last.cpuMs).toBeGreaterThanOrEqual(BUSY_MS);
  expect(last.at).toBeGreaterThanOrEqual(blockedAt + STALL_MS);
  expect(last.ms).toBeGreaterThanOrEqual(STALL_MS);
  expect(after.maxMs).toBeGreaterThanOrEqual(last.ms);
  await tick(700);
  expect(loopStalls().count).toBe(after.count);
});

it('a stall while the thread sleeps (no CPU for it, or a wait in the kernel) is not counted as its own work', async () => {
  followLoopStalls();
  await tick(600);
  const before = loopStalls();
  // Atomics.wait blocks the thread without running it: as a starved or descheduled loop looks from inside.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STALL_MS + 400);
  await tick(400);
  const after = loopStalls();
  expect(after.count).toBe(before.count + 1);
  expect(after.busyCount).toBe(before.busyCount);
  expect(after.recent.at(-1)!.cpuMs).toBeLessThan(BUSY_MS);
});
