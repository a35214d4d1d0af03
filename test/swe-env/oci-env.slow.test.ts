// SWE environments from OCI images: the Debian base images of scripts/swe-images.sh (debootstrap + podman import),
// environment images built per (repository, version) with podman (Python of the row's version, pins from the
// configured package index), unpacked once and run by bubblewrap; the fixture repository graded in them, on the
// host's Python (bookworm, 3.11) and on another (bullseye, 3.9). Needs root, podman and the base images.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroveClient } from '../../client/index.ts';
import { runSwe } from '../../runner/swe/run.ts';
import { clientShellProvider } from '../../runner/swe/shell-session.ts';
import { ensureEnvImage, parsePackageIndex, planEnvImage } from '../../swe-env/env-image.ts';
import { buildFixtureRepo, FIXTURE_REPO, fixtureInstances, type FixtureInstance } from '../../swe-env/fixture.ts';
import { loadSpecs, specFor } from '../../swe-env/specs.ts';
import { KEY, startShellServer, type ShellServer } from '../shell-env/support.ts';

const HAVE_PODMAN = existsSync('/usr/bin/podman');
let tmp: string;
let srv: ShellServer;
let client: GroveClient;
let sources: Record<string, string>;
let instances: FixtureInstance[];

beforeAll(async () => {
  if (!HAVE_PODMAN) return;
  for (const rel of ['bookworm', 'bullseye']) {
    try {
      execFileSync('podman', ['image', 'exists', `localhost/grove-swe-base:${rel}`]);
    } catch {
      throw new Error(`the base image localhost/grove-swe-base:${rel} is missing: run scripts/swe-images.sh`);
    }
  }
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-oci-'));
  const repo = path.join(tmp, 'textkit');
  await buildFixtureRepo(repo);
  sources = { [FIXTURE_REPO]: repo };
  instances = await fixtureInstances();
  srv = await startShellServer();
  client = new GroveClient({ baseUrl: srv.url, apiKey: KEY, timeoutMs: 600_000 });
}, 120_000);

afterAll(async () => {
  client?.close();
  await srv?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe.runIf(HAVE_PODMAN)('OCI images as shell sandbox roots', () => {
  it('runs a sandbox over an image of podman storage; an unknown image is reported, not used', async () => {
    // The first sandbox of an image waits for its unpacking (once per image on this host).
    const created = await srv.call('POST', '/sandboxes', { type: 'shell', image: 'localhost/grove-swe-base:bullseye', block_network: true });
    const id = created.json.sandbox_id as string;
    expect((await srv.call('GET', `/sandboxes/${id}/wait?timeout=300`)).json.status).toBe('ready');
    const info = (await srv.call('GET', `/sandboxes/${id}`)).json;
    expect(info.shell).toMatchObject({ image: 'localhost/grove-swe-base:bullseye', rootfs: 'image' });
    const r = await client.exec(id, { command: 'python3 --version; . /etc/os-release; echo $VERSION_CODENAME; touch /usr/x 2>&1 || echo read-only' });
    expect(r.stdout).toMatch(/^Python 3\.9\.\d+\nbullseye\n[\s\S]*read-only/);
    await client.deleteSandbox(id);
    const other = await srv.sandbox({ image: 'localhost/no-such-image:1', block_network: true });
    const o = (await srv.call('GET', `/sandboxes/${other}`)).json;
    expect(o.shell.rootfs).toBe('host');
    expect(o.shell.notes.join(' ')).toMatch(/no image "localhost\/no-such-image:1"/);
    await client.deleteSandbox(other);
    // Image references never become podman options.
    const bad = await srv.call('POST', '/sandboxes', { type: 'shell', image: '--root=/tmp/x', block_network: true });
    if (bad.status === 201) {
      const b = (await srv.call('GET', `/sandboxes/${bad.json.sandbox_id}/wait?timeout=30`)).json;
      expect(b.shell.rootfs).toBe('host');
      await client.deleteSandbox(bad.json.sandbox_id);
    } else expect(bad.status).toBe(400);
  }, 600_000);

  it('grades the fixture in environment images: 0.1 on Python 3.11, 0.1-py39 on Python 3.9 with a pin from the index', async () => {
    const specs = loadSpecs();
    const index = parsePackageIndex('host');
    const timings: Record<string, number> = {};
    const environment = async (inst: { repo: string; version?: string | number }, spec: { row: Parameters<typeof ensureEnvImage>[2] }) => {
      const r = await ensureEnvImage(inst.repo, String(inst.version), spec.row, index);
      timings[`${inst.version}:${r.built ? 'built' : 'cached'}`] = Math.round(r.ms);
      return r.image;
    };
    // The same instances at the Python 3.9 version: unittest there prints `name (module.Class)`.
    const py39 = instances.map((i) => ({
      ...i,
      instance_id: `${i.instance_id}-py39`,
      version: '0.1-py39',
      FAIL_TO_PASS: i.FAIL_TO_PASS.map((t) => t.replace(/\.(\w+)\)$/, ')')),
      PASS_TO_PASS: i.PASS_TO_PASS.map((t) => t.replace(/\.(\w+)\)$/, ')')),
    }));
    const { results } = await runSwe({
      instances: [...instances, ...py39], sources, provider: clientShellProvider(client), specs, environment,
      mode: { kind: 'patches', patches: new Map([...instances, ...py39].map((i) => [i.instance_id, i.patch!])), model: 'gold' },
      concurrency: 2, outDir: path.join(tmp, 'out'), runId: 'oci',
    });
    const by = Object.fromEntries(results.map((r) => [r.instance_id, r.evaluation?.resolution ?? r.error]));
    expect(by).toEqual({
      'grove__textkit-1': 'FULL', 'grove__textkit-2': 'FULL', 'grove__textkit-3': 'NO',
      'grove__textkit-1-py39': 'FULL', 'grove__textkit-2-py39': 'FULL', 'grove__textkit-3-py39': 'NO',
    });
    // The Python 3.9 run really ran on 3.9 with the pin (the test command asserts both before the tests).
    const log = readFileSync(path.join(tmp, 'out', 'logs', 'run_evaluation', 'oci', 'gold', 'grove__textkit-2-py39', 'test_output.txt'), 'utf8');
    expect(log).toContain('test_seconds_unit (tests.test_duration.DurationTests) ... ok');
    // Built once per (repository, version): a second request is a lookup.
    const again = await ensureEnvImage(FIXTURE_REPO, '0.1-py39', specFor(FIXTURE_REPO, '0.1-py39', specs)!.row, index);
    expect(again.built).toBe(false);
    console.log(`environment images (ms): ${JSON.stringify(timings)}; cached lookup ${Math.round(again.ms)} ms`);
  }, 1_800_000);

  it('says what a row needs before building', async () => {
    const specs = loadSpecs();
    await expect(planEnvImage('x/y', '1', { python: '3.6', test_cmd: 'pytest' }, { kind: 'none' })).rejects.toMatchObject({ code: 'no_python' });
    await expect(planEnvImage('x/y', '1', { python: '3.9', packages: 'requirements.txt', test_cmd: 'pytest' }, { kind: 'none' })).rejects.toMatchObject({ code: 'no_requirements' });
    await expect(planEnvImage('x/y', '1', { python: '3.9', packages: 'environment.yml', test_cmd: 'pytest' }, { kind: 'none' })).rejects.toMatchObject({ code: 'needs_conda' });
    const plan = await planEnvImage('pytest-dev/pytest', '5.4', specFor('pytest-dev/pytest', '5.4', specs)!.row, { kind: 'wheels', dir: tmp });
    expect(plan.base).toBe('localhost/grove-swe-base:bullseye');
    expect(plan.containerfile).toContain("'pluggy==0.13.1'");
    expect(plan.mounts).toEqual([`${tmp}:/grove-wheels:ro`]);
  });
});
