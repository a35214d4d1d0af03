// Runner benchmark: episodes per minute and steps per second of the benchmark runner on the offline suite
// with the scripted policy, at several concurrencies, and the runner's own overhead per step (what it adds to
// each step's critical path) relative to the environment step it waits for, and the background recording cost.
//
//   npm run bench:runner                       concurrency 1, 4, 16
//   npm run bench:runner -- --quick            fewer episodes per level (smoke run)
//   npm run bench:runner -- --levels 1,2       other concurrencies
//
// One embedded Grove server (real Chromium) and the offline sites run in this process for all levels.
// Results: a table on stdout and bench/results/runner.json.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GroveClient } from '../client/index.ts';
import { startEmbeddedGrove } from '../cli/commands/run-embedded.ts';
import { fetchOfflineState, offlineRuleJudge } from '../judges/rules/offline.ts';
import { runBenchmark } from '../runner/benchmark.ts';
import { ScriptedPolicy } from '../runner/scripted-policy.ts';
import { percentile } from '../runner/summary.ts';
import { EpisodeResult } from '../runner/types.ts';
import { startSites } from '../sites/server.ts';
import { loadOfflineTasks, startUrlFor } from '../sites/tasks.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { quick: { type: 'boolean' }, levels: { type: 'string' }, episodes: { type: 'string' } },
});
const LEVELS = (values.levels ?? '1,4,16').split(',').map(Number);
const QUICK = values.quick === true;

/** Episodes per level: enough to keep every worker busy a while, bounded by the suite. */
function episodesFor(c: number, suite: number): number {
  if (values.episodes) return Math.min(suite, Number(values.episodes));
  return Math.min(suite, QUICK ? Math.max(2, c) : Math.max(6, 2 * c));
}

interface LevelResult {
  concurrency: number;
  episodes: number;
  succeeded: number;
  wall_s: number;
  episodes_per_min: number;
  steps: number;
  steps_per_s: number;
  /** Per step, ms (means over all steps of the level). */
  env_step_ms: number;
  env_step_p90_ms: number;
  server_step_ms: number;
  policy_ms: number;
  loop_ms: number;
  /** loop − policy − env: what the runner itself adds to each step's critical path. */
  runner_overhead_ms: number;
  runner_overhead_pct_of_env: number;
  /** Background recording per step (frame + steps.jsonl fsync + visual diff), overlapping the next step. */
  record_ms: number;
  reset_ms: number;
  termination_reasons: Record<string, number>;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-runner-bench-'));
  const grove = await startEmbeddedGrove({ maxSandboxes: Math.max(32, 2 * Math.max(...LEVELS)), dataDir: path.join(tmp, 'server') });
  const sites = await startSites();
  const results: LevelResult[] = [];
  try {
    const env = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey });
    const all = loadOfflineTasks(sites.url);
    const host = new URL(sites.url).host;
    const judge = offlineRuleJudge(sites.url);
    for (const c of LEVELS) {
      const n = episodesFor(c, all.length);
      // Spread the sample across the three sites.
      const tasks = Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]);
      const out = path.join(tmp, `c${c}`);
      process.stderr.write(`concurrency ${c}: ${n} episodes…\n`);
      const t0 = performance.now();
      const r = await runBenchmark({
        suite: 'offline',
        tasks,
        env,
        policy: () => new ScriptedPolicy(),
        judges: [judge],
        judgeState: (_t, s) => fetchOfflineState(sites.url, s),
        outDir: out,
        concurrency: c,
        maxSteps: 40,
        sandbox: () => ({ som: true, network: { allow: [host] } }),
        startUrl: (t, s) => startUrlFor(t, s),
      });
      const wall = (performance.now() - t0) / 1000;
      const eps = readdirSync(path.join(out, 'results')).map((f) => EpisodeResult.parse(JSON.parse(readFileSync(path.join(out, 'results', f), 'utf8'))));
      const st = eps.flatMap((e) => e.step_timings);
      const envMs = st.map((s) => s.env).filter((x) => x > 0);
      const steps = st.length;
      const overhead = st.map((s) => s.wall - s.policy - s.env);
      results.push({
        concurrency: c,
        episodes: n,
        succeeded: r.summary.succeeded,
        wall_s: wall,
        episodes_per_min: (n / wall) * 60,
        steps,
        steps_per_s: steps / wall,
        env_step_ms: mean(envMs),
        env_step_p90_ms: percentile([...envMs].sort((a, b) => a - b), 90),
        server_step_ms: mean(st.map((s) => s.server ?? 0).filter((x) => x > 0)),
        policy_ms: mean(st.map((s) => s.policy)),
        loop_ms: mean(st.map((s) => s.wall)),
        runner_overhead_ms: mean(overhead),
        runner_overhead_pct_of_env: (mean(overhead) / Math.max(1e-9, mean(envMs))) * 100,
        record_ms: mean(st.map((s) => s.record ?? 0).filter((x) => x > 0)),
        reset_ms: mean(eps.map((e) => e.reset_ms)),
        termination_reasons: r.summary.termination_reasons,
      });
      const failed = r.summary.episodes.filter((e) => e.success !== true);
      if (failed.length) {
        // Failed episodes make the timing numbers meaningless (no steps); say why instead of hiding it.
        process.stderr.write(`  ${failed.length} episode(s) did not succeed: ${failed.slice(0, 3).map((e) => `${e.task_id} ${e.termination.reason} ${e.termination.detail ?? ''}`).join(' | ')}\n`);
      }
    }
  } finally {
    await sites.close();
    await grove.close();
    if (process.env.GROVE_KEEP_TMP === '1') process.stderr.write(`kept ${tmp}\n`);
    else rmSync(tmp, { recursive: true, force: true });
  }

  const head = ['conc', 'episodes', 'ok', 'wall s', 'ep/min', 'steps', 'steps/s', 'env step ms', 'p90', 'server ms', 'policy ms', 'runner ms', 'runner/env', 'record ms', 'reset ms'];
  const rows = results.map((r) => [
    r.concurrency, r.episodes, r.succeeded, r.wall_s.toFixed(1), r.episodes_per_min.toFixed(2), r.steps, r.steps_per_s.toFixed(2),
    r.env_step_ms.toFixed(0), r.env_step_p90_ms.toFixed(0), r.server_step_ms.toFixed(0), r.policy_ms.toFixed(2),
    r.runner_overhead_ms.toFixed(1), `${r.runner_overhead_pct_of_env.toFixed(1)}%`, r.record_ms.toFixed(0), r.reset_ms.toFixed(0),
  ].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  process.stdout.write(`Runner benchmark: offline suite, scripted policy, embedded server (${os.cpus().length} cores)\n`);
  process.stdout.write(`${line(head)}\n${rows.map(line).join('\n')}\n`);
  process.stdout.write(
    'env step = client round trip of POST /step; server = observation.timings.total; runner = loop − policy − env ' +
      '(what the runner adds to each step on the critical path), shown as a share of the env step; record = writing the ' +
      'step record (frame, steps.jsonl fsync, visual diff) in the background while the next step runs.\n',
  );
  const dir = path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'runner.json');
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, quick: QUICK, levels: results }, null, 2));
  process.stdout.write(`written ${path.relative(process.cwd(), file)}\n`);
}

// Ends by the exit code (process.exit() could cut piped output); the unref'd timer only ends a process that a
// leftover handle would keep alive.
const finish = (code: number) => {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 5_000).unref();
};
main().then(
  () => finish(0),
  (err: unknown) => {
    process.stderr.write(`runner bench failed: ${(err as Error).stack ?? String(err)}\n`);
    finish(1);
  },
);
