// The server's memory as it runs: RSS, heap used, live heap after full GC, external (from its /metrics), and the
// machine's 1-minute load average, the server's event-loop stalls and the machine's disk-stall time, one sample per call.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { memory, run } from './state.ts';

/** /proc/pressure/io's `full` total in µs (NaN where the kernel has no PSI). */
function ioFullUs(): number {
  try {
    return Number(/^full .*total=(\d+)/m.exec(readFileSync('/proc/pressure/io', 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

export async function sampleMemory(): Promise<void> {
  try {
    const text = await run.server.client.metrics();
    const num = (name: string) => Number(new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    memory.push({
      t: Date.now(), rss: num('grove_process_resident_memory_bytes'), heap: num('grove_process_heap_used_bytes'), live: num('grove_process_heap_live_bytes'),
      external: num('grove_process_external_memory_bytes'), load1: os.loadavg()[0],
      stalls: num('grove_process_event_loop_stalls_total'), loopMaxS: num('grove_process_event_loop_max_delay_seconds'), ioFullUs: ioFullUs(),
    });
  } catch {
    // a restart in progress
  }
}
