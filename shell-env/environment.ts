// The shell environment: creates LocalShellSandboxes, hands out uids, maps `image` through the image table.
// Needs root (namespaces, cgroups, switching to the sandbox uid) and bubblewrap; shellAvailability() says why not.
// Each environment is an instance (host-state.ts) with its own id: its folders (<dataDir>/<instance>/...), cgroups
// (grove/<instance>/...) and host-wide uid claims never meet another server's, even with the same data folder and
// the same client-chosen sandbox ids. At start it removes what dead instances left; a watchdog does the same when
// this server dies (watchdog.ts).
import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ShellCreateOptions } from '../protocol/sandbox.ts';
import type { EnvironmentFactory } from '../sandbox/local-backend.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { detectCgroups, type CgroupRoot, type SandboxCgroups } from './cgroups.ts';
import { createDisk, unmountUnder } from './disk.ts';
import { checkEnv, wrapperArgs, WRAPPER_SHELL } from './exec.ts';
import { imageRoot, isImageRef } from './image-root.ts';
import { claimUid, reapDeadInstances, registerInstance, releaseUid, removeInstance, STATE_DIR } from './host-state.ts';
import { ShellWatchdog } from './watchdog.ts';
import { DEFAULT_DISK_MB, LocalShellSandbox, type ShellLimits } from './sandbox.ts';
import type { ShellSandbox } from './types.ts';

const BWRAP = '/usr/bin/bwrap';
const UID_RANGE = 10_000;

export interface ShellEnvironmentOptions {
  /** Host directory for the sandboxes' workspaces (one subdirectory each). */
  dataDir: string;
  /** image name → root file system directory. */
  images: Record<string, string>;
  uidBase: number;
  limits: ShellLimits;
  log?: Logger;
  /** Use cgroups when writable (default true). */
  cgroups?: boolean;
  startTimeoutMs?: number;
  /** Where OCI images of podman's storage are unpacked for sandboxes (image-root.ts); default /var/cache/grove/images. */
  imageCacheDir?: string;
}

/** Whether shell sandboxes can run here, and if not, why. */
export function shellAvailability(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'shell sandboxes need Linux namespaces' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'shell sandboxes need a server running as root (namespaces, cgroups, per-sandbox uids)' };
  if (!existsSync(BWRAP)) return { ok: false, reason: `bubblewrap is not installed (${BWRAP}); run scripts/setup.sh or apt-get install bubblewrap` };
  return { ok: true };
}

/** A host process held to a shell sandbox's limits (ShellEnvironment.confine). */
export interface ProcessConfinement {
  /** The argv that runs `command` inside the cgroups (the wrapper joins them, then execs it); `command` itself
   * where this host has no cgroups. */
  argv(command: string[]): string[];
  /** Whether memory, process and CPU limits hold (cgroups), or only the disk's size. */
  readonly cgroups: boolean;
  /** A folder on a size-capped disk of its own (disk.ts, a shell sandbox's disk_mb), owned by the caller's uid: the
   * process's writable state goes here, removed with it (and by the watchdog if this server dies). */
  readonly dir: string;
  /** A /tmp for it on the same disk (mode 1777). */
  readonly tmp: string;
  /** Pids in the cgroups now. */
  pids(): Promise<number[]>;
  /** Kills whatever is left in the cgroups, removes them, unmounts the disk and removes its folder. */
  release(): Promise<void>;
}

export interface ShellEnvironment extends EnvironmentFactory<ShellCreateOptions, ShellSandbox> {
  /** How limits are enforced on this host (for the docs and /resources). */
  readonly cgroups: boolean;
  /**
   * A shell sandbox's limits for a long-running host process that is not a shell sandbox but runs untrusted code in a
   * sandbox of its own (the Claw-Eval checkout's mock services, whose bubblewrap needs the checkout read-only):
   * cgroups with its memory, process and CPU limits (where this host has cgroups) and a disk of disk_mb for the
   * process's writable state, under this instance's folder (so removed by the watchdog when this server dies).
   * Absent where commands run without bubblewrap (pod isolation). `name`: [A-Za-z0-9_-]{1,40}.
   */
  confine?(name: string): Promise<ProcessConfinement>;
}

export async function createShellEnvironment(opts: ShellEnvironmentOptions): Promise<ShellEnvironment> {
  const avail = shellAvailability();
  if (!avail.ok) throw new Error(avail.reason);
  const log = opts.log ?? silentLogger;
  const insideDir = fileURLToPath(new URL('./inside/', import.meta.url));
  const root = path.resolve(opts.dataDir);
  await mkdir(root, { recursive: true, mode: 0o711 });
  await reapDeadInstances({ log });
  await reapDataRoot(root);
  const instance = await registerInstance(root);
  await mkdir(instance.dir, { mode: 0o711 });
  const watchdog = ShellWatchdog.start(log);
  const cgroupRoot: CgroupRoot | null = opts.cgroups === false ? null : await detectCgroups(instance.id);
  if (!cgroupRoot) log.warn({}, 'no writable cgroup v1 hierarchy: shell sandboxes fall back to rlimits (no memory/CPU limits)');
  const live = new Map<string, LocalShellSandbox>();
  const uids = new Set<number>();
  let created = 0;

  // Uids are claimed host-wide (host-state.ts); servers start at different points of the range.
  let next = Math.floor(Math.random() * UID_RANGE);
  async function takeUid(): Promise<number> {
    for (let i = 0; i < UID_RANGE; i++) {
      const uid = opts.uidBase + ((next + i) % UID_RANGE);
      if (!uids.has(uid) && (await claimUid(uid, instance.id))) {
        uids.add(uid);
        next = (next + i + 1) % UID_RANGE;
        return uid;
      }
    }
    throw new Error('no free sandbox uid');
  }

  async function resolveImage(image: string | undefined): Promise<{ path: string; kind: 'image' | 'host'; notes: string[]; copyOnWrite?: boolean }> {
    if (image === undefined) return { path: '/', kind: 'host', notes: ["no image asked for: the host's root file system, read-only"] };
    const dir = opts.images[image];
    if (dir && existsSync(dir) && statSync(dir).isDirectory()) return { path: dir, kind: 'image', notes: [`image "${image}" → ${dir}`] };
    // Not in the table: an OCI image of the host's podman storage, unpacked once (image-root.ts).
    const oci = !dir && isImageRef(image) ? await imageRoot(image, opts.imageCacheDir ?? '/var/cache/grove/images') : null;
    // An OCI image behaves as in a container: the sandbox's own copy-on-write layer over the shared unpacked tree.
    if (oci && 'path' in oci) return { path: oci.path, kind: 'image', copyOnWrite: true, notes: [`OCI image "${image}" (${oci.id.slice(0, 12)}) → ${oci.path}, copy-on-write`] };
    const why = dir ? `its root file system ${dir} does not exist` : `it is not in this server's image table (shellImages)${oci ? ` and ${oci.error}` : ''}`;
    return { path: '/', kind: 'host', notes: [`image "${image}" is not available locally (${why}): running on the host's root file system, read-only`] };
  }

  return {
    cgroups: cgroupRoot !== null,
    async create(id: string, spec: ShellCreateOptions): Promise<ShellSandbox> {
      checkEnv(spec.env);
      const uid = await takeUid();
      created++;
      // Unique within the instance (a number), short (the egress socket's path has at most 107 bytes).
      const dir = path.join(instance.dir, `${created}-${id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 24)}`);
      await mkdir(dir, { mode: 0o711 });
      const sb = new LocalShellSandbox({
        id,
        spec,
        uid,
        dir,
        rootfs: await resolveImage(spec.image),
        cgroupRoot,
        limits: opts.limits,
        insideDir,
        startTimeoutMs: opts.startTimeoutMs ?? 15_000,
        log,
        release: () => {
          uids.delete(uid);
          live.delete(id);
          void releaseUid(uid, instance.id);
        },
      });
      live.set(id, sb);
      return sb;
    },
    async confine(name: string): Promise<ProcessConfinement> {
      if (!/^[A-Za-z0-9_-]{1,40}$/.test(name)) throw new Error(`confine: bad name ${JSON.stringify(name.slice(0, 60))}`);
      const l = opts.limits;
      // Its folder beside the sandboxes' (unique: mkdir fails on an existing one), its disk as a sandbox's (disk.ts).
      const dir = path.join(instance.dir, `p-${name}`);
      await mkdir(dir, { mode: 0o711 });
      let cg: SandboxCgroups | null = null;
      const release = async () => {
        await cg?.kill();
        await cg?.destroy();
        await unmountUnder(dir);
        await rm(dir, { recursive: true, force: true });
      };
      try {
        const disk = await createDisk(dir, l.diskMb ?? DEFAULT_DISK_MB, process.getuid?.() ?? 0);
        cg = cgroupRoot ? await cgroupRoot.create(`p-${name}`, { cpu: l.cpu, memoryMb: l.memoryMb, maxProcesses: l.maxProcesses }) : null;
        const files = cg ? cg.procsFiles(await cg.newGroup('h')) : [];
        const groups = cg;
        return {
          argv: (command) => (files.length ? [WRAPPER_SHELL, ...wrapperArgs(files, command)] : command),
          cgroups: groups !== null,
          dir: disk.workspace,
          tmp: disk.tmp,
          pids: async () => (groups ? groups.pids() : []),
          release,
        };
      } catch (err) {
        await release();
        throw err;
      }
    },
    async shutdown(): Promise<void> {
      await Promise.all([...live.values()].map((s) => s.close()));
      await removeInstance(instance, { log });
      watchdog.stop();
    },
    stats(): Record<string, number> {
      // Egress of the live sandboxes (egress.ts): connections open, refused at the cap, closed idle, sandboxes at the cap.
      const egress = { shell_egress_connections: 0, shell_egress_refused: 0, shell_egress_idle_closed: 0, shell_egress_at_cap: 0 };
      for (const sb of live.values()) {
        const e = sb.details().shell?.egress;
        if (!e) continue;
        egress.shell_egress_connections += e.open;
        egress.shell_egress_refused += e.refused;
        egress.shell_egress_idle_closed += e.idle_closed;
        if (e.open >= e.max_connections) egress.shell_egress_at_cap++;
      }
      return { shell_sandboxes: live.size, shell_created_total: created, ...egress };
    },
  };
}

/** Instance folders in `root` whose instance is gone (no marker: host-state.ts reaped it or it never got one). */
async function reapDataRoot(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [])) {
    if (!/^i[0-9a-f]{12}$/.test(name) || existsSync(path.join(STATE_DIR, 'instances', `${name}.json`))) continue;
    await unmountUnder(path.join(root, name));
    await rm(path.join(root, name), { recursive: true, force: true }).catch(() => {});
  }
}
