// The bubblewrap command line of a sandbox's holder process: a new root built from the root file system's
// system directories (read-only), a private writable workspace and /tmp, /proc and /dev of its own, its own PID,
// IPC, UTS and network namespaces. Every exec of the sandbox enters these namespaces (nsenter), so they share
// the workspace, /tmp, processes and the network. Pure: builds arguments only.
// The arguments reach bwrap through a pipe (`--args FD`, holderCommand): its command line, which the sandbox reads
// as /proc/1/cmdline, names no host path. bwrap runs inside a user namespace of its own (identity-mapped, made by
// the holder command) whose user.max_user_namespaces is 0: nothing in the sandbox can create a user namespace.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Top-level directories of a root file system that a sandbox sees (read-only); the rest stays hidden
 * (/root, /home, /run, /mnt, the server's own data, ...). */
const SYSTEM_DIRS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'etc', 'opt', 'var', 'srv'];

export interface HolderSpec {
  /** The root file system to expose ("/" for the host's). */
  rootfs: string;
  /** `rootfs` is the sandbox's own copy-on-write root (overlay.ts): it becomes / whole and writable. Otherwise
   * only its system directories are bound, read-only. */
  writableRoot?: boolean;
  /** Host directory mounted read-write at `workspace`. */
  hostWorkspace: string;
  workspace: string;
  /** Host directories behind /tmp and /var/tmp (on the sandbox's size-capped disk). */
  hostTmp: string;
  hostVarTmp: string;
  /** Files bound read-only over the root (e.g. /etc/passwd with the sandbox user) or into /.grove. */
  files: Array<{ host: string; inside: string }>;
  /** Command the holder runs (it keeps the namespaces alive). */
  command: string[];
  /** fd bwrap reports `{"child-pid": N}` on. */
  infoFd: number;
}

/** The size of a sandbox's /dev/shm (Docker's default, which SWE-bench's containers have). */
const DEV_SHM_BYTES = 64 * 1024 * 1024;

export function bwrapArgs(spec: HolderSpec): string[] {
  const args: string[] = [];
  if (spec.writableRoot) args.push('--bind', spec.rootfs, '/');
  for (const name of spec.writableRoot ? [] : SYSTEM_DIRS) {
    const p = path.join(spec.rootfs, name);
    if (!existsSync(p)) continue;
    const st = lstatSync(p);
    // Merged-/usr systems: /bin -> usr/bin stays a symlink inside too.
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(p), `/${name}`);
    else if (st.isDirectory()) args.push('--ro-bind', p, `/${name}`);
  }
  args.push(
    '--bind', spec.hostWorkspace, spec.workspace,
    '--bind', spec.hostTmp, '/tmp',
    '--bind', spec.hostVarTmp, '/var/tmp',
    '--dev', '/dev',
    // A private /dev/shm as a container has (Docker's 64 MiB, mode 1777): POSIX semaphores and shared memory
    // (Python's multiprocessing locks) need it writable; its pages count against the sandbox's memory cgroup.
    '--perms', '1777', '--size', String(DEV_SHM_BYTES), '--tmpfs', '/dev/shm',
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
    ...(spec.writableRoot ? [] : ['--remount-ro', '/']),
    '--chdir', spec.workspace,
    '--info-fd', String(spec.infoFd),
    '--',
    ...spec.command,
  );
  return args;
}

/**
 * The holder's command line (host side, after the cgroup wrapper): a new user namespace (`unshare --user`); the
 * shell prints `userns` and waits on stdin until the server has written the identity uid/gid maps, then execs a
 * shell again (as uid 0 of the namespace, with its capabilities there) that sets the namespace's
 * user.max_user_namespaces to 0 and execs bwrap. `args` is bwrapArgs(): its options reach bwrap through `argsFd`
 * (holderPayload), only the command stays on its command line.
 */
export function holderCommand(args: string[], argsFd: number): string[] {
  const command = args.slice(args.indexOf('--') + 1);
  const inner = `echo 0 > /proc/sys/user/max_user_namespaces || exit 97; exec /usr/bin/bwrap --args ${argsFd} -- "$@" </dev/null`;
  const outer = 'echo userns; read _ || exit 96; exec /bin/sh -c "$0" grove-holder "$@"';
  return ['/usr/bin/unshare', '--user', '--', '/bin/sh', '-c', outer, inner, ...command];
}

/** The bytes for `--args`: bwrapArgs()' options, NUL-terminated. */
export function holderPayload(args: string[]): Buffer {
  const options = args.slice(0, args.indexOf('--'));
  for (const a of options) if (a.includes('\0')) throw new Error('a bwrap argument contains a NUL byte');
  return Buffer.from(options.map((a) => `${a}\0`).join(''));
}

/** uid_map / gid_map of the holder's user namespace: every id maps to itself. */
export const IDENTITY_MAP = '0 0 4294967295\n';
