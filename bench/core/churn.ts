// Block 5: churn. create/step/delete cycles, CHURN_PAR at a time, on a server of its own: a warm-up of N_CHURN/10
// cycles first (JIT, pools, the heap growing to its working size), then the measured N_CHURN. Both ends are read
// the same way: 5 s idle (recycled processes finish closing), a full collection in the server (full-gc.ts), then
// the median of 5 RSS samples. Without the collection, RSS at either end held whatever garbage the last minutes
// left (Node collects no garbage when idle): five runs at 7767e3f read −2.9 to +24.6 % with heap+external at the
// end 68–155 MB for the same retained state.
import type { Fixture } from './fixture.ts';
import { fullGc, inspectorUrl } from './full-gc.ts';
import { chromiumPidsUnder, rssKb } from './procfs.ts';
import { api, createBody, createReady, groveSteps, startServer, type Server } from './server.ts';
import { pct, QUICK, r2, sleep, type Report } from './stats.ts';

// 300 measured cycles (1,000 before: the block that took most of a full run). A leak of ~70 KB per cycle is
// still a 10 % RSS growth on a ~200 MB server (0.6 % was measured after 1,000 cycles) and a third more
// heap+external; a leaked Chromium process shows in any number of cycles.
const N_CHURN = QUICK ? 100 : 300;
const CHURN_PAR = 4;

/** The server's V8 heap in use + external buffers (from /metrics), MB: what its objects hold, without allocator slack. */
async function heapMb(s: Server): Promise<number> {
  const text = await s.client.metrics();
  const g = (name: string) => Number(text.split('\n').find((l) => l.startsWith(name + ' '))?.split(' ')[1] ?? NaN);
  return (g('grove_process_heap_used_bytes') + g('grove_process_external_memory_bytes')) / 1048576;
}

/** RSS (KB) and heap+external (MB) of an idle server after a full collection. */
async function settledMemory(s: Server): Promise<{ rssKb: number; heapMb: number }> {
  await sleep(5000);
  const url = inspectorUrl(s.stderr());
  if (!url) throw new Error('churn: the server printed no inspector URL');
  await fullGc(url);
  await sleep(1000);
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    xs.push(rssKb(s.proc.pid!));
    await sleep(200);
  }
  return { rssKb: pct(xs, 50), heapMb: await heapMb(s) };
}

export async function churnBlock(fixture: Fixture, { results, say }: Report): Promise<void> {
  // As the step blocks' server; the inspector only answers the collections asked for here, on loopback.
  const s = await startServer(['--warm-pool', '0', '--warm-pool-max-mb', '0', '--browser-processes', '1'], ['--inspect=127.0.0.1:0']);
  try {
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
    await churn(Math.ceil(N_CHURN / 10), false);
    const before = await settledMemory(s);
    const chromBefore = chromiumPidsUnder(s.proc.pid!).length;
    await churn(N_CHURN, true);
    const after = await settledMemory(s);
    const chromAfter = chromiumPidsUnder(s.proc.pid!).length;
    results.churn_heap_growth_pct = r2(((after.heapMb - before.heapMb) / before.heapMb) * 100);
    results.churn_leaked_processes = Math.max(0, chromAfter - chromBefore);
    results.churn_rss_growth_pct = r2(((after.rssKb - before.rssKb) / before.rssKb) * 100);
    results.churn_step_errors = churnErrors;
    say(`churn ${N_CHURN} cycles (after ${Math.ceil(N_CHURN / 10)} warm-up)   leaked chromium processes ${results.churn_leaked_processes} (${chromBefore}→${chromAfter}) (target 0)   server RSS after a full GC ${(before.rssKb / 1024).toFixed(0)}→${(after.rssKb / 1024).toFixed(0)} MB, growth ${results.churn_rss_growth_pct} % (target ≤ 10)   heap+external ${before.heapMb.toFixed(0)}→${after.heapMb.toFixed(0)} MB (${results.churn_heap_growth_pct} %)   step errors ${churnErrors}`);
  } finally {
    await s.stop();
  }
}
