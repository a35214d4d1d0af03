// SWE grading benchmark (issue 13): the fixture repository's instances graded with their gold patches in real
// shell sandboxes of an embedded Grove server — each grading is a fresh sandbox, a checkout from a git bundle,
// the patch, the test patch and the test run. Instances graded per minute at concurrency 8, beside the same work
// at concurrency 1 in the same run (the ratio is the parallel speed-up on this machine).
//
//   npm run bench:swe              (--n 24: gradings at concurrency 8; a quarter of them at concurrency 1)
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedGrove } from '../cli/commands/run-embedded.ts';
import { GroveClient } from '../client/index.ts';
import { runSwe } from '../runner/swe/run.ts';
import { clientShellProvider } from '../runner/swe/shell-session.ts';
import { buildFixtureRepo, FIXTURE_REPO, fixtureInstances } from '../swe-env/fixture.ts';

const { values } = parseArgs({ options: { n: { type: 'string' } } });
const N = Number(values.n ?? 24);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-bench-'));
const repo = path.join(tmp, 'textkit');
await buildFixtureRepo(repo);
const base = await fixtureInstances();
const make = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ ...base[i % base.length], instance_id: `${base[i % base.length].instance_id}__${tag}${i}` }));
const grove = await startEmbeddedGrove({ maxSandboxes: 32 });
const client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 600_000 });
const provider = clientShellProvider(client);

async function measure(concurrency: number, n: number, tag: string) {
  const instances = make(n, tag);
  const t0 = performance.now();
  const { summary } = await runSwe({
    instances, sources: { [FIXTURE_REPO]: repo }, provider, concurrency, outDir: path.join(tmp, tag),
    mode: { kind: 'patches', patches: new Map(instances.map((i) => [i.instance_id, i.patch ?? null])) },
  });
  const s = (performance.now() - t0) / 1000;
  // Gold patches: two of every three instances are FULL by construction (the third breaks a PASS_TO_PASS test).
  const expected = instances.filter((i) => !i.instance_id.startsWith('grove__textkit-3')).length;
  return { concurrency, instances: n, seconds: s, per_minute: (n / s) * 60, resolved: summary.resolved_instances, expected_resolved: expected, errors: summary.error_instances };
}

process.stdout.write(`Grove SWE grading benchmark: fixture instances (gold patches), fresh shell sandbox per grading\n`);
await measure(2, 3, 'warm'); // warm-up: first bwrap start, page cache
const serial = await measure(1, Math.max(3, Math.round(N / 4)), 'c1');
const parallel = await measure(8, N, 'c8');
for (const r of [serial, parallel]) {
  process.stdout.write(`  concurrency ${String(r.concurrency).padStart(2)}: ${r.instances} gradings in ${r.seconds.toFixed(1)} s = ${r.per_minute.toFixed(1)} instances/min  (FULL ${r.resolved}/${r.expected_resolved} expected, errors ${r.errors})\n`);
}
process.stdout.write(`  speed-up at concurrency 8: ${(parallel.per_minute / serial.per_minute).toFixed(2)}× (2 cores)\n`);
client.close();
await grove.close();
rmSync(tmp, { recursive: true, force: true });
mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(path.join(import.meta.dirname, 'results', 'swe.json'), `${JSON.stringify({ date: new Date().toISOString(), serial, parallel, speedup: parallel.per_minute / serial.per_minute }, null, 2)}\n`);
