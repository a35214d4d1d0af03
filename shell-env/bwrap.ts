// The bubblewrap command line of a sandbox's holder process: a new root built from the root file system's
// system directories (read-only), a private writable workspace and /tmp, /proc and /dev of its own, its own PID,
// IPC, UTS and network namespaces. Every exec of the sandbox enters these namespaces (nsenter), so they share
// the workspace, /tmp, processes and the network. Pure: builds arguments only.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Top-level directories of a root file system that a sandbox sees (read-only); the rest stays hidden
 * (/root, /home, /run, /mnt, the server's own data, ...). */
const SYSTEM_DIRS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'etc', 'opt', 'var', 'srv'];

export interface HolderSpec {
  /** The root file system to expose ("/" for the host's). */
  rootfs: string;
  /** Host directory mounted read-write at `workspace`. */
  hostWorkspace: string;
  workspace: string;
  /** Files bound read-only over the root (e.g. /etc/passwd with the sandbox user) or into /.grove. */
  files: Array<{ host: string; inside: string }>;
  /** Command the holder runs (it keeps the namespaces alive). */
  command: string[];
  /** fd bwrap reports `{"child-pid": N}` on. */
  infoFd: number;
}

export function bwrapArgs(spec: HolderSpec): string[] {
  const args: string[] = [];
  for (const name of SYSTEM_DIRS) {
    const p = path.join(spec.rootfs, name);
    if (!existsSync(p)) continue;
    const st = lstatSync(p);
    // Merged-/usr systems: /bin -> usr/bin stays a symlink inside too.
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(p), `/${name}`);
    else if (st.isDirectory()) args.push('--ro-bind', p, `/${name}`);
  }
  args.push(
    '--bind', spec.hostWorkspace, spec.workspace,
    '--perms', '1777', '--tmpfs', '/tmp',
    '--perms', '1777', '--tmpfs', '/var/tmp',
    '--dev', '/dev',
    '--proc', '/proc',
  );
  // Grove's helpers live in /.grove (bwrap would create it 0700, unreadable for the sandbox user).
  args.push('--perms', '0755', '--dir', '/.grove');
  for (const f of spec.files) args.push('--ro-bind', f.host, f.inside);
  args.push(
    '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
    '--hostname', 'sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--remount-ro', '/',
    '--chdir', spec.workspace,
    '--info-fd', String(spec.infoFd),
    '--',
    ...spec.command,
  );
  return args;
}
