// Host-level state shared by every Grove server on this machine (one directory, STATE_DIR): each server's shell
// environment is an *instance* with a random id and a marker `instances/<id>.json` naming its owner process (pid +
// start time, so a recycled pid is never taken for it), its data folder and its cgroups (`grove/<id>` in each
// hierarchy). Sandbox uids are claimed host-wide (`uids/<uid>` holds the claiming instance's id), so two servers
// never run sandboxes as one uid. `reapDeadInstances` removes everything an instance whose owner is gone made:
// its processes and cgroups, its mounts (disk images), its data folder, its uid claims and its marker; a live
// instance's things are never touched. It runs when an environment starts and from the watchdog (watchdog.ts).
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '../sandbox/log.ts';
import { CGROUP_FS, CONTROLLERS, GROVE_GROUP, cgroupTreeBusy, killAndRemoveTrees } from './cgroups.ts';
import { unmountUnder } from './disk.ts';

export const STATE_DIR = '/run/grove/shell';
/** Instance ids: `i` + 12 hex digits. Anything else under the cgroups' `grove/` is from an older server. */
const INSTANCE_RE = /^i[0-9a-f]{12}$/;

export interface InstanceMarker {
  id: string;
  owner: { pid: number; start: number };
  /** The instance's data folder (one subfolder per sandbox), removed when it is reaped. */
  dir: string;
}

/** Start time (clock ticks since boot) of a process, or null when it does not exist. */
export function processStart(pid: number): number | null {
  try {
    const t = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = t.slice(t.lastIndexOf(')') + 2).split(' ');
    return f[0] === 'Z' ? null : Number(f[19]);
  } catch {
    return null;
  }
}

function alive(m: InstanceMarker | null): boolean {
  return m !== null && processStart(m.owner.pid) === m.owner.start;
}

async function readMarker(stateDir: string, id: string): Promise<InstanceMarker | null> {
  try {
    return JSON.parse(await readFile(path.join(stateDir, 'instances', `${id}.json`), 'utf8')) as InstanceMarker;
  } catch {
    return null;
  }
}

/** This server's instance: its marker is written before anything it makes exists. */
export async function registerInstance(dataRoot: string, stateDir = STATE_DIR): Promise<InstanceMarker> {
  const id = `i${randomBytes(6).toString('hex')}`;
  const start = processStart(process.pid) ?? 0;
  const m: InstanceMarker = { id, owner: { pid: process.pid, start }, dir: path.join(dataRoot, id) };
  await mkdir(path.join(stateDir, 'instances'), { recursive: true, mode: 0o700 });
  await mkdir(path.join(stateDir, 'uids'), { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, 'instances', `${id}.json`);
  await writeFile(`${file}.tmp`, JSON.stringify(m));
  await rename(`${file}.tmp`, file);
  return m;
}

/** Removes a live instance's marker after a graceful shutdown removed its things. */
export async function unregisterInstance(m: InstanceMarker, stateDir = STATE_DIR): Promise<void> {
  await unlink(path.join(stateDir, 'instances', `${m.id}.json`)).catch(() => {});
}

/** Claims `uid` for instance `id` host-wide; false when a live instance holds it. A dead one's claim is taken over. */
export async function claimUid(uid: number, id: string, stateDir = STATE_DIR): Promise<boolean> {
  const file = path.join(stateDir, 'uids', String(uid));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, id, { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (owner === id || (owner && alive(await readMarker(stateDir, owner)))) return false;
    await unlink(file).catch(() => {});
  }
  return false;
}

export async function releaseUid(uid: number, id: string, stateDir = STATE_DIR): Promise<void> {
  const file = path.join(stateDir, 'uids', String(uid));
  if ((await readFile(file, 'utf8').catch(() => '')).trim() === id) await unlink(file).catch(() => {});
}

/** The cgroups of instance `id` in each hierarchy (existing ones). */
function instanceCgroups(id: string, cgroupFs: string): { dirs: string[]; freezer: string | null } {
  const dirs: string[] = [];
  let freezer: string | null = null;
  for (const c of CONTROLLERS) {
    const d = path.join(cgroupFs, c, GROVE_GROUP, id);
    if (!existsSync(d)) continue;
    dirs.push(d);
    if (c === 'freezer') freezer = d;
  }
  return { dirs, freezer };
}

/** Removes what instance `m` made (its owner must be dead, or this is its own graceful shutdown). */
export async function removeInstance(m: InstanceMarker, opts: { stateDir?: string; cgroupFs?: string; log?: Logger } = {}): Promise<void> {
  const stateDir = opts.stateDir ?? STATE_DIR;
  const cg = instanceCgroups(m.id, opts.cgroupFs ?? CGROUP_FS);
  await killAndRemoveTrees(cg.dirs, cg.freezer);
  await unmountUnder(m.dir);
  await rm(m.dir, { recursive: true, force: true }).catch((err: unknown) => opts.log?.warn({ err, dir: m.dir }, 'could not remove a shell instance folder'));
  for (const name of await readdir(path.join(stateDir, 'uids')).catch(() => [])) {
    const file = path.join(stateDir, 'uids', name);
    if ((await readFile(file, 'utf8').catch(() => '')).trim() === m.id) await unlink(file).catch(() => {});
  }
  await unregisterInstance(m, stateDir);
}

/**
 * Removes everything dead instances made: those with a marker whose owner is gone, and cgroups of instances with
 * no marker at all. Groups of older servers (`grove/<sandbox>`, no instance level) are removed when empty.
 */
export async function reapDeadInstances(opts: { stateDir?: string; cgroupFs?: string; log?: Logger } = {}): Promise<string[]> {
  const stateDir = opts.stateDir ?? STATE_DIR;
  const cgroupFs = opts.cgroupFs ?? CGROUP_FS;
  const reaped: string[] = [];
  for (const name of await readdir(path.join(stateDir, 'instances')).catch(() => [])) {
    if (!name.endsWith('.json')) continue;
    const id = name.slice(0, -5);
    const m = await readMarker(stateDir, id);
    if (!m || alive(m)) continue;
    await removeInstance(m, opts);
    reaped.push(id);
  }
  for (const c of CONTROLLERS) {
    const top = path.join(cgroupFs, c, GROVE_GROUP);
    for (const e of await readdir(top, { withFileTypes: true }).catch(() => [])) {
      if (!e.isDirectory()) continue;
      const dir = path.join(top, e.name);
      if (INSTANCE_RE.test(e.name)) {
        // Read the marker now, not from the listing above: an instance starting meanwhile has written it first.
        if (existsSync(path.join(stateDir, 'instances', `${e.name}.json`))) continue;
        const freezer = c === 'freezer' ? dir : null;
        await killAndRemoveTrees([dir], freezer);
        if (!reaped.includes(e.name)) reaped.push(e.name);
      } else if (!(await cgroupTreeBusy(dir))) {
        await killAndRemoveTrees([dir], null);
      }
    }
  }
  if (reaped.length) opts.log?.warn({ instances: reaped }, 'removed what dead shell instances left (processes, cgroups, mounts, folders)');
  return reaped;
}
