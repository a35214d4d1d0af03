// Block 2: steps/s with 16 sandboxes stepping at once, raw Playwright (16 contexts) against Grove's JSON and
// binary answers, in interleaved blocks of a rotating order. Leaves the 16 sandboxes open for the memory block.
import type { Raw } from './raw.ts';
import { N_CONC } from './raw.ts';
import { createBody, createReady, groveSteps, type Server } from './server.ts';
import type { Fixture } from './fixture.ts';
import { interleave, now, QUICK, r2, type Report } from './stats.ts';

const CONC_STEPS = QUICK ? 12 : 48;
const CONC_ROUNDS = 6;

export async function throughputBlock(raw: Raw, s: Server, fixture: Fixture, { results, say }: Report): Promise<string[]> {
  await raw.openConcurrent();
  // Four creates at a time: what is measured here is stepping; 16 cold creates at once failed at load 80.
  const ids: string[] = [];
  for (let k = 0; k < N_CONC; k += 4) {
    ids.push(...(await Promise.all(Array.from({ length: Math.min(4, N_CONC - k) }, () => createReady(s, createBody(fixture), { retryFailedStart: true })))));
  }
  await raw.concurrent(2);
  await Promise.all(ids.map((sid) => groveSteps(s, sid, 2, false, true)));
  let rawMs = 0;
  let groveMs = 0;
  let binMs = 0;
  const per = Math.ceil(CONC_STEPS / CONC_ROUNDS);
  const grove = (binary: boolean) => async () => {
    const t0 = now();
    await Promise.all(ids.map((sid) => groveSteps(s, sid, per, binary, true)));
    if (binary) binMs += now() - t0;
    else groveMs += now() - t0;
  };
  // Rotating order, as for latency: raw, JSON and binary blocks each take every position.
  await interleave(CONC_ROUNDS, [async () => { rawMs += await raw.concurrent(per); }, grove(false), grove(true)]);
  const total = N_CONC * per * CONC_ROUNDS;
  const tput = total / (groveMs / 1000);
  const binTput = total / (binMs / 1000);
  const rawTput = total / (rawMs / 1000);
  results.throughput_ratio_16 = r2(tput / rawTput);
  results.throughput_ratio_16_binary = r2(binTput / rawTput);
  say(`steps/s @16       grove ${tput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16} (target ≥ 0.9; ${CONC_ROUNDS} interleaved blocks)`);
  say(`steps/s @16 binary grove ${binTput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16_binary}`);
  return ids;
}
