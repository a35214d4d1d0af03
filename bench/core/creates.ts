// Blocks 4 and 6: create → ready, cold (no warm pool, Chromium running) and from the warm pool.
import type { Fixture } from './fixture.ts';
import { api, createBody, createReady, startServer, timeCreates, type Server } from './server.ts';
import { pct, QUICK, r2, type Report } from './stats.ts';

const N_CREATE = QUICK ? 10 : 30;

export async function coldCreateBlock(s: Server, fixture: Fixture, { results, say }: Report): Promise<void> {
  const cold = await timeCreates(s, fixture, N_CREATE, 0);
  results.create_cold_p50_ms = r2(pct(cold, 50));
  say(`create→ready cold p50 ${results.create_cold_p50_ms} ms (target ≤ 400)`);
}

/** On a server of its own with a warm pool of 2; the pool refills between creates, as between episodes. */
export async function warmCreateBlock(fixture: Fixture, { results, say }: Report): Promise<void> {
  const s = await startServer(['--warm-pool', '2']);
  try {
    await createReady(s, createBody(fixture, false)).then((sid) => api(s, 'DELETE', `/sandboxes/${sid}`));
    const warm = await timeCreates(s, fixture, N_CREATE, 400);
    results.create_warm_p50_ms = r2(pct(warm, 50));
    say(`create→ready warm p50 ${results.create_warm_p50_ms} ms (target ≤ 60)`);
  } finally {
    await s.stop();
  }
}
