// The V8 heap right after the last full (mark-compact) collection: the objects still alive, without the garbage
// that `heapUsed` also counts between collections. `heapUsed` sampled at an arbitrary moment swings by a third
// with the GC cycle; this level is what a long run watches for a leak (bench/soak.ts reads it from /metrics).
import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

export interface LiveHeap {
  /** Bytes in use after the collection. */
  bytes: number;
  /** When that collection ended (ms since the epoch). */
  at: number;
  /** The same bytes by V8 heap space (old_space, code_space, large_object_space, …): which kind of memory a
   * growth is in — program data, or compiled code that the JIT adds as more paths get hot. */
  spaces: Record<string, number>;
}

let last: LiveHeap | null = null;
let observer: PerformanceObserver | null = null;

/** Starts following full collections (once per process; the observer is no handle and keeps nothing alive). */
export function followLiveHeap(): void {
  if (observer) return;
  observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      // Entries arrive a moment after their collection: what was allocated since then is counted too (a few
      // hundred KB at most against a heap of tens of MB).
      const spaces: Record<string, number> = {};
      for (const sp of v8.getHeapSpaceStatistics()) spaces[sp.space_name] = sp.space_used_size;
      last = { bytes: v8.getHeapStatistics().used_heap_size, at: Date.now(), spaces };
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** The heap after the last full collection, or null before the first one. */
export function liveHeap(): LiveHeap | null {
  return last;
}
