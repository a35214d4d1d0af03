// Core benchmark entry (`npm run bench`): the blocks live in bench/core/, one file each (see bench/core/index.ts).
//
//   npm run bench            full run (300 churn cycles)
//   GROVE_BENCH_QUICK=1 ...  smaller counts, for a smoke run
//   GROVE_BENCH_ONLY=waves   only the RL waves (16 creates with a start URL / 16 resets vs raw), nothing saved
//   GROVE_BENCH_ONLY=overload 32 and 64 episodes at once (admission control): accepted, refused 503, screenshots missing
//   GROVE_BENCH_ONLY=latency  only the step latency block (raw and Grove, interleaved), nothing saved
//   GROVE_BENCH_ONLY=churn   only the churn block (create/step/delete cycles: leaks and server memory), nothing saved
import { main } from './core/index.ts';

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exitCode = 1;
});
