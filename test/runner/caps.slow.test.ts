// Benchmark-level limits against the real server: cost cap, time cap, and resume of aborted episodes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runBenchmark } from '../../runner/benchmark.ts';
import type { Policy, PolicyDecision } from '../../runner/policy.ts';
import { siteTask, startHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const answerAtOnce = (tokens = 0): Policy => ({
  name: 'answer',
  start() {},
  next: async (): Promise<PolicyDecision> => ({ output: 'done', actions: [{ action: 'answer', text: 'done' }], prompt_tokens: tokens, completion_tokens: 0 }),
});

describe('benchmark caps', () => {
  it('stops starting episodes once the token cost reaches --max-cost-usd', async () => {
    const tasks = [siteTask(h, 'c1'), siteTask(h, 'c2'), siteTask(h, 'c3')];
    const r = await runBenchmark({
      suite: 'offline', tasks, env: h.client, policy: () => answerAtOnce(1_000_000), outDir: join(h.tmp, 'cost'),
      concurrency: 1, maxSteps: 3, sandbox: () => ({ network: { allow: [h.sitesHost] } }),
      price: { inputPerMTok: 1, outputPerMTok: 1 }, maxCostUsd: 1,
    });
    expect(r.summary).toMatchObject({ total: 3, finished: 1, not_started: 2, succeeded: 1, cost_usd: 1 });
    expect(r.summary.stopped_early).toBe('cost cap of $1 reached');
  });

  it('aborts running episodes at the time cap; resume reruns the aborted ones', async () => {
    const tasks = [siteTask(h, 't1'), siteTask(h, 't2'), siteTask(h, 't3')];
    const out = join(h.tmp, 'time');
    const waiting: Policy = { name: 'wait', start() {}, next: async () => ({ output: 'w', actions: [{ action: 'wait', ms: 300 }] }) };
    const r = await runBenchmark({
      suite: 'offline', tasks, env: h.client, policy: () => waiting, outDir: out, concurrency: 2, maxSteps: 1000,
      sandbox: () => ({ network: { allow: [h.sitesHost] } }), maxMinutes: 0.1,
    });
    expect(r.summary.stopped_early).toBe('time cap of 0.1 min reached');
    expect(r.summary.finished).toBe(2);
    expect(r.summary.not_started).toBe(1);
    expect(r.summary.termination_reasons).toEqual({ aborted: 2 });
    // Interrupted by the operator's cap: counted as aborted, not as environment failures.
    expect([r.summary.aborted, r.summary.infra_failures]).toEqual([2, 0]);
    expect(r.summary.success_rate).toBe(0);
    expect(await h.client.listSandboxes()).toEqual([]);

    const started: string[] = [];
    const again = await runBenchmark({
      suite: 'offline', tasks, env: h.client, outDir: out, concurrency: 2, maxSteps: 3, resume: true,
      policy: (t) => {
        started.push(t.id);
        return answerAtOnce();
      },
      sandbox: () => ({ network: { allow: [h.sitesHost] } }),
    });
    expect(started.sort()).toEqual(['t1', 't2', 't3']);
    expect(again.summary).toMatchObject({ finished: 3, succeeded: 3 });
    expect(again.summary.stopped_early).toBeUndefined();
  });
});

describe('server at capacity', () => {
  it('waits for a sandbox slot instead of failing the episode', async () => {
    const { startEmbeddedGrove } = await import('../../cli/commands/run-embedded.ts');
    const { GroveClient } = await import('../../client/index.ts');
    const small = await startEmbeddedGrove({ browserProcesses: 1, maxSandboxes: 1, dataDir: join(h.tmp, 'small'), env: {} });
    try {
      const env = new GroveClient({ baseUrl: small.url, apiKey: small.apiKey });
      const r = await runBenchmark({
        suite: 'offline', tasks: [siteTask(h, 'k1'), siteTask(h, 'k2'), siteTask(h, 'k3')], env, policy: () => answerAtOnce(),
        outDir: join(h.tmp, 'capacity'), concurrency: 3, maxSteps: 3, sandbox: () => ({ network: { allow: [h.sitesHost] } }),
        retry: { maxRestarts: 0 },
      });
      expect(r.summary).toMatchObject({ finished: 3, succeeded: 3, infra_failures: 0 });
      expect(r.summary.episodes.map((e) => e.attempts)).toEqual([1, 1, 1]);
    } finally {
      await small.close();
    }
  });
});
