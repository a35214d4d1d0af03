// Task-loader benchmark (issue: benchmarks). Loads the three real task files from ../shared/datasets with
// Grove's loaders and, as the baseline in the same run, reads and JSON-parses the same files with no
// validation or normalisation. Prints median times and the ratio loader / baseline.
//
//   npm run bench:tasks            (--runs N, default 15)
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadTasks } from '../tasks/index.ts';
import type { Suite } from '../protocol/task.ts';

const { values } = parseArgs({ options: { runs: { type: 'string' }, data: { type: 'string' } } });
const RUNS = Number(values.runs ?? 15);
const DATA = resolve(values.data ?? join(import.meta.dirname, '..', '..', 'shared', 'datasets'));
const FILES: { suite: Suite; path: string; jsonl: boolean }[] = [
  { suite: 'webvoyager', path: join(DATA, 'webvoyager/WebVoyager_data.jsonl'), jsonl: true },
  { suite: 'online-mind2web', path: join(DATA, 'online-mind2web/Online_Mind2Web.json'), jsonl: false },
  { suite: 'deepshop', path: join(DATA, 'deepshop/deepshop_test.jsonl'), jsonl: true },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function time(fn: () => Promise<unknown>): Promise<number[]> {
  await fn(); // warm the page cache and the JIT once
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}
/** The baseline: the bytes read and parsed, nothing else (WebVoyager's reference answers included, as the loader reads them). */
async function plainParse(f: (typeof FILES)[number]): Promise<unknown> {
  const text = await readFile(f.path, 'utf8');
  const rows = f.jsonl ? text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)) : JSON.parse(text);
  if (f.suite === 'webvoyager') JSON.parse(await readFile(join(DATA, 'webvoyager/reference_answer.json'), 'utf8'));
  return rows;
}

process.stdout.write(`Grove task-loader benchmark (${RUNS} runs, median)\n`);
let countAll = 0;
for (const f of FILES) {
  const res = await loadTasks(f.suite, f.path);
  countAll += res.tasks.length;
  const grove = median(await time(() => loadTasks(f.suite, f.path)));
  const base = median(await time(() => plainParse(f)));
  process.stdout.write(`  ${f.suite.padEnd(16)} ${String(res.tasks.length).padStart(4)} tasks  loader ${grove.toFixed(1)} ms   read+JSON.parse ${base.toFixed(1)} ms   ratio ${(grove / base).toFixed(2)}\n`);
}
const all = median(await time(() => Promise.all(FILES.map((f) => loadTasks(f.suite, f.path)))));
const allBase = median(await time(() => Promise.all(FILES.map(plainParse))));
process.stdout.write(`  all three        ${String(countAll).padStart(4)} tasks  loader ${all.toFixed(1)} ms   read+JSON.parse ${allBase.toFixed(1)} ms   ratio ${(all / allBase).toFixed(2)}  (issue: well under a second)\n`);
