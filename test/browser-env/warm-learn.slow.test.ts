// A warm pool with no configured size learns the wave (issue 35): after one wave of default creates, the next
// wave of the same size is served from warm contexts; with learning off, none is.
import { afterEach, describe, expect, it } from 'vitest';
import { openEnv, type TestEnv } from './support.ts';

let t: TestEnv | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function wave(env: TestEnv, n: number): Promise<void> {
  const sbs = await Promise.all(Array.from({ length: n }, () => env.create({ network: { block_network: true } })));
  await Promise.all(sbs.map((s) => s.close()));
}

describe('the warm pool learns the wave', () => {
  it('sizes itself to the largest wave of creates seen and serves the next wave warm', async () => {
    t = await openEnv({ warmPool: 0, warmPoolMaxMb: 1024 });
    expect(t.env.stats().warm_target).toBe(0);
    await wave(t, 4);
    expect(t.env.stats().warm_target).toBe(4);
    await t.env.warmed();
    expect(t.env.stats().warm_ready).toBe(4);
    const before = t.env.stats().warm_hits_total;
    await wave(t, 4);
    expect(t.env.stats().warm_hits_total - before).toBe(4);
  }, 120_000);

  it('with learning off (budget 0) keeps no warm context', async () => {
    t = await openEnv({ warmPool: 0, warmPoolMaxMb: 0 });
    await wave(t, 3);
    await t.env.warmed();
    expect(t.env.stats()).toMatchObject({ warm_target: 0, warm_ready: 0, warm_hits_total: 0 });
  }, 120_000);
});
