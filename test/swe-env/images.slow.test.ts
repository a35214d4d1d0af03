// `grove swe images --prune`: an environment image superseded by a newer build of the same (repository, version) is
// removed, the newest stays; an unpacked root whose image is gone is removed, one an overlay uses stays, and other
// files of the cache folder are never touched. Needs root, podman and the bookworm base image.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { listSweImages, pruneSweImages } from '../../swe-env/images.ts';

const HAVE_PODMAN = existsSync('/usr/bin/podman');
const REPO = 'localhost/grove-swe-env/grove-test__prune-1';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-prune-'));

function build(tag: string, label: string): void {
  const ctx = path.join(tmp, `ctx-${tag}`);
  mkdirSync(ctx);
  writeFileSync(path.join(ctx, 'Containerfile'), `FROM localhost/grove-swe-base:bookworm\nLABEL grove.test=${label}\n`);
  execFileSync('podman', ['build', '--pull=never', '-q', '-t', `${REPO}:${tag}`, ctx], { stdio: 'pipe' });
}

afterAll(() => {
  if (HAVE_PODMAN) for (const t of ['old', 'new']) execFileSync('podman', ['rmi', '-f', `${REPO}:${t}`], { stdio: 'ignore' });
  execFileSync('bash', ['-c', `mountpoint -q ${tmp}/lower-mnt && umount ${tmp}/lower-mnt; true`]);
  rmSync(tmp, { recursive: true, force: true });
});

describe.runIf(HAVE_PODMAN)('SWE image cache cleanup', () => {
  it('removes superseded environment images and orphaned unpacked roots, keeps what is newest or in use', async () => {
    build('old', 'a');
    await new Promise((r) => setTimeout(r, 1100)); // podman's creation times are in seconds
    build('new', 'b');
    const cache = path.join(tmp, 'cache');
    const gone = 'f'.repeat(64);
    const busy = 'e'.repeat(64);
    for (const id of [gone, busy]) mkdirSync(path.join(cache, id, 'etc'), { recursive: true });
    writeFileSync(path.join(cache, 'build.log'), 'not a root');
    // A sandbox's overlay over the busy root (as overlay.ts mounts it).
    for (const d of ['up', 'work', 'lower-mnt']) mkdirSync(path.join(tmp, d));
    execFileSync('mount', ['-t', 'overlay', 'grove-root', '-o', `lowerdir=${path.join(cache, busy)},upperdir=${tmp}/up,workdir=${tmp}/work`, `${tmp}/lower-mnt`]);
    const r = await pruneSweImages(cache);
    expect(r.removedImages).toContain(`${REPO}:old`);
    expect(r.removedImages).not.toContain(`${REPO}:new`);
    expect(r.removedRoots).toEqual([gone]);
    expect(r.busyRoots).toEqual([busy]);
    expect(existsSync(path.join(cache, 'build.log'))).toBe(true);
    expect((await listSweImages()).filter((i) => i.name.startsWith(REPO)).map((i) => i.name)).toEqual([`${REPO}:new`]);
    // The command prints the list and exits 0; --all without --prune is refused (exit 2).
    expect(await main(['swe', 'images', '--image-cache', cache])).toBe(0);
    expect(await main(['swe', 'images', '--all'])).toBe(2);
  }, 300_000);
});
