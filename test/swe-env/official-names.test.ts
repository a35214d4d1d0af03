// The names `--images swebench` gives podman: SWE-bench's naming for registry namespaces (host:port included), and
// an attacker's instance id, namespace, tag or dataset image refused with invalid_image_name / invalid_instance_id
// before any podman argv exists (child_process is watched: no podman command is started). Error texts of podman
// and of registries map to stable codes.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const spawned = vi.hoisted(() => [] as string[][]);
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const watch = <F extends (...a: never[]) => unknown>(f: F) => ((...a: Parameters<F>) => {
    spawned.push([String(a[0]), ...(Array.isArray(a[1]) ? (a[1] as string[]) : [])]);
    return f(...a);
  }) as unknown as F;
  const { promisify } = await import('node:util');
  const execFile = watch(real.execFile);
  // promisify(execFile) resolves to { stdout, stderr } through the original's custom form: watched too.
  const custom = (real.execFile as unknown as Record<symbol, (...a: unknown[]) => unknown>)[promisify.custom];
  Object.defineProperty(execFile, promisify.custom, { value: watch(custom) });
  return { ...real, default: { ...real, execFile }, execFile, spawn: watch(real.spawn), execFileSync: watch(real.execFileSync) };
});

const { sweRun } = await import('../../cli/commands/swe.ts');
const { namespaceProblem, officialImageName } = await import('../../swe-env/official-image.ts');
const { checkOfficialImages, classify, ensureOfficialImage, remoteRef } = await import('../../swe-env/registry.ts');
const { preflight } = await import('../../swe-env/preflight.ts');
const { loadSpecs } = await import('../../swe-env/specs.ts');
const { fixtureInstances } = await import('../../swe-env/fixture.ts');

const podmanCalls = () => spawned.filter((a) => a.some((x) => x.includes('podman') || x.includes('skopeo')));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-names-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
beforeEach(() => void spawned.splice(0));

const ATTACKS = ['--root=/tmp/x', '../../etc/passwd', 'a__b/../../c', 'x;touch /tmp/p', 'a b', '$(id)', '-rm', '.hidden', 'x\ny'];
const HEX = 'ab429c404d'.padEnd(64, 'e');
/** Digests that are not `@sha256:` + 64 lower-case hex, or carry something after it. */
const DIGEST_ATTACKS = ['x@sha256:abc', `x@sha256:${'g'.repeat(64)}`, `x@sha512:${HEX}${HEX}`, `x@sha256:${HEX} --rm`, `x@sha256:${HEX}/../../etc`, `x@@sha256:${HEX}`, `x@sha256:${HEX}@sha256:${HEX}`, `-x@sha256:${HEX}`, `x@sha256:${HEX.toUpperCase()}`, `x@sha256:${HEX};id`];

describe('SWE-bench image names for a registry', () => {
  it('follows their instance_image_key: namespace/ before the key, every __ of the whole name → _1776_, id lower case', () => {
    expect(officialImageName({ instance_id: 'django__django-11099' }, { namespace: '127.0.0.1:5000/swebench', tag: 'latest' })).toBe('127.0.0.1:5000/swebench/sweb.eval.x86_64.django_1776_django-11099:latest');
    expect(officialImageName({ instance_id: 'Sphinx-Doc__sphinx-8721' }, { namespace: 'registry.example.com/my__team', tag: 'V2' })).toBe('registry.example.com/my_1776_team/sweb.eval.x86_64.sphinx-doc_1776_sphinx-8721:V2');
    expect(officialImageName({ instance_id: 'a__b-1' }, { namespace: 'localhost:5000', tag: 'latest' })).toBe('localhost:5000/sweb.eval.x86_64.a_1776_b-1:latest');
    // Locally built (namespace none): no replacement, as theirs.
    expect(officialImageName({ instance_id: 'a__b-1' }, { namespace: null, tag: 'latest' })).toBe('sweb.eval.x86_64.a__b-1:latest');    // A dataset's image pinned by digest is used by that digest; a tag beside the digest is dropped (docker's reading).
    expect(officialImageName({ instance_id: 'a__b-1', image: `127.0.0.1:5000/ns/x@sha256:${HEX}` }, { namespace: 'swebench', tag: 'latest' })).toBe(`127.0.0.1:5000/ns/x@sha256:${HEX}`);
    expect(officialImageName({ instance_id: 'a__b-1', image: `127.0.0.1:5000/ns/x:v1@sha256:${HEX}` }, { namespace: 'swebench', tag: 'latest' })).toBe(`127.0.0.1:5000/ns/x@sha256:${HEX}`);
    expect(remoteRef(`swebench/x:v1@sha256:${HEX}`)).toBe(`docker.io/swebench/x@sha256:${HEX}`);
  });

  it('reads a namespace as docker does: [host[:port]/]path; Docker Hub names are qualified for podman', () => {
    for (const ok of ['swebench', 'registry.example.com/team', '127.0.0.1:5000/swebench', 'localhost/x', 'ghcr.io/a/b', '127.0.0.1:5000']) expect(namespaceProblem(ok), ok).toBeNull();
    for (const bad of ['../x', 'a/../b', '--x', 'Swebench', 'a b', 'http://x/y', 'a//b', 'x/', '/x', '127.0.0.1:port/x', 'a/$(id)', 'a;b']) expect(namespaceProblem(bad), bad).not.toBeNull();
    expect(remoteRef('swebench/sweb.eval.x86_64.a_1776_b-1:latest')).toBe('docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest');
    expect(remoteRef('127.0.0.1:5000/swebench/x:latest')).toBe('127.0.0.1:5000/swebench/x:latest');
    expect(remoteRef('localhost/x:1')).toBe('localhost/x:1');
  });

  it('maps registry and podman errors to stable codes', () => {
    expect(classify('reading manifest v404 in 127.0.0.1:5000/swebench/x: manifest unknown: manifest unknown')).toBe('image_not_found');
    expect(classify('fetching tags list: invalid status code from registry 404 (Not Found)')).toBe('image_not_found');
    expect(classify('pinging container registry 127.0.0.1:9: Get "https://127.0.0.1:9/v2/": dial tcp 127.0.0.1:9: connect: connection refused')).toBe('registry_unreachable');
    expect(classify('http: server gave HTTP response to HTTPS client')).toBe('registry_unreachable');
    expect(classify('unable to retrieve auth token: invalid username/password: unauthorized: authentication required')).toBe('registry_unauthorized');
    expect(classify('reading manifest latest in docker.io/swebench/x: toomanyrequests: You have reached your pull rate limit.')).toBe('registry_rate_limited');
    expect(classify('fetching tags list: invalid status code from registry 429 (Too Many Requests)')).toBe('registry_rate_limited');
    // Numbers inside a digest are not status codes.
    expect(classify(`reading manifest sha256:${HEX} in 127.0.0.1:5000/x: manifest unknown`)).toBe('image_not_found');
    expect(classify(`reading manifest sha256:${HEX} in 127.0.0.1:5000/x: unauthorized: authentication required`)).toBe('registry_unauthorized');
  });
});

describe('an attacker\'s names never reach podman', () => {
  it('instance ids and dataset images: refused by the preflight, no podman command started', async () => {
    const base = (await fixtureInstances())[0];
    const badImages = [...ATTACKS, ...DIGEST_ATTACKS];
    const instances = [...ATTACKS.map((id) => ({ ...base, instance_id: id })), ...badImages.map((image, k) => ({ ...base, instance_id: `ok__x-${k}`, image }))];
    for (const images of [{ namespace: 'swebench', tag: 'latest' }, { namespace: '127.0.0.1:5000/swebench', tag: 'latest' }]) {
      const problems = await preflight({ instances, sources: {}, specs: loadSpecs(), index: null, official: 'local', images });
      for (const id of ATTACKS.filter((a) => !a.includes('\n'))) expect(problems.some((p) => p.includes(`invalid_instance_id: "${id}"`)), id).toBe(true);
      const byImage = await preflight({ instances: instances.slice(ATTACKS.length), sources: {}, specs: loadSpecs(), index: null, official: 'local', images });
      expect(byImage).toHaveLength(badImages.length);
      for (const p of byImage) expect(p).toContain('invalid_image_name');
    }
    expect(await checkOfficialImages(badImages)).toHaveLength(badImages.length);
    for (const a of badImages) await expect(ensureOfficialImage(a)).rejects.toMatchObject({ code: 'invalid_image_name' });
    expect(() => officialImageName({ instance_id: 'a__b-1' }, { namespace: '--root=/x', tag: 'latest' })).toThrow(/invalid_image_name/);
    expect(() => officialImageName({ instance_id: 'a__b-1' }, { namespace: 'swebench', tag: 'x;y' })).toThrow(/invalid_image_name/);
    expect(podmanCalls()).toEqual([]);
    // The watch sees podman when a name is good (the control of the assertions above).
    if (existsSync('/usr/bin/podman')) {
      await checkOfficialImages(['localhost/grove-swe-base:bookworm']);
      expect(podmanCalls()[0]).toEqual(['/usr/bin/podman', 'images', '--format', 'json']);
    }
  });

  it('grove swe run: a bad namespace, tag or instances file exits 2 naming the code, before any podman command', async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (s: string) => void err.push(s) };
    const run = (args: string[]) => sweRun(['--gold', '--images', 'swebench', ...args], io);
    for (const ns of ['--root=/tmp/x', '127.0.0.1:5000/../../etc', '127.0.0.1:5000/a b', 'http://127.0.0.1:5000/x', 'x/$(touch /tmp/p)']) {
      expect(await run(['--fixture', `--namespace=${ns}`]), ns).toBe(2);
      expect(err.pop()).toContain('invalid_image_name');
    }
    expect(await run(['--fixture', '--instance-image-tag=--x'])).toBe(2);
    expect(err.pop()).toContain('invalid_image_name');
    const file = path.join(tmp, 'bad.jsonl');
    const base = (await fixtureInstances())[0];
    writeFileSync(file, ['../../etc/x', '--root=/tmp/x'].map((id) => JSON.stringify({ ...base, instance_id: id, FAIL_TO_PASS: JSON.stringify(base.FAIL_TO_PASS), PASS_TO_PASS: JSON.stringify(base.PASS_TO_PASS) })).join('\n'));
    expect(await run(['--instances', file, '--namespace', '127.0.0.1:5000/swebench'])).toBe(2);
    expect(err.join('')).toContain('invalid_instance_id: "../../etc/x"');
    expect(podmanCalls()).toEqual([]);
  });
});
