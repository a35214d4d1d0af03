// The SWE images on this host, kept bounded: environment images (env-image.ts, `localhost/grove-swe-env/<repo>-<version>:
// <hash>`; a row whose inputs changed gets a new hash and the old image is superseded), SWE-bench's official images
// pulled for `--images swebench`, and the unpacked roots shell sandboxes run on (shell-env/image-root.ts, one
// folder per image id). `grove swe images` lists them; `--prune` removes superseded environment images and every
// unpacked root whose image is gone (never one a running sandbox uses); `--all` also the newest environment
// images and the official images (pulled again on demand).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { isImageRef, removeImageRoot, unpackedImageIds } from '../shell-env/image-root.ts';

const run = promisify(execFile);
const PODMAN = '/usr/bin/podman';
const HOST_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
export const ENV_IMAGE_REPO = 'localhost/grove-swe-env/';
/** SWE-bench's instance images, by any namespace (`<ns>/sweb.eval.<arch>.<id>`) or none. */
const OFFICIAL = /(^|\/)sweb\.eval\.[\w-]+\.[^/:]+(:[\w.-]+)?$/;

export interface SweImage {
  id: string;
  name: string;
  kind: 'env' | 'official';
  created: number;
  size: number;
}

export class ImageUnavailableError extends Error {
  readonly code = 'image_unavailable';
}

async function podman(args: string[], timeout = 120_000): Promise<string> {
  const r = await run(PODMAN, args, { env: HOST_ENV, maxBuffer: 64 * 1024 * 1024, timeout });
  return r.stdout;
}

/** Environment and official SWE images in podman's storage. */
export async function listSweImages(): Promise<SweImage[]> {
  if (!existsSync(PODMAN)) return [];
  const rows = JSON.parse(await podman(['images', '--format', 'json'])) as Array<{ Id: string; Names?: string[]; Created: number; Size: number }>;
  const out: SweImage[] = [];
  for (const r of rows) {
    for (const name of r.Names ?? []) {
      const kind = name.startsWith(ENV_IMAGE_REPO) ? 'env' : OFFICIAL.test(name) ? 'official' : null;
      if (kind) out.push({ id: r.Id, name, kind, created: r.Created, size: r.Size });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The official image of an instance in podman's storage, pulled from the user's registries when missing. */
export async function ensureOfficialImage(name: string): Promise<void> {
  // A dataset's `image` field reaches podman's argv: only a plain image reference does (never an option).
  if (!isImageRef(name)) throw new ImageUnavailableError(`"${name.slice(0, 100)}" is not an image reference ([registry/]name[:tag])`);
  if (!existsSync(PODMAN)) throw new ImageUnavailableError(`--images swebench needs podman (${PODMAN}) to pull and unpack ${name}`);
  const here = await podman(['image', 'exists', name]).then(() => true, () => false);
  if (here) return;
  await podman(['pull', '--quiet', name], 3_600_000).catch((err: Error & { stderr?: string }) => {
    throw new ImageUnavailableError(`image ${name} is not in this host's podman storage and could not be pulled: ${(err.stderr ?? err.message).trim().split('\n').pop()}`);
  });
}

export interface PruneResult {
  removedImages: string[];
  removedRoots: string[];
  /** Unpacked roots kept because a sandbox uses them now. */
  busyRoots: string[];
}

/**
 * Removes superseded environment images (all but the newest per repository and version), with `all` every
 * environment and official image, then every unpacked root under `cacheDir` whose image is no longer stored.
 */
export async function pruneSweImages(cacheDir: string, o: { all?: boolean } = {}): Promise<PruneResult> {
  const images = await listSweImages();
  const doomed = new Set<SweImage>();
  const newest = new Map<string, SweImage>();
  for (const img of images) {
    if (img.kind !== 'env') continue;
    const repo = img.name.slice(0, img.name.lastIndexOf(':'));
    const had = newest.get(repo);
    if (!had || img.created > had.created) {
      if (had) doomed.add(had);
      newest.set(repo, img);
    } else doomed.add(img);
  }
  if (o.all) for (const img of images) doomed.add(img);
  const removedImages: string[] = [];
  for (const img of doomed) {
    // By name: an id shared with a kept name stays (podman untags only).
    if (await podman(['rmi', img.name]).then(() => true, () => false)) removedImages.push(img.name);
  }
  const removedRoots: string[] = [];
  const busyRoots: string[] = [];
  for (const id of await unpackedImageIds(cacheDir)) {
    if (await podman(['image', 'exists', id]).then(() => true, () => false)) continue;
    if (await removeImageRoot(cacheDir, id)) removedRoots.push(id);
    else busyRoots.push(id);
  }
  return { removedImages, removedRoots, busyRoots };
}
