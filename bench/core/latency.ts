// Block 1: sequential step latency, raw Playwright against Grove's JSON and binary answers, in interleaved
// blocks of a rotating order (one sandbox, the server without a warm pool).
import type { Raw } from './raw.ts';
import { createBody, createReady, api, groveSteps, type Server } from './server.ts';
import type { Fixture } from './fixture.ts';
import { interleave, pct, QUICK, r2, type Report } from './stats.ts';

// 200 steps a side (300 before), 20 per block: a p50 of 200 samples is within a few % of the median; the
// spread between runs (ratios 1.02–1.32) came from drift on the machine, which the 10 interleaved blocks cancel.
const N_STEPS = QUICK ? 60 : 200;
const ROUNDS = 10;

export async function latencyBlock(raw: Raw, s: Server, fixture: Fixture, { results, say }: Report): Promise<void> {
  const id = await createReady(s, createBody(fixture), { retryFailedStart: true });
  await raw.steps(10);
  await groveSteps(s, id, 10, false, true);
  await groveSteps(s, id, 10, true, true);
  const rawLat: number[] = [];
  const lat: number[] = [];
  const binLat: number[] = [];
  const n = Math.ceil(N_STEPS / ROUNDS);
  await interleave(ROUNDS, [
    async () => rawLat.push(...(await raw.steps(n))),
    async () => lat.push(...(await groveSteps(s, id, n, false, true))),
    async () => binLat.push(...(await groveSteps(s, id, n, true, true))),
  ]);
  await api(s, 'DELETE', `/sandboxes/${id}`);
  const rawP50 = pct(rawLat, 50);
  const rawP99 = pct(rawLat, 99);
  results.step_p50_ratio = r2(pct(lat, 50) / rawP50);
  results.step_p99_ratio = r2(pct(lat, 99) / rawP99);
  say(`step p50          grove ${pct(lat, 50).toFixed(1)} ms   raw ${rawP50.toFixed(1)} ms   ratio ${results.step_p50_ratio}  (target ≤ 1.15; ${lat.length} steps each, ${ROUNDS} interleaved blocks)`);
  say(`step p99          grove ${pct(lat, 99).toFixed(1)} ms   raw ${rawP99.toFixed(1)} ms   ratio ${results.step_p99_ratio}`);
  results.step_p50_ratio_binary = r2(pct(binLat, 50) / rawP50);
  results.step_p99_ratio_binary = r2(pct(binLat, 99) / rawP99);
  say(`step p50 binary   grove ${pct(binLat, 50).toFixed(1)} ms   raw ${rawP50.toFixed(1)} ms   ratio ${results.step_p50_ratio_binary}  (screenshot "binary": multipart, image bytes without base64)`);
  say(`step p99 binary   grove ${pct(binLat, 99).toFixed(1)} ms   raw ${rawP99.toFixed(1)} ms   ratio ${results.step_p99_ratio_binary}`);
}
