// A copy-on-write root for a sandbox over an OCI image: the image's unpacked tree (image-root.ts, shared by every
// sandbox of the image, never written) is the lower layer of an overlay whose upper layer sits on the sandbox's own
// disk (disk.ts), so the sandbox may write anywhere in the image as a container may (a repository at /testbed, a
// package into the image's environment) within its disk quota, and nothing it writes outlives it or reaches
// another sandbox. Mounted nosuid,nodev at `<dir>/rootfs` (deeper than the disk's mount point: unmountUnder
// detaches it first); a dead server's overlays go with its folders (host-state.ts).
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SandboxDisk } from './disk.ts';

const run = promisify(execFile);
const ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/** Mounts the overlay of `lower` for the sandbox whose folder is `dir`; returns the merged root's host path. */
export async function mountRootOverlay(lower: string, dir: string, disk: SandboxDisk): Promise<string> {
  const upper = path.join(disk.mountPoint, 'root-upper');
  const work = path.join(disk.mountPoint, 'root-work');
  const merged = path.join(dir, 'rootfs');
  for (const d of [upper, work, merged]) await mkdir(d, { mode: 0o755 });
  // Paths are Grove's own (the image id and the sandbox folder), never a client's; a comma or colon would still
  // break the option string, so they are refused rather than escaped.
  for (const p of [lower, upper, work]) if (/[,:\\]/.test(p)) throw new Error(`overlay path "${p}" holds a comma, colon or backslash`);
  await run('mount', ['-t', 'overlay', 'grove-root', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work},nosuid,nodev`, merged], { env: ENV });
  return merged;
}
