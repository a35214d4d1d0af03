// Per-sandbox cgroups (v1 hierarchies, as on this Debian host): pids (fork bombs), memory, cpu (CFS quota), and a
// freezer cgroup per exec so a timeout kills the whole process tree — a process cannot leave its cgroup without
// write access to another one, so setsid/daemonised grandchildren are found too. Where no writable v1 hierarchy
// exists, the caller falls back to rlimits and process groups and reports that in the sandbox info.
// Every group lives under `grove/<instance>/`: one server's instance id scopes all its groups, so two servers on one
// host never touch each other's (host-state.ts reaps the groups of dead instances).
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import type { LimitEnforcement } from '../protocol/shell.ts';

type Controller = 'pids' | 'memory' | 'cpu' | 'freezer';
export const CONTROLLERS: Controller[] = ['pids', 'memory', 'cpu', 'freezer'];
export const CGROUP_FS = '/sys/fs/cgroup';
/** The top group all Grove servers share; each server's groups are under `grove/<instance id>`. */
export const GROVE_GROUP = 'grove';

export interface CgroupLimits {
  /** Cores (CFS quota), or null for none. */
  cpu: number | null;
  memoryMb: number | null;
  maxProcesses: number;
}

export type Enforcement = { cpu: z.infer<typeof LimitEnforcement>; memory: z.infer<typeof LimitEnforcement>; processes: z.infer<typeof LimitEnforcement> };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The writable v1 hierarchies under `root`, with this instance's group made in each, or null when there are none. */
export async function detectCgroups(instance: string, root = CGROUP_FS): Promise<CgroupRoot | null> {
  const found = new Map<Controller, string>();
  for (const c of CONTROLLERS) {
    const dir = path.join(root, c);
    if (!existsSync(path.join(dir, 'cgroup.procs'))) continue;
    try {
      await mkdir(path.join(dir, GROVE_GROUP, instance), { recursive: true });
      found.set(c, path.join(dir, GROVE_GROUP, instance));
    } catch {
      // read-only or not ours: skip this controller
    }
  }
  // The freezer is what makes "kill the whole tree" reliable; without it cgroups are not worth the setup.
  return found.has('freezer') ? new CgroupRoot(found) : null;
}

export class CgroupRoot {
  constructor(private readonly dirs: Map<Controller, string>) {}

  has(c: Controller): boolean {
    return this.dirs.has(c);
  }

  /** This instance's own group in each hierarchy (removed at shutdown). */
  instanceDirs(): string[] {
    return [...this.dirs.values()];
  }

  /** Creates the sandbox's cgroups (`name` is unique within this instance) and writes its limits. */
  async create(name: string, limits: CgroupLimits): Promise<SandboxCgroups> {
    const dirs = new Map<Controller, string>();
    for (const [c, base] of this.dirs) dirs.set(c, path.join(base, name));
    // An existing group is never taken over (nor destroyed): names are unique within this instance.
    for (const d of dirs.values()) await mkdir(d);
    const enforced: Enforcement = { cpu: 'none', memory: 'none', processes: 'none' };
    const pids = dirs.get('pids');
    if (pids) {
      await writeFile(path.join(pids, 'pids.max'), String(limits.maxProcesses));
      enforced.processes = 'cgroup';
    }
    const mem = dirs.get('memory');
    if (mem && limits.memoryMb !== null) {
      const bytes = String(limits.memoryMb * 1024 * 1024);
      await writeFile(path.join(mem, 'memory.limit_in_bytes'), bytes);
      // With swap accounting, swap counts too (else a sandbox could page out past its limit).
      await writeFile(path.join(mem, 'memory.memsw.limit_in_bytes'), bytes).catch(() => {});
      enforced.memory = 'cgroup';
    }
    const cpu = dirs.get('cpu');
    if (cpu && limits.cpu !== null) {
      await writeFile(path.join(cpu, 'cpu.cfs_period_us'), '100000');
      await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpu * 100_000))));
      enforced.cpu = 'cgroup';
    }
    return new SandboxCgroups(dirs, enforced);
  }
}

export class SandboxCgroups {
  private seq = 0;
  constructor(
    private readonly dirs: Map<Controller, string>,
    readonly enforced: Enforcement,
  ) {}

  /** Empty exec groups ready for reuse: creating and removing a cgroup costs far more than an exec on a busy host. */
  private readonly free: string[] = [];

  /** A freezer child for one exec (or the holder), reused when one is free; returns its key. */
  async newGroup(prefix = 'e'): Promise<string> {
    if (prefix === 'e' && this.free.length > 0) return this.free.pop() as string;
    const key = `${prefix}${++this.seq}`;
    await mkdir(path.join(this.freezer, key));
    return key;
  }

  /** Gives an exec's group back once it is empty (a background process may keep it until the sandbox ends). */
  async releaseGroup(key: string): Promise<void> {
    if ((await this.pids(key)).length === 0 && this.free.length < 8) this.free.push(key);
  }

  private get freezer(): string {
    return this.dirs.get('freezer') as string;
  }

  /** The cgroup.procs files a process joins to belong to the sandbox and to group `key`. */
  procsFiles(key: string): string[] {
    const out: string[] = [];
    for (const [c, d] of this.dirs) out.push(path.join(c === 'freezer' ? path.join(d, key) : d, 'cgroup.procs'));
    return out;
  }

  /** Pids in group `key` (empty when it is gone). */
  async pids(key?: string): Promise<number[]> {
    const dir = key ? path.join(this.freezer, key) : this.freezer;
    const text = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    return text.split('\n').filter(Boolean).map(Number);
  }

  /** Freezes group `key` (or the whole sandbox), SIGKILLs every process in it, thaws, waits until it is empty. */
  async kill(key?: string, deadlineMs = 5000): Promise<void> {
    const dir = key ? path.join(this.freezer, key) : this.freezer;
    if (!existsSync(dir)) return;
    const state = path.join(dir, 'freezer.state');
    const end = Date.now() + deadlineMs;
    await writeFile(state, 'FROZEN').catch(() => {});
    // Freezing is asynchronous: a forking process is caught once the state reads FROZEN.
    while (Date.now() < end && (await readFile(state, 'utf8').catch(() => 'FROZEN')).trim() !== 'FROZEN') await sleep(2);
    for (const d of await this.allDirs(dir)) {
      const text = await readFile(path.join(d, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const pid of text.split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    await writeFile(state, 'THAWED').catch(() => {});
    while (Date.now() < end) {
      let left = 0;
      for (const d of await this.allDirs(dir)) left += (await readFile(path.join(d, 'cgroup.procs'), 'utf8').catch(() => '')).trim() ? 1 : 0;
      if (left === 0) return;
      await sleep(5);
    }
  }

  private async allDirs(dir: string): Promise<string[]> {
    const out = [dir];
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) out.push(...(await this.allDirs(path.join(dir, e.name))));
    return out;
  }

  /** Kills everything and removes the sandbox's cgroups. */
  async destroy(): Promise<void> {
    await this.kill();
    for (const dir of this.dirs.values()) for (const d of await cgroupTreePostOrder(dir)) await rmdir(d).catch(() => {});
  }
}

/** Every directory of a cgroup tree, children before their parent (the order rmdir needs). */
export async function cgroupTreePostOrder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) out.push(...(await cgroupTreePostOrder(path.join(dir, e.name))));
  out.push(dir);
  return out;
}

/** Freezes `freezerDir` (when given), SIGKILLs every process in each tree, thaws, and removes the trees. */
export async function killAndRemoveTrees(dirs: string[], freezerDir: string | null, deadlineMs = 5000): Promise<void> {
  if (freezerDir && existsSync(freezerDir)) await new SandboxCgroups(new Map([['freezer', freezerDir]]), { cpu: 'none', memory: 'none', processes: 'none' }).kill(undefined, deadlineMs);
  for (const dir of dirs) {
    for (const d of await cgroupTreePostOrder(dir)) {
      const text = await readFile(path.join(d, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const pid of text.split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }
  const end = Date.now() + deadlineMs;
  for (const dir of dirs) {
    for (const d of await cgroupTreePostOrder(dir)) {
      // A killed process leaves its group a moment later: retry until the deadline.
      while ((await rmdir(d).then(() => true, (e: NodeJS.ErrnoException) => e.code === 'ENOENT')) === false && Date.now() < end) await sleep(10);
    }
  }
}

/** Whether any process is in the tree. */
export async function cgroupTreeBusy(dir: string): Promise<boolean> {
  for (const d of await cgroupTreePostOrder(dir)) if ((await readFile(path.join(d, 'cgroup.procs'), 'utf8').catch(() => '')).trim()) return true;
  return false;
}
