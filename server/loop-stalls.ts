// Stalls of this process's event loop: a timer due every 250 ms that runs late by more than a second means the
// loop was blocked (a synchronous call) or the process got no CPU (a saturated machine) or waited on the disk (a
// synchronous write while writeback stalls). Every deadline of a step is a timer on this loop, so a stall is time
// a step can run over its budget; /metrics reports them (grove_process_event_loop_*) and the soak prints them
// beside the steps that ran over, so an overrun can be told apart from a missing bound.
// Which of the causes a stall was: the CPU time the loop's own thread got meanwhile (Linux: /proc/thread-self/stat,
// read at every tick, a few µs). That is what the stall would have been on an idle machine: a thread that ran
// BUSY_MS or more of it was blocked by its own synchronous work (code to move off the thread or split, or a long GC
// pause), however long the machine's load stretched it; one that hardly ran was kept from the CPU (or waited in the
// kernel). Not a share of the stall: on a machine at load 60 a thread busy-looping 1.4 s got under half of it.
import { readFileSync } from 'node:fs';

const TICK_MS = 250;
/** A lateness from this on counts as a stall. */
export const STALL_MS = 1000;
/** A stall during which the thread itself ran this long (CPU ms) is its own work. */
export const BUSY_MS = STALL_MS / 2;
/** /proc counts CPU time in USER_HZ ticks: 1/100 s on every Linux architecture Node runs on. */
const MS_PER_TICK = 10;

export interface LoopStalls {
  /** Stalls of STALL_MS or more since following began. */
  count: number;
  /** Of them, the stalls the thread spent running (BUSY_MS of CPU or more): its own synchronous work. */
  busyCount: number;
  /** The longest lateness seen (ms), stalls or not. */
  maxMs: number;
  /** The latest stalls (at most 20): when each ended (ms since the epoch), how late the timer ran (ms) and the CPU
   * ms the loop's thread got over the tick that ran late (NaN where the kernel does not say). */
  recent: { at: number; ms: number; cpuMs: number }[];
}

const state: LoopStalls = { count: 0, busyCount: 0, maxMs: 0, recent: [] };

/** CPU ms this thread (the event loop's, when called from a timer) has run, user + system; NaN without /proc. */
function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // After the parenthesised command: state(3) … utime(14) stime(15).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * MS_PER_TICK;
  } catch {
    return NaN;
  }
}
let timer: NodeJS.Timeout | null = null;

/** Starts following this process's event loop (once per process; the timer keeps nothing alive). */
export function followLoopStalls(): void {
  if (timer) return;
  let due = Date.now() + TICK_MS;
  let cpu = threadCpuMs();
  timer = setInterval(() => {
    const now = Date.now();
    const late = now - due;
    due = now + TICK_MS;
    const cpuNow = threadCpuMs();
    const cpuMs = cpuNow - cpu;
    cpu = cpuNow;
    state.maxMs = Math.max(state.maxMs, late);
    if (late >= STALL_MS) {
      state.count++;
      if (cpuMs >= BUSY_MS) state.busyCount++;
      state.recent.push({ at: now, ms: late, cpuMs });
      if (state.recent.length > 20) state.recent.shift();
    }
  }, TICK_MS);
  timer.unref();
}

export function loopStalls(): LoopStalls {
  return { ...state, recent: [...state.recent] };
}
