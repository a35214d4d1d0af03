// `--images swebench` with the images in the user's registry, as on a cluster: a real registry (Debian's
// docker-registry, distribution v2) started here on 127.0.0.1 without TLS (a registries.conf entry for that address
// only) and behind htpasswd basic auth (the credentials in a podman auth file named by REGISTRY_AUTH_FILE). The
// fixture's layout image is pushed under SWE-bench's names for its instances; `grove swe run --namespace
// <registry>/swebench` pulls them and grades: the verdicts and per-test statuses equal those of the locally built
// path. A second run pulls nothing; concurrent gradings of one image pull it once; a missing image, an unreachable
// registry and refused credentials stop the run before it starts (exit 2, the code and the image named).
// Skips, with the reason, without docker-registry or podman (apt-get install docker-registry podman runc).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweRun } from '../../cli/commands/swe.ts';
import { removeImageRoot } from '../../shell-env/image-root.ts';
import { fixtureInstances, type FixtureInstance } from '../../swe-env/fixture.ts';
import { officialImageCache } from '../../swe-env/images.ts';
import { officialImageName } from '../../swe-env/official-image.ts';
import { ensureOfficialImage } from '../../swe-env/registry.ts';
import { buildLayoutImages } from './official-support.ts';
import { freePort, manifestPulls, registryMissing, startRegistry, type TestRegistry } from './registry-support.ts';

const MISSING = registryMissing() ?? (existsSync('/usr/bin/podman') && !podmanHas('localhost/grove-swe-base:bookworm') ? 'the bookworm base image (scripts/swe-images.sh)' : null);
const CACHE = '/var/cache/grove/images';
const LOCAL_NS = 'localhost/grove-test-reg';
const ENV_KEYS = ['CONTAINERS_REGISTRIES_CONF', 'REGISTRY_AUTH_FILE'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
let tmp: string;
let reg: TestRegistry;
let instances: FixtureInstance[];
let localNames: string[];
let remoteNames: string[];
let shared: string;

function podmanHas(name: string): boolean {
  try {
    execFileSync('podman', ['image', 'exists', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function imageId(name: string): string {
  try {
    return execFileSync('podman', ['image', 'inspect', '-f', '{{.Id}}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** Removes images by name and, once no name holds their id, their unpacked roots. */
async function removeImages(names: string[]): Promise<void> {
  const ids = new Set(names.map(imageId).filter((id) => /^[0-9a-f]{64}$/.test(id)));
  for (const n of names) execFileSync('podman', ['rmi', '-f', n], { stdio: 'ignore' });
  for (const id of ids) if (!podmanHas(id)) await removeImageRoot(CACHE, id);
}

/** `grove swe run` in this process, its output captured. */
async function grove(args: string[]): Promise<{ code: number; out: string; err: string; ms: number }> {
  let out = '';
  let err = '';
  const t0 = Date.now();
  const code = await sweRun(['--fixture', '--gold', '--images', 'swebench', ...args], { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err, ms: Date.now() - t0 };
}

/** Per instance: SWE-bench's report.json entry of a run. */
function reports(out: string, run: string): Record<string, unknown> {
  return Object.fromEntries(instances.map((i) => [i.instance_id, JSON.parse(readFileSync(path.join(out, 'logs', 'run_evaluation', run, 'gold', i.instance_id, 'report.json'), 'utf8'))]));
}

beforeAll(async () => {
  if (MISSING) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-registry-'));
  reg = await startRegistry({ auth: { user: 'grove', password: 'test-pass-1' } });
  process.env.CONTAINERS_REGISTRIES_CONF = reg.registriesConf;
  process.env.REGISTRY_AUTH_FILE = reg.authFile!;
  instances = await fixtureInstances();
  localNames = instances.map((i) => officialImageName(i, { namespace: LOCAL_NS, tag: 'latest' }));
  remoteNames = instances.map((i) => officialImageName(i, { namespace: `${reg.host}/swebench`, tag: 'latest' }));
  shared = `${reg.host}/swebench/sweb.eval.x86_64.grove_1776_shared-1:latest`;
  await buildLayoutImages(tmp, localNames);
  // podman push reads the same registries.conf and auth file from this process's environment.
  for (const name of [...remoteNames, shared]) execFileSync('podman', ['push', '-q', localNames[0], name], { stdio: 'pipe', timeout: 600_000 });
}, 1_200_000);

afterAll(async () => {
  if (MISSING) return;
  if (localNames) await removeImages([...localNames, ...remoteNames, shared]);
  await reg?.close();
  for (const k of ENV_KEYS) if (savedEnv[k] === undefined) delete process.env[k];
  else process.env[k] = savedEnv[k];
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 300_000);

describe.skipIf(!!MISSING)(`--images swebench from the user's registry${MISSING ? ` (skipped: needs ${MISSING})` : ''}`, () => {
  it('names the images as SWE-bench\'s harness does for a registry namespace', () => {
    expect(remoteNames[0]).toBe(`${reg.host}/swebench/sweb.eval.x86_64.grove_1776_textkit-1:latest`);
  });

  it('grades from images pulled from the registry with the verdicts of the locally built path; a second run pulls nothing', async () => {
    const localOut = path.join(tmp, 'local');
    const local = await grove(['--namespace', LOCAL_NS, '--max-workers', '3', '--out', localOut, '--run-id', 'local']);
    expect(local.code, local.err).toBe(0);
    // Only the registry has the images now: the layout image and its unpacked root are gone from this host.
    await removeImages(localNames);
    for (const n of remoteNames) expect(podmanHas(n)).toBe(false);

    const pulledOut = path.join(tmp, 'pulled');
    const pulled = await grove(['--namespace', `${reg.host}/swebench`, '--cache-level', 'instance', '--max-workers', '3', '--out', pulledOut, '--run-id', 'pulled']);
    expect(pulled.code, pulled.err).toBe(0);
    expect(pulled.out).toContain('2 FULL, 0 PARTIAL, 1 NO');
    const repos = remoteNames.map((n) => n.slice(reg.host.length + 1, n.lastIndexOf(':')));
    // One pull per image (podman's manifest GET each; the up-front check's own GET is skopeo's), layers moved (blob GETs).
    expect(repos.map((r) => reg.requestsBy().filter((q) => q.line.startsWith(`"GET /v2/${r}/manifests/`) && q.agent.startsWith('skopeo')).length)).toEqual([1, 1, 1]);
    expect(repos.map((r) => manifestPulls(reg, r))).toEqual([1, 1, 1]);
    expect(reg.requests().filter((l) => /^"GET \/v2\/swebench\/[^ ]+\/blobs\/sha256:/.test(l) && l.endsWith(' 200')).length).toBeGreaterThan(0);
    for (const n of remoteNames) expect(podmanHas(n)).toBe(true);
    // The same verdicts and per-test statuses as on the locally built images.
    expect(reports(pulledOut, 'pulled')).toEqual(reports(localOut, 'local'));
    expect(Object.values(reports(pulledOut, 'pulled')).map((r) => Object.values(r as object)[0].resolved)).toEqual([true, true, false]);

    // Stored before this run: not pulled again, and kept (SWE-bench's default cache level removes only what it pulled).
    const again = await grove(['--namespace', `${reg.host}/swebench`, '--max-workers', '3', '--out', path.join(tmp, 'again'), '--run-id', 'again']);
    expect(again.code, again.err).toBe(0);
    expect(repos.map((r) => manifestPulls(reg, r))).toEqual([1, 1, 1]);
    for (const n of remoteNames) expect(podmanHas(n)).toBe(true);
  }, 1_800_000);

  it('concurrent asks for one image pull it once; at the default cache level it goes with its last user', async () => {
    const repo = shared.slice(reg.host.length + 1, shared.lastIndexOf(':'));
    const before = manifestPulls(reg, repo);
    const cache = officialImageCache({ keep: false, cacheDir: CACHE });
    await Promise.all([1, 2, 3, 4].map(() => cache.ensure(shared)));
    expect(manifestPulls(reg, repo) - before).toBe(1);
    expect(podmanHas(shared)).toBe(true);
    await Promise.all([1, 2, 3].map(() => cache.release(shared)));
    expect(podmanHas(shared)).toBe(true);
    await cache.release(shared);
    expect(podmanHas(shared)).toBe(false);
    // Stored now: asked again, nothing moves.
    expect(await ensureOfficialImage(shared)).toBe(true);
    expect(await ensureOfficialImage(shared)).toBe(false);
    expect(manifestPulls(reg, repo) - before).toBe(2);
  }, 600_000);

  it('three gradings at once on one image (the dataset\'s image field) pull it once; the default cache level removes it after', async () => {
    const repo = shared.slice(reg.host.length + 1, shared.lastIndexOf(':'));
    await removeImages([shared]);
    const before = manifestPulls(reg, repo);
    const file = path.join(tmp, 'shared.jsonl');
    writeFileSync(file, instances.map((i) => JSON.stringify({ ...i, image: shared, FAIL_TO_PASS: JSON.stringify(i.FAIL_TO_PASS), PASS_TO_PASS: JSON.stringify(i.PASS_TO_PASS) })).join('\n'));
    let out = '';
    let err = '';
    const code = await sweRun(['--instances', file, '--gold', '--images', 'swebench', '--namespace', `${reg.host}/swebench`, '--max-workers', '3', '--out', path.join(tmp, 'shared'), '--run-id', 'shared'], { out: (s) => void (out += s), err: (s) => void (err += s) });
    expect(code, err).toBe(0);
    expect(out).toContain('2 FULL, 0 PARTIAL, 1 NO');
    expect(manifestPulls(reg, repo) - before).toBe(1);
    expect(podmanHas(shared)).toBe(false);
  }, 900_000);

  it('a missing image, an unreachable registry, refused credentials: exit 2 before any sandbox, the code and the image named', async () => {
    const missing = await grove(['--namespace', `${reg.host}/swebench`, '--instance-image-tag', 'v404', '--out', path.join(tmp, 'missing')]);
    expect(missing.code).toBe(2);
    for (const i of [1, 2, 3]) expect(missing.err).toContain(`image_not_found: image ${reg.host}/swebench/sweb.eval.x86_64.grove_1776_textkit-${i}:v404`);
    expect(existsSync(path.join(tmp, 'missing'))).toBe(false);

    const port = await freePort();
    const down = await grove(['--namespace', `127.0.0.1:${port}/swebench`, '--out', path.join(tmp, 'down')]);
    expect(down.code).toBe(2);
    expect(down.err).toContain(`registry_unreachable: image 127.0.0.1:${port}/swebench/sweb.eval.x86_64.grove_1776_textkit-`);
    expect(down.err.match(/registry_unreachable/g)).toHaveLength(1);
    expect(down.err).toContain('connection refused');

    delete process.env.REGISTRY_AUTH_FILE;
    try {
      const denied = await grove(['--namespace', `${reg.host}/swebench`, '--out', path.join(tmp, 'denied'), '--instance-image-tag', 'other']);
      expect(denied.code).toBe(2);
      expect(denied.err).toContain(`registry_unauthorized: image ${reg.host}/swebench/sweb.eval.x86_64.grove_1776_textkit-`);
      // A pull in the middle of a run says the same.
      await expect(ensureOfficialImage(`${reg.host}/swebench/sweb.eval.x86_64.grove_1776_nothing-1:latest`)).rejects.toMatchObject({ code: 'registry_unauthorized' });
    } finally {
      process.env.REGISTRY_AUTH_FILE = reg.authFile!;
    }
    await expect(ensureOfficialImage(`${reg.host}/swebench/sweb.eval.x86_64.grove_1776_nothing-1:latest`)).rejects.toMatchObject({ code: 'image_not_found', message: expect.stringContaining(`${reg.host}/swebench/sweb.eval.x86_64.grove_1776_nothing-1:latest`) });
    for (const r of [missing, down]) expect(r.ms).toBeLessThan(60_000);
  }, 600_000);

  it('an attacker\'s namespace is refused before any registry request', async () => {
    const seen = reg.requests().length;
    for (const ns of [`${reg.host}/../../etc`, '--root=/tmp/x', `${reg.host}/a b`, `${reg.host}/$(touch /tmp/p)`, `http://${reg.host}/swebench`]) {
      const r = await grove([`--namespace=${ns}`, '--out', path.join(tmp, 'bad')]);
      expect(r.code, ns).toBe(2);
      expect(r.err).toContain('invalid_image_name');
    }
    expect(reg.requests().length).toBe(seen);
  }, 120_000);
});
