// The V8 heap right after the last full (mark-compact) collection: the objects still alive, without the garbage
// that `heapUsed` also counts between collections. `heapUsed` sampled at an arbitrary moment swings by a third
// with the GC cycle; this level is what a long run watches for a leak (bench/soak.ts reads it from /metrics).
//
// The figure is V8's own, taken at the end of the collection (v8.GCProfiler's `afterGC`). Reading the heap when
// the collection's performance entry arrives instead — a moment later, on a busy event loop up to a second — also
// counts what the server allocated meanwhile: the young generation refills at megabytes per second while 16
// sandboxes step, so that reading moved by several MB from one collection to the next with nothing retained.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

export interface LiveHeap {
  /** Bytes in use after the collection. */
  bytes: number;
  /** When that collection was seen (ms since the epoch). */
  at: number;
  /** The same bytes by V8 heap space (old_space, code_space, large_object_space, …): which kind of memory a
   * growth is in — program data, or compiled code that the JIT adds as more paths get hot. */
  spaces: Record<string, number>;
}

let last: LiveHeap | null = null;
let observer: PerformanceObserver | null = null;
let profiler: v8.GCProfiler | null = null;

interface GcStat {
  gcType: string;
  afterGC: { heapStatistics: { usedHeapSize: number }; heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] };
}

/** The profile since the last full collection is read and a new one begun: it never holds more than one cycle. */
function roll(): void {
  const stats = (profiler?.stop()?.statistics ?? []) as GcStat[];
  profiler = new v8.GCProfiler();
  profiler.start();
  for (let i = stats.length - 1; i >= 0; i--) {
    if (stats[i].gcType !== 'MarkSweepCompact') continue;
    const after = stats[i].afterGC;
    const spaces: Record<string, number> = {};
    for (const sp of after.heapSpaceStatistics) spaces[sp.spaceName] = sp.spaceUsedSize;
    last = { bytes: after.heapStatistics.usedHeapSize, at: Date.now(), spaces };
    return;
  }
}

/** Starts following full collections (once per process; the observer is no handle and keeps nothing alive). */
export function followLiveHeap(): void {
  if (observer) return;
  roll();
  observer = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) roll();
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** The heap after the last full collection, or null before the first one. */
export function liveHeap(): LiveHeap | null {
  return last;
}
