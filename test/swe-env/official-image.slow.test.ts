// `--images swebench`: SWE-bench's per-instance images used unchanged, here built locally with their layout
// (official-support.ts: the repository at /testbed, a `testbed` environment under /opt/miniconda3; registry.slow.test.ts
// pulls them from a real registry) and named as their harness names them (`<namespace>/sweb.eval.x86_64.<id>:<tag>`,
// `__` → `_1776_`). The fixture's instances are graded by the eval script their harness writes, run by bash inside
// the image: FULL, FULL, NO as in every other environment. Needs root, podman and the bookworm base image
// (scripts/swe-images.sh).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroveClient } from '../../client/index.ts';
import { runSwe } from '../../runner/swe/run.ts';
import { clientShellProvider } from '../../runner/swe/shell-session.ts';
import { fixtureInstances, type FixtureInstance } from '../../swe-env/fixture.ts';
import { ensureOfficialImage, listSweImages, officialImageCache } from '../../swe-env/images.ts';
import { officialEvalScript, officialImageName } from '../../swe-env/official-image.ts';
import { loadSpecs, specFor } from '../../swe-env/specs.ts';
import { removeImageRoot } from '../../shell-env/image-root.ts';
import { KEY, startShellServer, type ShellServer } from '../shell-env/support.ts';
import { buildLayoutImages } from './official-support.ts';

const HAVE_PODMAN = existsSync('/usr/bin/podman');
const NAMESPACE = 'localhost/grove-test';
let tmp: string;
let srv: ShellServer;
let client: GroveClient;
let instances: FixtureInstance[];

beforeAll(async () => {
  if (!HAVE_PODMAN) return;
  execFileSync('podman', ['image', 'exists', 'localhost/grove-swe-base:bookworm']);
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-official-'));
  instances = await fixtureInstances();
  await buildLayoutImages(tmp, instances.map((i) => officialImageName(i, { namespace: NAMESPACE, tag: 'latest' })));
  srv = await startShellServer();
  client = new GroveClient({ baseUrl: srv.url, apiKey: KEY, timeoutMs: 600_000 });
}, 900_000);

afterAll(async () => {
  client?.close();
  await srv?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  // The test's images and their unpacked roots go (each run builds anew: the fixture's .git differs per build).
  if (HAVE_PODMAN && instances) {
    const names = instances.map((i) => officialImageName(i, { namespace: NAMESPACE, tag: 'latest' }));
    const ids = new Set(names.map((n) => { try { return execFileSync('podman', ['image', 'inspect', '-f', '{{.Id}}', n], { encoding: 'utf8' }).trim(); } catch { return ''; } }));
    for (const n of names) execFileSync('podman', ['rmi', '-f', n], { stdio: 'ignore' });
    for (const id of ids) if (/^[0-9a-f]{64}$/.test(id)) await removeImageRoot('/var/cache/grove/images', id);
  }
});

describe('SWE-bench image names and eval scripts', () => {
  it('names images as their harness does, or takes the dataset\'s', () => {
    expect(officialImageName({ instance_id: 'django__django-11099' }, { namespace: 'swebench', tag: 'latest' })).toBe('swebench/sweb.eval.x86_64.django_1776_django-11099:latest');
    expect(officialImageName({ instance_id: 'Foo__Bar-1' }, { namespace: null, tag: 'v2' })).toBe('sweb.eval.x86_64.foo__bar-1:v2');
    expect(officialImageName({ instance_id: 'x__y-1', image: 'registry.example/own:1' }, { namespace: 'swebench', tag: 'latest' })).toBe('registry.example/own:1');
  });

  it('writes the eval script of SWE-bench 4 for a row, or runs the dataset\'s own', async () => {
    const inst = (await fixtureInstances())[0];
    const spec = specFor(inst.repo, inst.version, loadSpecs())!;
    const script = officialEvalScript(inst, spec);
    expect(script.split('\n').slice(0, 5)).toEqual(['#!/bin/bash', 'set -uxo pipefail', 'source /opt/miniconda3/bin/activate', 'conda activate testbed', 'cd /testbed']);
    expect(script).toContain(`git checkout ${inst.base_commit} tests/test_slug.py\n`);
    expect(script).toContain(": '>>>>> Start Test Output'\npython3 -m unittest -v tests/test_slug.py\n: '>>>>> End Test Output'");
    expect(officialEvalScript({ ...inst, eval_script: '#!/bin/bash\necho own\n' }, spec)).toBe('#!/bin/bash\necho own\n');
  });
});

describe('grove swe run --images swebench options', () => {
  it('refuses a namespace or tag that is not one (exit 2), and an agent run on SWE-bench images', async () => {
    const { main } = await import('../../cli/main.ts');
    const base = ['swe', 'run', '--fixture', '--gold', '--images', 'swebench'];
    expect(await main([...base, '--namespace', 'Bad Namespace'])).toBe(2);
    expect(await main([...base, '--instance_image_tag', 'x:y'])).toBe(2);
    expect(await main(['swe', 'run', '--fixture', '--gold', '--namespace', 'swebench'])).toBe(2);
    expect(await main(['swe', 'run', '--fixture', '--images', 'swebench', '--policy', 'http://127.0.0.1:9/v1', '--model', 'm'])).toBe(2);
  });
});

describe.runIf(HAVE_PODMAN)('--images swebench on locally built images of their layout', () => {
  it('grades the fixture by their eval script inside each image: FULL, FULL, NO; the sandbox writes only its own layer', async () => {
    const out = path.join(tmp, 'run');
    const { results, summary } = await runSwe({
      instances, sources: {}, provider: clientShellProvider(client), concurrency: 2, outDir: out, runId: 'official',
      mode: { kind: 'patches', patches: new Map(instances.map((i) => [i.instance_id, i.patch ?? null])), model: 'gold' },
      // As SWE-bench's default cache level: images this run pulled would go; these were stored before and stay.
      official: { namespace: NAMESPACE, tag: 'latest', ...officialImageCache({ keep: false, cacheDir: '/var/cache/grove/images' }) },
    });
    const by = Object.fromEntries(results.map((r) => [r.instance_id, r.evaluation?.resolution ?? r.error]));
    expect(by).toEqual({ 'grove__textkit-1': 'FULL', 'grove__textkit-2': 'FULL', 'grove__textkit-3': 'NO' });
    expect(summary.resolved_instances).toBe(2);
    const log = readFileSync(path.join(out, 'logs', 'run_evaluation', 'official', 'gold', 'grove__textkit-1', 'test_output.txt'), 'utf8');
    // Their script's trace (set -x), the conda activation and the markers, as in a container of theirs.
    expect(log).toContain("+ conda activate testbed");
    expect(log).toContain("+ : '>>>>> Start Test Output'");
    // As SWE-bench 5: the test command's own status, after the end marker (the script's own is the final reset's).
    expect(log).toMatch(/^>>>>> Test Exit Code: 0$/m);
    expect(readFileSync(path.join(out, 'logs', 'run_evaluation', 'official', 'gold', 'grove__textkit-3', 'test_output.txt'), 'utf8')).toMatch(/^>>>>> Test Exit Code: 1$/m);
    // The image is untouched: a new sandbox on it sees the base commit, and writes of one sandbox stay in its layer.
    const image = officialImageName(instances[0], { namespace: NAMESPACE, tag: 'latest' });
    const id = (await srv.call('POST', '/sandboxes', { type: 'shell', image, block_network: true })).json.sandbox_id as string;
    expect((await srv.call('GET', `/sandboxes/${id}/wait?timeout=300`)).json.status).toBe('ready');
    const r = await client.exec(id, { command: 'cd /testbed && git -c safe.directory=/testbed -c core.fileMode=false status --porcelain | wc -l && echo x > /testbed/new && cat /testbed/new && touch /usr/x 2>&1 | grep -c denied' });
    expect(r.stdout).toBe('0\nx\n1\n');
    await client.deleteSandbox(id);
    expect((await listSweImages()).some((i) => i.name === image && i.kind === 'official')).toBe(true);
  }, 900_000);

  it('an instance whose image is neither stored nor pullable fails with a code naming why (registry_unreachable), not a host fallback', async () => {
    // No registry answers on localhost:443: the code says so, and the image is named.
    await expect(ensureOfficialImage('localhost/grove-test/sweb.eval.x86_64.none_1776_such-1:latest')).rejects.toMatchObject({ code: 'registry_unreachable', message: expect.stringContaining('localhost/grove-test/sweb.eval.x86_64.none_1776_such-1:latest') });
    // A dataset's image field never becomes a podman option or a path.
    for (const bad of ['--root=/tmp/x', 'a b', '../../etc', 'x;touch /tmp/p']) {
      await expect(ensureOfficialImage(bad)).rejects.toMatchObject({ code: 'invalid_image_name', message: expect.stringContaining('is not an image reference') });
    }
  }, 120_000);
});
