// Claw-Eval path benchmark: trials per minute through `--claw-eval` (per trial: the task's FastAPI services started
// in a bubblewrap sandbox, the scripted trajectory over the tool bridge, audit read, services stopped, the task's
// grader run by Grove's driver) at concurrency 1 and 8, blocks interleaved (1, 8, 1, 8, …) so drift hits both.
// Default checkout: Grove's test fixture (test/claw-env/fixtures/claw-eval-checkout, judge-free tasks); with
// --claw-eval DIR a real checkout's ready, judge-free tasks (a reference-like trajectory: every read tool once).
// The Python env is built once into --cache (default ~/.cache/grove) before timing. Read ratios, not absolutes.
//
//   npm run bench:claw-eval   [--claw-eval DIR] [--trials N per block, default 16] [--blocks B, default 2]
//                             [--index-url URL] [--cache DIR]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { importFiles, loadClawEvalCheckout, markMissingDeps, type ClawEvalTask } from '../claw-env/claw-eval/checkout.ts';
import { ensureClawEvalPython, probeDeps, writeDriver } from '../claw-env/claw-eval/pyenv.ts';
import { runClawEval } from '../runner/claw-eval/run.ts';
import { ScriptedClawEvalPolicy } from '../runner/claw-eval/trial.ts';

const { values } = parseArgs({ options: { 'claw-eval': { type: 'string' }, trials: { type: 'string' }, blocks: { type: 'string' }, 'index-url': { type: 'string' }, cache: { type: 'string' } } });
const ROOT = path.resolve(values['claw-eval'] ?? path.join(import.meta.dirname, '..', 'test', 'claw-env', 'fixtures', 'claw-eval-checkout'));
const TRIALS = Number(values.trials ?? 16);
const BLOCKS = Number(values.blocks ?? 2);
const READ = /(list|get|search|query|read|view|fetch)/i;

const py = await ensureClawEvalPython(ROOT, { cacheDir: values.cache ?? path.join(os.homedir(), '.cache', 'grove'), indexUrl: values['index-url'], log: (l) => process.stderr.write(l) });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-claw-eval-'));
try {
  const driver = writeDriver(tmp);
  const co = loadClawEvalCheckout(ROOT);
  const ready0 = co.tasks.filter((t) => t.status === 'ready');
  const ready = markMissingDeps(co.tasks, await probeDeps(py, driver, ROOT, ready0.map((t) => ({ id: t.id, files: importFiles(ROOT, t) })))).filter((t) => t.status === 'ready' && !t.needs_judge && !t.sandbox && !t.user_agent && !/raises|isolation|slow|hog|bomb/.test(t.id));
  if (ready.length === 0) throw new Error(`${ROOT}: no ready judge-free task`);
  const policy = new ScriptedClawEvalPolicy((t: ClawEvalTask) => ({
    calls: t.tools.filter((x) => READ.test(x.name) && !((x.input_schema as { required?: unknown[] }).required?.length)).map((x) => ({ name: x.name, args: {} })),
    answer: 'Done.',
  }));
  const pick = (n: number) => Array.from({ length: n }, (_, i) => ready[i % ready.length]!);
  const rows: { concurrency: number; trials: number; errored: number; seconds: number; per_minute: number }[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    for (const concurrency of [1, 8]) {
      const t0 = performance.now();
      const { results } = await runClawEval({ root: ROOT, python: py, driver, policy, tasks: pick(TRIALS), trials: 1, concurrency });
      const s = (performance.now() - t0) / 1000;
      const row = { concurrency, trials: results.length, errored: results.filter((r) => r.error).length, seconds: Math.round(s * 10) / 10, per_minute: Math.round(((results.length * 60) / s) * 10) / 10 };
      rows.push(row);
      console.log(`block ${b + 1} concurrency ${concurrency}: ${row.trials} trials (${row.errored} errored) in ${row.seconds} s = ${row.per_minute} trials/minute`);
    }
  }
  const mean = (c: number) => {
    const r = rows.filter((x) => x.concurrency === c);
    return Math.round((r.reduce((a, x) => a + x.per_minute, 0) / r.length) * 10) / 10;
  };
  console.log(`trials/minute: concurrency 1 ${mean(1)}, concurrency 8 ${mean(8)} (×${(mean(8) / mean(1)).toFixed(2)}); load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${os.cpus().length} CPUs`);
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(path.join(import.meta.dirname, 'results', 'claw-eval.json'), JSON.stringify({ checkout: ROOT, tasks: ready.map((t) => t.id), rows, mean: { c1: mean(1), c8: mean(8) }, loadavg: os.loadavg(), at: new Date().toISOString() }, null, 2));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
