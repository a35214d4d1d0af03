// Block 2: steps/s with 16 sandboxes stepping at once, raw Playwright (16 contexts) against Grove's JSON and
// binary answers and the step channel (WebSocket), in interleaved blocks of a rotating order. Leaves the 16 sandboxes open for the memory block.
import type { Raw } from './raw.ts';
import { N_CONC } from './raw.ts';
import { StepChannel } from '../../client/step-channel.ts';
import { createBody, createReady, groveSteps, wsSteps, type Server } from './server.ts';
import type { Fixture } from './fixture.ts';
import { settledBelow } from './procfs.ts';
import { interleave, now, pct, QUICK, r2, type Report } from './stats.ts';

// 24 blocks a side of 8 steps per sandbox. One block's steps/s moves by ±5 % from the next on the same side (the
// machine's own speed drifts: the same raw steps cost 43 and 60 ms of Chromium CPU ten minutes apart, 2026-12-03).
// With 6 blocks five full runs read 0.86–0.93; with 12, ten runs read 0.89–0.96 (mean 0.92, sd 0.022), too wide
// to tell 0.92 from 0.90. Twice the blocks narrows that by √2 (~1.5 min more per run).
const CONC_ROUNDS = QUICK ? 6 : 24;
const CONC_STEPS = QUICK ? 12 : 8 * CONC_ROUNDS;

export async function throughputBlock(raw: Raw, s: Server, fixture: Fixture, { results, say }: Report): Promise<string[]> {
  await raw.openConcurrent();
  // Four creates at a time: what is measured here is stepping; 16 cold creates at once failed at load 80.
  const ids: string[] = [];
  for (let k = 0; k < N_CONC; k += 4) {
    ids.push(...(await Promise.all(Array.from({ length: Math.min(4, N_CONC - k) }, () => createReady(s, createBody(fixture), { retryFailedStart: true })))));
  }
  await raw.concurrent(2);
  await Promise.all(ids.map((sid) => groveSteps(s, sid, 2, false, true)));
  // 32 contexts opened a moment ago keep both Chromiums busy for seconds (measured: the first block after them
  // cost 46-50 ms of Chromium CPU per step against 34-35 from then on; after 8 s idle, 35): work that is not
  // stepping, and would land on whichever side's block comes first. Measured from when it is done.
  const settledMs = await settledBelow(process.pid, 0.1, 1000, 20_000);
  // Each side's block times in run order: their sums give the figures, round by round they give the spread.
  const blocks: Record<'raw' | 'json' | 'binary' | 'ws', number[]> = { raw: [], json: [], binary: [], ws: [] };
  // The step channel (one WebSocket for all 16 sandboxes, server/step-socket.ts), its image as bytes like binary.
  const channel = await StepChannel.open({ baseUrl: s.url, apiKey: s.key });
  await Promise.all(ids.map((sid) => wsSteps(channel, sid, 2)));
  const per = Math.ceil(CONC_STEPS / CONC_ROUNDS);
  const grove = (binary: boolean) => async () => {
    const t0 = now();
    await Promise.all(ids.map((sid) => groveSteps(s, sid, per, binary, true)));
    blocks[binary ? 'binary' : 'json'].push(now() - t0);
  };
  const ws = async () => {
    const t0 = now();
    await Promise.all(ids.map((sid) => wsSteps(channel, sid, per)));
    blocks.ws.push(now() - t0);
  };
  // Rotating order, as for latency: raw, JSON, binary and step-channel blocks each take every position.
  try {
    await interleave(CONC_ROUNDS, [async () => { blocks.raw.push(await raw.concurrent(per)); }, grove(false), grove(true), ws]);
  } finally {
    await channel.close();
  }
  const total = N_CONC * per * CONC_ROUNDS;
  const rate = (ms: number[]) => total / (ms.reduce((a, b) => a + b, 0) / 1000);
  const tput = rate(blocks.json);
  const binTput = rate(blocks.binary);
  const rawTput = rate(blocks.raw);
  results.throughput_ratio_16 = r2(tput / rawTput);
  results.throughput_ratio_16_binary = r2(binTput / rawTput);
  const wsTput = rate(blocks.ws);
  results.throughput_ratio_16_ws = r2(wsTput / rawTput);
  say(`steps/s @16       grove ${tput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16} (target ≥ 0.9; ${CONC_ROUNDS} interleaved blocks, after ${(settledMs / 1000).toFixed(0)} s for the new contexts to settle)`);
  // Per round (one block a side, same steps): raw's block time over Grove's. Their spread is the machine's drift
  // within a run, which the ratio of sums averages over.
  const rounds = blocks.json.map((ms, k) => blocks.raw[k] / ms);
  say(`steps/s @16       per-round ratios: min ${pct(rounds, 0).toFixed(2)}  median ${pct(rounds, 50).toFixed(2)}  max ${pct(rounds, 100).toFixed(2)}`);
  say(`steps/s @16 binary grove ${binTput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16_binary}`);
  const wsRounds = blocks.ws.map((ms, k) => blocks.raw[k] / ms);
  say(`steps/s @16 step channel (WebSocket) grove ${wsTput.toFixed(1)}   raw ${rawTput.toFixed(1)}   ratio ${results.throughput_ratio_16_ws} (target ≥ 1.0; vs HTTP JSON ${r2(wsTput / tput)}, vs binary ${r2(wsTput / binTput)}; per-round ratios to raw min ${pct(wsRounds, 0).toFixed(2)} median ${pct(wsRounds, 50).toFixed(2)} max ${pct(wsRounds, 100).toFixed(2)})`);
  return ids;
}
