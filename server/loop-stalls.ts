// Stalls of this process's event loop: a timer due every 250 ms that runs late by more than a second means the
// loop was blocked (a synchronous call) or the process got no CPU (a saturated machine) or waited on the disk (a
// synchronous write while writeback stalls). Every deadline of a step is a timer on this loop, so a stall is time
// a step can run over its budget; /metrics reports them (grove_process_event_loop_*) and the soak prints them
// beside the steps that ran over, so an overrun can be told apart from a missing bound.
const TICK_MS = 250;
/** A lateness from this on counts as a stall. */
export const STALL_MS = 1000;

export interface LoopStalls {
  /** Stalls of STALL_MS or more since following began. */
  count: number;
  /** The longest lateness seen (ms), stalls or not. */
  maxMs: number;
  /** The latest stalls (at most 20): when each ended (ms since the epoch) and how late the timer ran (ms). */
  recent: { at: number; ms: number }[];
}

const state: LoopStalls = { count: 0, maxMs: 0, recent: [] };
let timer: NodeJS.Timeout | null = null;

/** Starts following this process's event loop (once per process; the timer keeps nothing alive). */
export function followLoopStalls(): void {
  if (timer) return;
  let due = Date.now() + TICK_MS;
  timer = setInterval(() => {
    const now = Date.now();
    const late = now - due;
    due = now + TICK_MS;
    state.maxMs = Math.max(state.maxMs, late);
    if (late >= STALL_MS) {
      state.count++;
      state.recent.push({ at: now, ms: late });
      if (state.recent.length > 20) state.recent.shift();
    }
  }, TICK_MS);
  timer.unref();
}

export function loopStalls(): LoopStalls {
  return { ...state, recent: [...state.recent] };
}
