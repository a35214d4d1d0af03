// The end of a soak: the summary (printed as JSON, then as readable lines) and the JSON file with the memory samples.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ALL_FAULTS, CONC, MINUTES, OUT, RESTARTS, RESTART_WINDOW, TARGET_INJECTIONS, serverLog } from './config.ts';
import { loopStalls } from '../../server/loop-stalls.ts';
import { memory, stats } from './state.ts';

/** The servers' error lines (level ≥ 50), grouped by message and error text, most frequent first. */
function serverErrors(): { count: number; line: string }[] {
  const groups = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync(serverLog, 'utf8');
  } catch {
    return [];
  }
  for (const raw of text.split('\n')) {
    let rec: { level?: number; msg?: string; err?: { message?: string; stack?: string }; code?: string };
    try {
      rec = JSON.parse(raw) as typeof rec;
    } catch {
      continue;
    }
    if ((rec.level ?? 0) < 50) continue;
    const where = rec.err?.stack?.split('\n').slice(1, 4).map((l) => l.trim()).join(' ← ') ?? '';
    const key = `${rec.msg ?? ''}: ${rec.code ?? ''} ${(rec.err?.message ?? '').slice(0, 300)} ${where}`.slice(0, 800);
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([line, count]) => ({ count, line }));
}

/** Prints the summary of the run from t0 to end and writes it, with the memory samples, to OUT. */
export function summarize(t0: number, end: number, leakedProcs: number, leakedFolders: string[], reference: { stalls: { at: number; ms: number }[]; maxMs: number }): void {
  // Growth over the second half: the median of its last few samples against the median of its first few (one
  // sample is a point in the GC cycle, not a level).
  const half = memory.filter((m) => m.t >= t0 + (end - t0) / 2 && m.t <= end + 60_000);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const w = Math.max(1, Math.min(5, Math.floor(half.length / 4)));
  // The first and last level of one series of the second half (NaN-free samples only).
  const ends = (value: (m: (typeof memory)[number]) => number) => {
    const xs = half.map(value).filter(Number.isFinite);
    return xs.length < 2 ? [NaN, NaN] : [median(xs.slice(0, w)), median(xs.slice(-w))];
  };
  const growth = (k: 'rss' | 'heap' | 'live') => {
    const [first, last] = ends((m) => m[k]);
    return (last - first) / first;
  };
  // The same growth as a trend: the Theil–Sen slope of the live heap (the median of every pairwise slope, which the
  // swings of the in-flight state barely move) over the half's length, against its first level. Printed beside the
  // judged figure, not instead of it.
  const trend = (() => {
    const xs = half.filter((m) => Number.isFinite(m.live));
    const slopes: number[] = [];
    for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) if (xs[j].t > xs[i].t) slopes.push((xs[j].live - xs[i].live) / (xs[j].t - xs[i].t));
    const [first] = ends((m) => m.live);
    return slopes.length ? (median(slopes) * (xs[xs.length - 1].t - xs[0].t)) / first : NaN;
  })();
  // Where a growth of the live heap is: each V8 space's level at both ends (MB), the spaces that hold ≥ 1 MB.
  const spaceNames = Object.keys(half[half.length - 1]?.spaces ?? {});
  const bySpace = Object.fromEntries(
    spaceNames
      .map((n) => [n, ends((m) => m.spaces?.[n] ?? NaN).map((x) => Number((x / 1e6).toFixed(1)))] as const)
      .filter(([, [a, b]]) => Math.max(a, b) >= 1),
  );
  // The server's stalls over every process of the run (each restart starts its count again), the longest one,
  // and the machine's disk-stall time; the soak's own stalls from its own monitor.
  // Per sampling interval: the server's new stalls (each restart starts its counts again), how many of them its
  // loop's thread spent running (its own work), and whether the idle reference loop stalled in the same interval.
  let serverStalls = 0;
  let serverBusyStalls = 0;
  let stallIntervals = 0;
  let stallIntervalsShared = 0;
  const delta = (i: number, k: 'stalls' | 'busyStalls') => {
    const cur = memory[i][k];
    const prev = i > 0 ? memory[i - 1][k] : 0;
    return !Number.isFinite(cur) ? 0 : Number.isFinite(prev) && cur >= prev ? cur - prev : cur;
  };
  for (let i = 0; i < memory.length; i++) {
    const n = delta(i, 'stalls');
    serverStalls += n;
    serverBusyStalls += delta(i, 'busyStalls');
    if (n > 0) {
      stallIntervals++;
      const from = i > 0 ? memory[i - 1].t : t0;
      if (reference.stalls.some((r) => r.at > from && r.at <= memory[i].t)) stallIntervalsShared++;
    }
  }
  const loopMaxS = Math.max(0, ...memory.map((m) => m.loopMaxS).filter(Number.isFinite));
  // The machine's counters (machine.ts) as the samples saw them: disk full-stall time, and the CPU time the host
  // took over the run and the most in any one sampling interval.
  const counter = (k: 'ioFullUs' | 'stolenMs') => memory.map((m) => m[k]).filter(Number.isFinite);
  const runTotal = (xs: number[]) => (xs.length > 1 ? xs[xs.length - 1] - xs[0] : NaN);
  const ioFullS = runTotal(counter('ioFullUs')) / 1e6;
  const st = counter('stolenMs');
  const stolenS = runTotal(st) / 1000;
  let stolenMaxS = 0;
  for (let i = 1; i < st.length; i++) stolenMaxS = Math.max(stolenMaxS, (st[i] - st[i - 1]) / 1000);
  const own = loopStalls();
  const injections = Object.fromEntries(ALL_FAULTS.map((f) => [f, stats.injected[f] ?? 0]));
  const loads = memory.map((m) => m.load1);
  const summary = {
    minutes: MINUTES,
    concurrency: CONC,
    ...stats,
    injected: injections,
    injections_target: TARGET_INJECTIONS,
    injections_below_target: ALL_FAULTS.filter((f) => injections[f] < TARGET_INJECTIONS),
    load_average_1m: { mean: Number((loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length)).toFixed(1)), max: Number(Math.max(...loads).toFixed(1)) },
    server_event_loop_stalls: serverStalls,
    server_event_loop_max_delay_s: Number(loopMaxS.toFixed(2)),
    server_event_loop_busy_stalls: serverBusyStalls,
    server_stall_intervals: stallIntervals,
    server_stall_intervals_reference_stalled_too: stallIntervalsShared,
    reference_loop_stalls: reference.stalls.length,
    reference_loop_max_delay_s: Number((reference.maxMs / 1000).toFixed(2)),
    soak_event_loop_stalls: own.count,
    soak_event_loop_max_delay_s: Number((own.maxMs / 1000).toFixed(2)),
    soak_event_loop_recent_stalls: own.recent.map((s) => ({ at_min: Number(((s.at - t0) / 60_000).toFixed(2)), ms: s.ms })),
    machine_io_full_stall_s: Number(ioFullS.toFixed(1)),
    machine_cpu_stolen_s: Number(stolenS.toFixed(1)),
    machine_cpu_stolen_max_interval_s: Number(stolenMaxS.toFixed(1)),
    leaked_processes: leakedProcs,
    leaked_temp_folders: leakedFolders,
    server_errors: serverErrors(),
    memory_samples: memory.length,
    rss_mb_first: memory[0] ? Math.round(memory[0].rss / 1e6) : null,
    rss_mb_last: memory.length ? Math.round(memory[memory.length - 1].rss / 1e6) : null,
    heap_mb_first: memory[0] ? Math.round(memory[0].heap / 1e6) : null,
    heap_mb_last: memory.length ? Math.round(memory[memory.length - 1].heap / 1e6) : null,
    heap_growth_second_half: Number(growth('live').toFixed(3)),
    heap_live_trend_second_half: Number(trend.toFixed(3)),
    heap_used_growth_second_half: Number(growth('heap').toFixed(3)),
    rss_growth_second_half: Number(growth('rss').toFixed(3)),
    heap_live_mb_by_space_second_half: bySpace,
  };
  console.log(JSON.stringify(summary, null, 2));
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  const mb = (x: number) => Math.round(x / 1e6);
  // Memory over time: one line per tenth of the run.
  const timeline: string[] = [];
  for (let k = 0; k <= 10; k++) {
    const at = t0 + (k * (end - t0)) / 10;
    const m = memory.find((x) => x.t >= at - 1000);
    if (m) timeline.push(`    t=${((m.t - t0) / 60_000).toFixed(1).padStart(5)} min  rss ${String(mb(m.rss)).padStart(4)} MB  heap live ${String(mb(m.live)).padStart(4)} MB (used ${String(mb(m.heap)).padStart(4)} MB)  load ${m.load1.toFixed(1)}`);
  }
  console.log(
    [
      `soak summary (${MINUTES} min, concurrency ${CONC})`,
      `  injections: ${ALL_FAULTS.map((f) => `${f} ${injections[f]}`).join(', ')}  (target ≥ ${TARGET_INJECTIONS} each: ${summary.injections_below_target.length ? `MISSED ${summary.injections_below_target.join(', ')}` : 'met'})`,
      `  episodes ${stats.episodes}: ok ${stats.episodes_ok}, attributed ${JSON.stringify(stats.episodes_attributed)}, lost without attribution ${stats.episodes_lost_unattributed}`,
      `  steps ${stats.steps}: over deadline ${stats.steps_over_deadline} (worst: ${Math.round(stats.worst_step_over_budget_ms)} ms against its budget)` +
        (stats.steps_over_deadline_in_snapshot ? `; ${stats.steps_over_deadline_in_snapshot} more overlapped a heap snapshot, which stops the server, counted apart` : ''),
      ...stats.over_deadline_steps.map((s) => `    over: ${s.actions} at t=${((s.at - t0) / 60_000).toFixed(2)} min took ${s.ms} ms (budget ${s.budget_ms} ms; host stole ${s.stolen_ms} ms of CPU meanwhile)`),
      `  event loop stalls ≥ 1 s: server ${serverStalls} (longest ${summary.server_event_loop_max_delay_s} s), this soak ${own.count} (longest ${summary.soak_event_loop_max_delay_s} s${own.recent.length ? `; at ${own.recent.map((s) => `${((s.at - t0) / 60_000).toFixed(1)} min ${s.ms} ms`).join(', ')}` : ''}); machine disk full-stall ${summary.machine_io_full_stall_s} s`,
      `  server stalls by cause: ${serverBusyStalls} of ${serverStalls} while its loop's thread ran (its own synchronous work), the rest without CPU; ` +
        `an idle Node process beside it stalled ${reference.stalls.length} times (longest ${summary.reference_loop_max_delay_s} s), in ${stallIntervalsShared} of the ${stallIntervals} sampling intervals with a server stall`,
      `  CPU time the host took from this machine (steal, per CPU): ${summary.machine_cpu_stolen_s} s over the run, at most ${summary.machine_cpu_stolen_max_interval_s} s in one sampling interval`,
      `  leaked processes ${leakedProcs}, leaked temp folders ${summary.leaked_temp_folders.length}`,
      `  server memory over time (one process after the last restart at ${((RESTART_WINDOW * MINUTES * RESTARTS) / (RESTARTS + 1)).toFixed(1)} min):`,
      ...timeline,
      `  second half: heap live after full GC ${pct(summary.heap_growth_second_half)} (target ≤ +5 %; as a Theil–Sen trend ${pct(summary.heap_live_trend_second_half)}), heap used as sampled ${pct(summary.heap_used_growth_second_half)}, rss ${pct(summary.rss_growth_second_half)}`,
      `  second half, live heap by V8 space (MB, first → last): ${Object.entries(bySpace).map(([n, [a, b]]) => `${n} ${a} → ${b}`).join(', ') || 'not reported'}`,
      `  load average (1 min) during the run: mean ${summary.load_average_1m.mean}, max ${summary.load_average_1m.max} (2 cores)`,
      `  server error lines (level ≥ 50), by kind: ${summary.server_errors.length ? '' : 'none'}`,
      ...summary.server_errors.map((e) => `    ${e.count} × ${e.line.slice(0, 400)}`),
    ].join('\n'),
  );
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify({ ...summary, memory }, null, 2));
}
