// Core benchmark (issue: foundation). Everything is measured in one run on the same fixture page and printed
// as ratios against raw in-process Playwright/CDP doing the same work. One file per block:
//   latency.ts     step p50/p99, JSON and binary answers      throughput.ts  steps/s with 16 sandboxes
//   memory.ts      PSS per idle session                       creates.ts     create → ready, cold and warm
//   churn.ts       create/step/delete cycles (leaks, RSS)     waves.ts       RL waves: 16 creates / resets
//   overload.ts    32 / 64 episodes at once: admission control, screenshots missing, steps past their deadline
// The Grove server runs as a child process (`grove serve`, server.ts), so its RSS is measured on its own; the
// raw baseline (raw.ts) runs Chromium from this process with the same flags. Latency and throughput are
// measured in alternating raw/Grove blocks in a rotating order, so that drift on the machine moves both alike.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { churnBlock } from './churn.ts';
import { coldCreateBlock, warmCreateBlock } from './creates.ts';
import { startFixture } from './fixture.ts';
import { latencyBlock } from './latency.ts';
import { memoryBlock } from './memory.ts';
import { overloadBlock } from './overload.ts';
import { allChromiumPids } from './procfs.ts';
import { startRaw } from './raw.ts';
import { failedStarts, refusedCreates, ROOT, startServer, stepErrors, type Server } from './server.ts';
import { now, QUICK, r2, VIEWPORT, type Report } from './stats.ts';
import { throughputBlock } from './throughput.ts';
import { wavesBlock } from './waves.ts';

/** The figures saved in bench/results/core.json, in this order. */
const SAVED = [
  'step_p50_ratio', 'step_p99_ratio', 'create_warm_p50_ms', 'create_cold_p50_ms', 'throughput_ratio_16', 'mem_per_session_mb',
  'churn_leaked_processes', 'churn_rss_growth_pct', 'mem_tree_per_session_mb', 'churn_step_errors', 'churn_heap_growth_pct',
  'step_p50_ratio_binary', 'step_p99_ratio_binary', 'throughput_ratio_16_binary', 'throughput_ratio_16_ws', 'wave_create_start_url_ratio', 'wave_reset_ratio',
  'failed_starts', 'step_block_errors', 'step_p50_ratio_back_to_back', 'step_p50_ratio_binary_back_to_back',
  ...[32, 64].flatMap((n) => ['accepted', 'refused_503', 'refused_after_queue', 'completed', 'screenshots_missing', 'worst_step_past_deadline_ms'].map((k) => `overload_${n}_${k}`)),
] as const;

export interface CoreRun {
  figures: Record<string, unknown>;
  lines: string[];
}

/** One block alone, for iterating on it: GROVE_BENCH_ONLY=waves, churn, overload, throughput or latency (nothing is saved then). */
const ONLY = process.env.GROVE_BENCH_ONLY;

/** Runs every block (or the one GROVE_BENCH_ONLY names); prints progress to stderr. */
/** Creates the server refused (503) while a block set up, then admitted after their Retry-After: printed when any. */
function sayRefused(report: Report): void {
  if (refusedCreates.length) report.say(`creates refused with 503 while setting up, sent again after Retry-After: ${refusedCreates.length} (${refusedCreates.slice(0, 2).join('; ')})`);
}

export async function runCore(): Promise<CoreRun> {
  const fixture = await startFixture();
  const results: Record<string, number> = {};
  const lines: string[] = [];
  const blockS: Record<string, number> = {};
  const report: Report = { results, say: (l) => { lines.push(l); process.stderr.write(`  ${l}\n`); } };
  /** Times a block; its duration is printed as progress and saved (block_s), not among the summary lines. */
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t0 = now();
    try {
      return await f();
    } finally {
      blockS[name] = Math.round((now() - t0) / 1000);
      process.stderr.write(`  [${name}: ${blockS[name]} s]\n`);
    }
  };
  const started = now();
  try {
    if (ONLY === 'waves' || ONLY === 'churn' || ONLY === 'overload') {
      const block = { waves: wavesBlock, churn: churnBlock, overload: overloadBlock }[ONLY];
      await timed(ONLY, () => block(fixture, report));
      return { figures: {}, lines };
    }
    // Step latency and throughput: raw Playwright and Grove (no warm pool) measured in alternating blocks.
    const raw = await startRaw(fixture.url);
    let s: Server;
    try {
      // One Chromium process, as the raw baseline has (the default pool of 2 trades a little CPU for isolation).
      s = await startServer(['--warm-pool', '0', '--warm-pool-max-mb', '0', '--browser-processes', '1']);
    } catch (e) {
      await raw.close();
      throw e;
    }
    try {
      if (ONLY === 'throughput' || ONLY === 'latency') {
        if (ONLY === 'throughput') await timed('throughput', () => throughputBlock(raw, s, fixture, report));
        else await timed('latency', () => latencyBlock(raw, s, fixture, report));
        sayRefused(report);
        return { figures: {}, lines };
      }
      await timed('latency', () => latencyBlock(raw, s, fixture, report));
      const ids = await timed('throughput', () => throughputBlock(raw, s, fixture, report));
      await raw.close();
      await timed('memory', () => memoryBlock(s, ids, report));
      await timed('create_cold', () => coldCreateBlock(s, fixture, report));
    } finally {
      await raw.close();
      await s.stop();
    }
    await timed('churn', () => churnBlock(fixture, report));
    await timed('create_warm', () => warmCreateBlock(fixture, report));
    await timed('waves', () => wavesBlock(fixture, report));
    await timed('overload', () => overloadBlock(fixture, report));
    report.say(`chromium processes left after the servers stopped: ${allChromiumPids().length}`);
    if (failedStarts.length) report.say(`sandboxes created again for the step blocks (start page failed): ${failedStarts.length} (${failedStarts.join('; ')})`);
    results.failed_starts = failedStarts.length;
    sayRefused(report);
    if (stepErrors.length) report.say(`step answers with an error in the latency/throughput blocks (timed all the same): ${stepErrors.length} (${[...new Set(stepErrors)].slice(0, 3).join('; ')})`);
    results.step_block_errors = stepErrors.length;
  } finally {
    await fixture.close();
  }
  const figures: Record<string, unknown> = {};
  for (const k of SAVED) figures[k] = results[k];
  Object.assign(figures, {
    load1: r2(os.loadavg()[0]),
    quick: QUICK,
    measured_at: new Date().toISOString(),
    total_s: Math.round((now() - started) / 1000),
    block_s: blockS,
  });
  return { figures, lines };
}

export async function main(): Promise<void> {
  const { figures, lines } = await runCore();
  if (ONLY) {
    // Iterating on one part: that block alone, nothing written.
    process.stdout.write(lines.join('\n') + '\n');
    return;
  }
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  if (!QUICK) writeFileSync(path.join(ROOT, 'bench/results/core.json'), JSON.stringify(figures, null, 2) + '\n');
  process.stdout.write(`\nGrove core benchmark (${QUICK ? 'quick' : 'full'}; ${os.cpus().length} cores, viewport ${VIEWPORT.width}x${VIEWPORT.height})\n`);
  for (const l of lines) process.stdout.write('  ' + l + '\n');
  process.stdout.write('\n' + JSON.stringify(figures) + '\n');
}
