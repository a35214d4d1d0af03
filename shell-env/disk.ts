// A sandbox's disk: /workspace, /tmp and /var/tmp live on one file system of a fixed size, so a sandbox that fills
// it gets ENOSPC inside and never fills the host's disk. Preferred: a sparse ext4 image loop-mounted on the host
// (costs only what is used; git and large repositories behave as on any disk). Where loop devices are missing, a
// size-capped tmpfs (memory-backed, charged to the writer's memory cgroup). The mount point is in the sandbox's
// own data folder; `unmountUnder` also finds the mounts a dead server left (host-state.ts).
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

export interface SandboxDisk {
  kind: 'loop' | 'tmpfs';
  limitMb: number;
  /** Host folders behind /workspace, /tmp and /var/tmp. */
  workspace: string;
  tmp: string;
  varTmp: string;
  mountPoint: string;
}

/** Makes and mounts the disk of a sandbox in `dir` (its data folder); the workspace is owned by `uid`. */
export async function createDisk(dir: string, limitMb: number, uid: number): Promise<SandboxDisk> {
  const mountPoint = path.join(dir, 'disk');
  await mkdir(mountPoint, { mode: 0o700 });
  let kind: SandboxDisk['kind'] = 'loop';
  try {
    const image = path.join(dir, 'disk.img');
    const fh = await open(image, 'wx', 0o600);
    await fh.truncate(limitMb * 1024 * 1024);
    await fh.close();
    // No journal and no reserved blocks: a scratch disk, all of it the sandbox's; inode tables stay uninitialised
    // (noinit_itable) so the kernel does not write them out behind the sandbox's back.
    await run('mkfs.ext4', ['-q', '-F', '-m', '0', '-O', '^has_journal', '-E', 'lazy_itable_init=1,nodiscard', image], { env: ENV });
    await run('mount', ['-o', 'loop,nosuid,nodev,noinit_itable', image, mountPoint], { env: ENV });
  } catch {
    kind = 'tmpfs';
    await run('mount', ['-t', 'tmpfs', '-o', `size=${limitMb}m,mode=0755,nosuid,nodev`, 'grove-disk', mountPoint], { env: ENV });
  }
  const workspace = path.join(mountPoint, 'workspace');
  const tmp = path.join(mountPoint, 'tmp');
  const varTmp = path.join(mountPoint, 'var-tmp');
  await mkdir(workspace, { mode: 0o755 });
  await chown(workspace, uid, uid);
  for (const d of [tmp, varTmp]) {
    await mkdir(d);
    await chmod(d, 0o1777);
  }
  return { kind, limitMb, workspace, tmp, varTmp, mountPoint };
}

/** Mount points at or under `dir` in this mount namespace, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const prefix = dir.replace(/\/+$/, '');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    if (f.length < 5) continue;
    // Field 5 is the mount point, with space, tab, newline and backslash escaped as \ooo.
    const mp = f[4].replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (mp === prefix || mp.startsWith(`${prefix}/`)) out.push(mp);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** Detaches every mount at or under `dir` (lazily: a sandbox's processes may still be dying). */
export async function unmountUnder(dir: string): Promise<void> {
  for (const mp of await mountsUnder(dir)) await run('umount', ['-l', mp], { env: ENV }).catch(() => {});
}
