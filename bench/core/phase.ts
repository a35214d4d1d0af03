// Step latency against the idle time before the step (the frame-phase effect behind the latency block's think
// times; bench/core/README.md). A tool, not a block:
//
//   node --import tsx bench/core/phase.ts [--rounds 8] [--per 6]
//
// Raw Playwright (click + CDP capture, in this process) and Grove's JSON step (`grove serve` as the bench starts
// it) each wait 0, 2, … 16 ms before a step, in interleaved rounds; prints the p50 per idle time and per side.
import { startFixture } from './fixture.ts';
import { startRaw } from './raw.ts';
import { api, clickAction, createBody, createReady, startServer } from './server.ts';
import { now, pct } from './stats.ts';
import type { Action } from '../../protocol/action.ts';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const ROUNDS = opt('rounds', 8);
const PER = opt('per', 6);
const GAPS = [0, 2, 4, 6, 8, 10, 12, 14, 16];

/** Waits `ms` exactly (a timer would add its own ~1 ms of jitter to a 2 ms idle). */
const spin = (ms: number) => {
  const end = now() + ms;
  while (now() < end);
};

async function main(): Promise<void> {
  const fixture = await startFixture();
  const raw = await startRaw(fixture.url);
  const s = await startServer(['--warm-pool', '0', '--warm-pool-max-mb', '0', '--browser-processes', '1']);
  try {
    const id = await createReady(s, createBody(fixture), { retryFailedStart: true });
    let i = 0;
    const sides = {
      raw: async () => void (await raw.steps(1)),
      grove: async () => void (await s.client.step(id, { action: clickAction(i++) as Action })),
    };
    const lat: Record<string, number[]> = {};
    for (let k = 0; k < 10; k++) for (const run of Object.values(sides)) await run();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, run] of Object.entries(sides)) {
        for (const gap of GAPS) {
          for (let k = 0; k < PER; k++) {
            spin(gap);
            const t = now();
            await run();
            (lat[`${name} ${gap}`] ??= []).push(now() - t);
          }
        }
      }
    }
    await api(s, 'DELETE', `/sandboxes/${id}`);
    process.stdout.write(`idle before the step (ms)   ${GAPS.map((g) => String(g).padStart(6)).join('')}\n`);
    for (const name of Object.keys(sides)) {
      process.stdout.write(`${`${name} step p50 (ms)`.padEnd(28)}${GAPS.map((g) => pct(lat[`${name} ${g}`], 50).toFixed(1).padStart(6)).join('')}\n`);
    }
  } finally {
    await s.stop();
    await raw.close();
    await fixture.close();
  }
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exitCode = 1;
});
