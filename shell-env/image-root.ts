// OCI images as root file systems for shell sandboxes: an image in the host's podman storage (built there, pulled,
// or imported from a debootstrap tree) is exported once into a cache folder named by its image id, and bubblewrap
// runs over that tree. Unpacking goes to `<dir>.part` first and is renamed when complete, so a crash mid-way
// never leaves a tree that looks whole; concurrent sandboxes of one image share one unpack.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PODMAN = '/usr/bin/podman';
const HOST_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/** An image reference podman accepts ([host[:port]/]name[:tag][@sha256:digest], the reference grammar): no options,
 * no `..`, no shell text. */
const IMAGE_REF = /^(?:[a-z0-9]+(?:[.-][a-z0-9]+)*(?::[0-9]{1,5})?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$/;

export function isImageRef(image: string): boolean {
  return image.length <= 400 && IMAGE_REF.test(image);
}

const pending = new Map<string, Promise<string>>();

/** `podman export` of a container made from the image, to a tar file beside `dir`, unpacked into `dir` (owners kept). */
async function exportInto(image: string, dir: string): Promise<void> {
  const { stdout } = await run(PODMAN, ['create', '--pull=never', image, '/bin/true'], { env: HOST_ENV });
  const container = stdout.trim().split('\n').pop()!;
  const tar = `${dir}.tar`;
  try {
    await run(PODMAN, ['export', '-o', tar, container], { env: HOST_ENV, maxBuffer: 1024 * 1024 });
    await run('/usr/bin/tar', ['-x', '--numeric-owner', '-f', tar, '-C', dir], { env: HOST_ENV, maxBuffer: 16 * 1024 * 1024 });
  } finally {
    await rm(tar, { force: true });
    await run(PODMAN, ['rm', '-f', container], { env: HOST_ENV }).catch(() => undefined);
  }
}

/**
 * SWE-bench's images (the repository at /testbed, a conda environment under /opt/miniconda3/envs) run their
 * scripts as root; a sandbox runs as its own uid. In the unpacked tree those two folders are opened for writing
 * (a+rwX): each sandbox writes into its own copy-on-write layer (overlay.ts), never into this tree.
 */
async function openSweBenchLayout(root: string): Promise<void> {
  const dirs = ['testbed', 'opt/miniconda3/envs'].map((d) => path.join(root, d));
  if (!dirs.every((d) => existsSync(d))) return;
  await run('/usr/bin/chmod', ['-R', 'a+rwX', ...dirs], { env: HOST_ENV });
}

/** Image ids unpacked under `cacheDir` (other files there are not Grove's roots and are never touched). */
export async function unpackedImageIds(cacheDir: string): Promise<string[]> {
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  return names.filter((n) => /^[0-9a-f]{64}$/.test(n)).sort();
}

/**
 * Removes the unpacked root of an image id unless a sandbox's overlay uses it now (it is a lower layer in this
 * host's mount table): false when in use.
 */
export async function removeImageRoot(cacheDir: string, id: string): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(id)) throw new Error(`"${id}" is not an image id`);
  const dir = path.join(cacheDir, id);
  const mounts = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  if (mounts.includes(`lowerdir=${dir},`) || mounts.includes(`lowerdir=${dir}:`)) return false;
  await rm(dir, { recursive: true, force: true });
  return true;
}

/**
 * The unpacked root file system of an image in podman's storage, under `cacheDir/<image id>`; null when podman or
 * the image is not there (the caller says why in the sandbox's notes).
 */
export async function imageRoot(image: string, cacheDir: string): Promise<{ path: string; id: string } | { error: string }> {
  if (!isImageRef(image)) return { error: `"${image}" is not an image reference` };
  if (!existsSync(PODMAN)) return { error: `podman is not installed (${PODMAN})` };
  const id = await run(PODMAN, ['image', 'inspect', '-f', '{{.Id}}', image], { env: HOST_ENV }).then((r) => r.stdout.trim(), () => '');
  if (!/^[0-9a-f]{64}$/.test(id)) return { error: `no image "${image}" in this host's podman storage` };
  const dir = path.join(cacheDir, id);
  if (existsSync(dir)) return { path: dir, id };
  let p = pending.get(id);
  if (!p) {
    p = (async () => {
      const part = `${dir}.part`;
      await rm(part, { recursive: true, force: true });
      await mkdir(part, { recursive: true, mode: 0o755 });
      try {
        await exportInto(image, part);
        await openSweBenchLayout(part);
        await rename(part, dir);
        return dir;
      } catch (err) {
        await rm(part, { recursive: true, force: true });
        throw err;
      }
    })().finally(() => pending.delete(id));
    pending.set(id, p);
  }
  try {
    return { path: await p, id };
  } catch (err) {
    return { error: `unpacking ${image} failed: ${(err as Error).message}` };
  }
}
