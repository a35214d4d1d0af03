// Block 5: churn. create/step/delete cycles, CHURN_PAR at a time: a warm-up of N_CHURN/10 cycles first (JIT,
// pools, the heap growing to its working size), then the measured N_CHURN. RSS is sampled the same way at both
// ends: after 5 s idle (V8 shrinks the heap when idle), the median of 5 samples.
import type { Fixture } from './fixture.ts';
import { chromiumPidsUnder, rssKb } from './procfs.ts';
import { api, createBody, createReady, groveSteps, type Server } from './server.ts';
import { pct, QUICK, r2, sleep, type Report } from './stats.ts';

// 300 measured cycles (1,000 before: the block that took most of a full run). A leak of ~70 KB per cycle is
// still a 10 % RSS growth on a ~200 MB server (0.6 % was measured after 1,000 cycles) and a third more
// heap+external; a leaked Chromium process shows in any number of cycles.
const N_CHURN = QUICK ? 100 : 300;
const CHURN_PAR = 4;

export async function churnBlock(s: Server, fixture: Fixture, { results, say }: Report): Promise<void> {
  let churnErrors = 0;
  const churn = async (cycles: number, countErrors: boolean) => {
    let next = 0;
    await Promise.all(Array.from({ length: CHURN_PAR }, async () => {
      while (next < cycles) {
        next++;
        const sid = await createReady(s, createBody(fixture));
        // An action error here is the environment's answer, not a bench failure: count it and go on.
        try { await groveSteps(s, sid, 1); } catch { if (countErrors) churnErrors++; }
        await api(s, 'DELETE', `/sandboxes/${sid}`);
      }
    }));
  };
  /** The server's V8 heap in use + external buffers (from /metrics), MB: what its objects hold, without allocator slack. */
  const heapMb = async () => {
    const text = await s.client.metrics();
    const g = (name: string) => Number(text.split('\n').find((l) => l.startsWith(name + ' '))?.split(' ')[1] ?? NaN);
    return (g('grove_process_heap_used_bytes') + g('grove_process_external_memory_bytes')) / 1048576;
  };
  const idleRss = async () => {
    await sleep(5000);
    const xs: number[] = [];
    for (let i = 0; i < 5; i++) { xs.push(rssKb(s.proc.pid!)); await sleep(200); }
    return pct(xs, 50);
  };
  await churn(Math.ceil(N_CHURN / 10), false);
  const rssBefore = await idleRss();
  const heapBefore = await heapMb();
  const chromBefore = chromiumPidsUnder(s.proc.pid!).length;
  await churn(N_CHURN, true);
  const rssAfter = await idleRss(); // also lets recycled processes finish closing
  const heapAfter = await heapMb();
  results.churn_heap_growth_pct = r2(((heapAfter - heapBefore) / heapBefore) * 100);
  const chromAfter = chromiumPidsUnder(s.proc.pid!).length;
  results.churn_leaked_processes = Math.max(0, chromAfter - chromBefore);
  results.churn_rss_growth_pct = r2(((rssAfter - rssBefore) / rssBefore) * 100);
  results.churn_step_errors = churnErrors;
  say(`churn ${N_CHURN} cycles (after ${Math.ceil(N_CHURN / 10)} warm-up)   leaked chromium processes ${results.churn_leaked_processes} (${chromBefore}→${chromAfter}) (target 0)   server RSS ${(rssBefore / 1024).toFixed(0)}→${(rssAfter / 1024).toFixed(0)} MB, growth ${results.churn_rss_growth_pct} % (target ≤ 10)   heap+external ${heapBefore.toFixed(0)}→${heapAfter.toFixed(0)} MB (${results.churn_heap_growth_pct} %)   step errors ${churnErrors}`);
}
