// SWE grading benchmark (issue 13): the fixture repository's instances graded with their gold patches in real
// shell sandboxes of an embedded Grove server — each grading is a fresh sandbox, a checkout from a git bundle,
// the patch, the test patch and the test run. Instances graded per minute at concurrency 8, beside the same work
// at concurrency 1 in the same run (the ratio is the parallel speed-up on this machine).
//
// With podman and scripts/swe-images.sh's base images, the same gradings again in environment images (the fixture's
// 0.1-py39 row: Python 3.9, a pin from this machine's pip configuration), after timing that environment's build
// cold (no layer cache) and cached (a lookup).
//
//   npm run bench:swe              (--n 24: gradings at concurrency 8; a quarter of them at concurrency 1)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedGrove } from '../cli/commands/run-embedded.ts';
import { GroveClient } from '../client/index.ts';
import { runSwe } from '../runner/swe/run.ts';
import { clientShellProvider } from '../runner/swe/shell-session.ts';
import { ensureEnvImage, parsePackageIndex, planEnvImage } from '../swe-env/env-image.ts';
import { buildFixtureRepo, FIXTURE_REPO, fixtureInstances } from '../swe-env/fixture.ts';
import { specFor } from '../swe-env/specs.ts';

const { values } = parseArgs({ options: { n: { type: 'string' } } });
const N = Number(values.n ?? 24);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-bench-'));
const repo = path.join(tmp, 'textkit');
await buildFixtureRepo(repo);
const base = await fixtureInstances();
const make = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ ...base[i % base.length], instance_id: `${base[i % base.length].instance_id}__${tag}${i}` }));
const grove = await startEmbeddedGrove({ maxSandboxes: 32, browser: false }); // shell sandboxes only: no Chromium beside the gradings
const client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 600_000 });
const provider = clientShellProvider(client);

async function measure(concurrency: number, n: number, tag: string, image?: string) {
  // In an environment image: the Python 3.9 row (unittest there prints `name (module.Class)`).
  const instances = make(n, tag).map((i) =>
    image ? { ...i, version: '0.1-py39', FAIL_TO_PASS: i.FAIL_TO_PASS.map((t) => t.replace(/\.(\w+)\)$/, ')')), PASS_TO_PASS: i.PASS_TO_PASS.map((t) => t.replace(/\.(\w+)\)$/, ')')) } : i,
  );
  const t0 = performance.now();
  const { summary } = await runSwe({
    instances, sources: { [FIXTURE_REPO]: repo }, provider, concurrency, outDir: path.join(tmp, tag), ...(image ? { environment: async () => image } : {}),
    mode: { kind: 'patches', patches: new Map(instances.map((i) => [i.instance_id, i.patch ?? null])) },
  });
  const s = (performance.now() - t0) / 1000;
  // Gold patches: two of every three instances are FULL by construction (the third breaks a PASS_TO_PASS test).
  const expected = instances.filter((i) => !i.instance_id.startsWith('grove__textkit-3')).length;
  return { concurrency, image: image ?? null, instances: n, seconds: s, per_minute: (n / s) * 60, resolved: summary.resolved_instances, expected_resolved: expected, errors: summary.error_instances };
}

const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
process.stdout.write(`Grove SWE grading benchmark: fixture instances (gold patches), fresh shell sandbox per grading; load average ${load()} on ${os.cpus().length} cores\n`);
await measure(2, 3, 'warm'); // warm-up: first bwrap start, page cache
const serial = await measure(1, Math.max(3, Math.round(N / 4)), 'c1');
const parallel = await measure(8, N, 'c8');
// Environment images: the build cold and cached, then the gradings in them.
let env: Record<string, unknown> | null = null;
const rows: Awaited<ReturnType<typeof measure>>[] = [serial, parallel];
if (existsSync('/usr/bin/podman')) {
  const row = specFor(FIXTURE_REPO, '0.1-py39')!.row;
  const index = parsePackageIndex('host');
  const plan = await planEnvImage(FIXTURE_REPO, '0.1-py39', row, index);
  execFileSync('podman', ['rmi', '-f', plan.image], { stdio: 'ignore' });
  const cold = await ensureEnvImage(FIXTURE_REPO, '0.1-py39', row, index, { noCache: true });
  const cached = await ensureEnvImage(FIXTURE_REPO, '0.1-py39', row, index);
  await measure(2, 3, 'env-warm', cold.image); // first sandbox of the image unpacks it
  const envSerial = await measure(1, Math.max(3, Math.round(N / 4)), 'env-c1', cold.image);
  const envParallel = await measure(8, N, 'env-c8', cold.image);
  rows.push(envSerial, envParallel);
  env = { image: cold.image, build_cold_s: cold.ms / 1000, build_cached_s: cached.ms / 1000, serial: envSerial, parallel: envParallel };
  process.stdout.write(`  environment image ${cold.image}: built cold in ${(cold.ms / 1000).toFixed(1)} s, cached lookup ${(cached.ms / 1000).toFixed(2)} s\n`);
}
for (const r of rows) {
  process.stdout.write(`  ${r.image ? 'env image' : 'host root'}, concurrency ${String(r.concurrency).padStart(2)}: ${r.instances} gradings in ${r.seconds.toFixed(1)} s = ${r.per_minute.toFixed(1)} instances/min  (FULL ${r.resolved}/${r.expected_resolved} expected, errors ${r.errors})\n`);
}
process.stdout.write(`  speed-up at concurrency 8: ${(parallel.per_minute / serial.per_minute).toFixed(2)}× (${os.cpus().length} cores); load average at the end ${load()}\n`);
client.close();
await grove.close();
rmSync(tmp, { recursive: true, force: true });
mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(path.join(import.meta.dirname, 'results', 'swe.json'), `${JSON.stringify({ date: new Date().toISOString(), load: os.loadavg(), serial, parallel, speedup: parallel.per_minute / serial.per_minute, env }, null, 2)}\n`);
