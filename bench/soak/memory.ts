// The server's memory as it runs: RSS, heap used, live heap after full GC, external (from its /metrics), and the
// machine's 1-minute load average, the server's event-loop stalls, the machine's disk-stall time and the CPU time the
// host stole from it (machine.ts), one sample per call.
import os from 'node:os';
import { ioFullUs, stolenMs } from './machine.ts';
import { memory, run } from './state.ts';

export async function sampleMemory(): Promise<void> {
  try {
    const text = await run.server.client.metrics();
    const num = (name: string) => Number(new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    const spaces: Record<string, number> = {};
    for (const m of text.matchAll(/^grove_process_heap_live_space_bytes\{space="([^"]+)"\} (\S+)$/gm)) spaces[m[1]] = Number(m[2]);
    memory.push({
      t: Date.now(), rss: num('grove_process_resident_memory_bytes'), heap: num('grove_process_heap_used_bytes'), live: num('grove_process_heap_live_bytes'), spaces,
      external: num('grove_process_external_memory_bytes'), load1: os.loadavg()[0],
      stalls: num('grove_process_event_loop_stalls_total'), busyStalls: num('grove_process_event_loop_busy_stalls_total'), loopMaxS: num('grove_process_event_loop_max_delay_seconds'), ioFullUs: ioFullUs(), stolenMs: stolenMs(),
    });
  } catch {
    // a restart in progress
  }
}
