// The up-front image check against registries that do not list tags, and images pinned by digest. A real registry
// (Debian's docker-registry, htpasswd auth) behind a front on 127.0.0.1 that refuses `/v2/<name>/tags/list` (404
// UNSUPPORTED, or 429 TOOMANYREQUESTS as a rate limit would) and passes everything else through, auth included.
// Checked by the image's manifest (skopeo inspect --raw, the exact reference), `grove swe run` pulls and grades
// through that front: one image named by tag, one by digest only (`name@sha256:…`, pulled by that digest). A digest
// the registry does not have stops the run before it starts (exit 2, image_not_found naming the digest).
// Skips, with the reason, without docker-registry, podman or skopeo.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweRun } from '../../cli/commands/swe.ts';
import { removeImageRoot } from '../../shell-env/image-root.ts';
import { fixtureInstances, type FixtureInstance } from '../../swe-env/fixture.ts';
import { checkOfficialImages } from '../../swe-env/registry.ts';
import { buildLayoutImages } from './official-support.ts';
import { registryMissing, startRefusingFront, startRegistry, type RefusingFront, type TestRegistry } from './registry-support.ts';

const MISSING = registryMissing() ?? (!existsSync('/usr/bin/skopeo') ? 'skopeo (apt-get install skopeo)' : !imageId('localhost/grove-swe-base:bookworm') ? 'the bookworm base image (scripts/swe-images.sh)' : null);
const CACHE = '/var/cache/grove/images';
const LOCAL = 'localhost/grove-test-check/sweb.eval.x86_64.grove_1776_check-1:latest';
const ENV_KEYS = ['CONTAINERS_REGISTRIES_CONF', 'REGISTRY_AUTH_FILE'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
let tmp: string;
let reg: TestRegistry;
let front: RefusingFront;
let instances: FixtureInstance[];
let digest: string;
/** The layout image's id: the pulls make the same image (same config) under the registry's names. */
let builtId = '';

function imageId(name: string): string {
  try {
    return execFileSync('podman', ['image', 'inspect', '-f', '{{.Id}}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** An instances file whose instances name their image (the dataset's `image` field), one image each. */
function instancesFile(name: string, images: string[]): string {
  const file = path.join(tmp, `${name}.jsonl`);
  writeFileSync(file, instances.map((i, k) => JSON.stringify({ ...i, image: images[k], FAIL_TO_PASS: JSON.stringify(i.FAIL_TO_PASS), PASS_TO_PASS: JSON.stringify(i.PASS_TO_PASS) })).join('\n'));
  return file;
}

async function grove(args: string[]): Promise<{ code: number; out: string; err: string; ms: number }> {
  let out = '';
  let err = '';
  const t0 = Date.now();
  const code = await sweRun(['--gold', '--images', 'swebench', ...args], { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err, ms: Date.now() - t0 };
}

beforeAll(async () => {
  if (MISSING) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-check-'));
  reg = await startRegistry({ auth: { user: 'grove', password: 'test-pass-2' } });
  front = await startRefusingFront(reg.host);
  // Both addresses plain HTTP (exactly these two), the same credentials for both.
  const conf = path.join(tmp, 'registries.conf');
  writeFileSync(conf, [reg.host, front.host].map((h) => `[[registry]]\nlocation = "${h}"\ninsecure = true\n`).join('\n'));
  const auth = path.join(tmp, 'auth.json');
  const cred = JSON.parse(readFileSync(reg.authFile!, 'utf8')).auths[reg.host];
  writeFileSync(auth, JSON.stringify({ auths: { [reg.host]: cred, [front.host]: cred } }));
  process.env.CONTAINERS_REGISTRIES_CONF = conf;
  process.env.REGISTRY_AUTH_FILE = auth;
  instances = await fixtureInstances();
  await buildLayoutImages(tmp, [LOCAL]);
  const digestFile = path.join(tmp, 'digest');
  for (const repo of ['check-tag', 'check-digest']) {
    execFileSync('podman', ['push', '-q', '--digestfile', digestFile, LOCAL, `${reg.host}/swebench/${repo}:latest`], { stdio: 'pipe', timeout: 600_000 });
    digest = readFileSync(digestFile, 'utf8').trim();
  }
  // Only the registry has it now: the pulls move its layers.
  builtId = imageId(LOCAL);
  execFileSync('podman', ['rmi', LOCAL], { stdio: 'ignore' });
  if (/^[0-9a-f]{64}$/.test(builtId)) await removeImageRoot(CACHE, builtId);
}, 1_200_000);

afterAll(async () => {
  if (MISSING) return;
  const names = [LOCAL, `${front?.host}/swebench/check-tag:latest`, `${front?.host}/swebench/check-digest@${digest}`];
  const ids = new Set([builtId, ...names.map(imageId)].filter((id) => /^[0-9a-f]{64}$/.test(id)));
  for (const n of [...names, ...ids]) {
    try {
      execFileSync('podman', ['rmi', '-f', n], { stdio: 'ignore' });
    } catch {
      // not stored (any more)
    }
  }
  for (const id of ids) if (!imageId(id)) await removeImageRoot(CACHE, id);
  await front?.close();
  await reg?.close();
  for (const k of ENV_KEYS) if (savedEnv[k] === undefined) delete process.env[k];
  else process.env[k] = savedEnv[k];
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 300_000);

describe.skipIf(!!MISSING)(`the image check without tag listings; digest-pinned images${MISSING ? ` (skipped: needs ${MISSING})` : ''}`, () => {
  it('a registry that refuses tag listings: the run is checked by manifest, pulls by tag and by digest, and grades', async () => {
    // The front lists no tags: podman's own tag listing is refused there (asynchronously: the front answers from this
    // process's event loop, which a synchronous child would block).
    await expect(promisify(execFile)('podman', ['search', '--list-tags', `${front.host}/swebench/check-tag`])).rejects.toThrow(/404/);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const tagRef = `${front.host}/swebench/check-tag:latest`;
    const digestRef = `${front.host}/swebench/check-digest@${digest}`;
    // The third names the digest with a tag beside it: docker's reading, the digest wins.
    const file = instancesFile('front', [tagRef, digestRef, `${front.host}/swebench/check-digest:v0@${digest}`]);
    const seen = front.seen.length;
    const r = await grove(['--instances', file, '--max-workers', '3', '--out', path.join(tmp, 'front'), '--run-id', 'front']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('2 FULL, 0 PARTIAL, 1 NO');
    const asked = front.seen.slice(seen);
    // No tag listing was answered; each reference's manifest was asked for as it is (the check: skopeo; the pull: podman).
    expect(asked.filter((q) => q.path.includes('/tags/list') && q.status === 200)).toEqual([]);
    const manifests = (ref: string, byCheck: boolean) => asked.filter((q) => q.method === 'GET' && q.path === ref && q.status === 200 && q.agent.startsWith('skopeo') === byCheck).length;
    expect(manifests('/v2/swebench/check-tag/manifests/latest', true)).toBe(1);
    expect(manifests('/v2/swebench/check-tag/manifests/latest', false)).toBe(1);
    expect(manifests(`/v2/swebench/check-digest/manifests/${digest}`, true)).toBe(1);
    expect(manifests(`/v2/swebench/check-digest/manifests/${digest}`, false)).toBe(1);
    expect(asked.filter((q) => q.path.includes('/manifests/v0'))).toEqual([]);
    // The default cache level removed what the run pulled.
    expect(imageId(tagRef)).toBe('');
    expect(imageId(digestRef)).toBe('');
  }, 1_200_000);

  it('a digest the registry does not have: exit 2 before any sandbox, image_not_found naming the digest', async () => {
    const wrong = `sha256:${'0'.repeat(64)}`;
    const file = instancesFile('wrong', instances.map(() => `${front.host}/swebench/check-digest@${wrong}`));
    const r = await grove(['--instances', file, '--out', path.join(tmp, 'wrong')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`image_not_found: image ${front.host}/swebench/check-digest@${wrong}: ${front.host}/swebench/check-digest has no image with the digest ${wrong}`);
    expect(existsSync(path.join(tmp, 'wrong'))).toBe(false);
    expect(r.ms).toBeLessThan(60_000);
  }, 120_000);

  it('tag listings limited (429): the check passes by manifest; manifests limited: registry_rate_limited, said once', async () => {
    front.refuse.tags = 429;
    try {
      expect(await checkOfficialImages([`${front.host}/swebench/check-tag:latest`, `${front.host}/swebench/check-digest@${digest}`])).toEqual([]);
      expect(await checkOfficialImages([`${front.host}/swebench/check-tag:nope`])).toEqual([expect.stringMatching(new RegExp(`^image_not_found: image ${front.host}/swebench/check-tag:nope: .*manifest unknown`))]);
      front.refuse.manifests = 429;
      const limited = await checkOfficialImages([`${front.host}/swebench/check-tag:latest`, `${front.host}/swebench/check-digest@${digest}`]);
      expect(limited).toHaveLength(1);
      expect(limited[0]).toMatch(new RegExp(`^registry_rate_limited: image ${front.host}/swebench/check-.*\\(and every other image of ${front.host}\\)`));
    } finally {
      front.refuse.tags = 404;
      front.refuse.manifests = null;
    }
  }, 120_000);
});
