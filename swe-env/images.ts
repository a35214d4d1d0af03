// The SWE images on this host, kept bounded: environment images (env-image.ts, `localhost/grove-swe-env/<repo>-<version>:
// <hash>`; a row whose inputs changed gets a new hash and the old image is superseded), SWE-bench's official images
// pulled for `--images swebench` (registry.ts), and the unpacked roots shell sandboxes run on (shell-env/image-root.ts, one
// folder per image id). `grove swe images` lists them; `--prune` removes superseded environment images and every
// unpacked root whose image is gone (never one a running sandbox uses); `--all` also the newest environment
// images and the official images (pulled again on demand).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { removeImageRoot, unpackedImageIds } from '../shell-env/image-root.ts';
import { ensureOfficialImage } from './registry.ts';

export { ensureOfficialImage, ImageUnavailableError } from './registry.ts';

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

async function podman(args: string[], timeout = 120_000): Promise<string> {
  const r = await run(PODMAN, args, { env: HOST_ENV, maxBuffer: 64 * 1024 * 1024, timeout });
  return r.stdout;
}

/** Environment and official SWE images in podman's storage. */
export async function listSweImages(): Promise<SweImage[]> {
  if (!existsSync(PODMAN)) return [];
  const rows = JSON.parse(await podman(['images', '--format', 'json'])) as Array<{ Id: string; Names?: string[]; Created: number; Size: number }>;
  const out: SweImage[] = [];
  const seen = new Set<string>();
  // podman lists an image once per tag, each row with all its names: one entry per (image, name).
  for (const r of rows) {
    for (const name of r.Names ?? []) {
      const kind = name.startsWith(ENV_IMAGE_REPO) ? 'env' : OFFICIAL.test(name) ? 'official' : null;
      if (!kind || seen.has(`${r.Id} ${name}`)) continue;
      seen.add(`${r.Id} ${name}`);
      out.push({ id: r.Id, name, kind, created: r.Created, size: r.Size });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A run's official images, as SWE-bench's `--cache_level` treats instance images: unless the level is `instance`,
 * an image this run pulled is removed (with its unpacked root) once its instance is graded, so a run over hundreds
 * of instances holds only the images of the instances in flight. Images that were already stored are kept.
 */
export function officialImageCache(o: { keep: boolean; cacheDir: string }) {
  const pulled = new Map<string, number>();
  return {
    async ensure(name: string): Promise<void> {
      if ((await ensureOfficialImage(name)) || pulled.has(name)) pulled.set(name, (pulled.get(name) ?? 0) + 1);
    },
    async release(name: string): Promise<void> {
      const users = pulled.get(name);
      if (o.keep || !users) return;
      if (users > 1) return void pulled.set(name, users - 1);
      pulled.delete(name);
      const id = (await podman(['image', 'inspect', '-f', '{{.Id}}', name]).catch(() => '')).trim();
      await podman(['rmi', name]).catch(() => undefined);
      if (/^[0-9a-f]{64}$/.test(id) && !(await podman(['image', 'exists', id]).then(() => true, () => false))) await removeImageRoot(o.cacheDir, id);
    },
  };
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
