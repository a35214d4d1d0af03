// Linux processes read through /proc: a process is known by its pid AND its start time (field 22 of
// /proc/<pid>/stat), so a recycled pid is never mistaken for it; a process tree (session, group, descendants) is
// killed only after that identity check.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  sid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat): with the pid, a unique identity. */
  start: number;
  state: string;
}

export function readProcStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces and parentheses: fields start after the last ')'.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: f[0], ppid: Number(f[1]), pgrp: Number(f[2]), sid: Number(f[3]), start: Number(f[19]) };
  } catch {
    return null;
  }
}

export function listProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readProcStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

export function readCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  } catch {
    return [];
  }
}

/** Whether a process with this pid and start time is alive (zombies count as dead). */
export function isAlive(pid: number, start: number): boolean {
  const s = readProcStat(pid);
  return !!s && s.start === start && s.state !== 'Z';
}

/** Finds the live process whose command line carries exactly this argument (our children first: cheap). */
export function findProcessByArg(arg: string): ProcStat | null {
  const all = listProcesses().filter((p) => p.state !== 'Z');
  const children = all.filter((p) => p.ppid === process.pid);
  for (const p of [...children, ...all]) {
    if (readCmdline(p.pid).includes(arg)) return p;
  }
  return null;
}

/**
 * Every live process that belongs to the tree of `root`: its session, its process group and its
 * descendants. When the root is gone its session id cannot have been reused (the kernel keeps a pid
 * reserved while it names a live session or group), so the session members are still its own.
 */
function processTree(root: { pid: number; start: number }, all: ProcStat[] = listProcesses()): ProcStat[] {
  const leader = all.find((p) => p.pid === root.pid);
  if (leader && leader.start !== root.start) return []; // recycled pid: someone else's process
  const members = new Map<number, ProcStat>();
  for (const p of all) if (p.sid === root.pid || p.pgrp === root.pid) members.set(p.pid, p);
  if (leader) {
    members.set(leader.pid, leader);
    const queue = [leader.pid];
    while (queue.length > 0) {
      const parent = queue.pop()!;
      for (const p of all) {
        if (p.ppid === parent && !members.has(p.pid)) {
          members.set(p.pid, p);
          queue.push(p.pid);
        }
      }
    }
  }
  return [...members.values()].filter((p) => p.state !== 'Z');
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone; EPERM: not ours. Either way nothing to do.
  }
}

/** SIGKILLs the whole tree of a recorded Chromium root (after the identity check). Returns the pids hit. */
export function killTree(root: { pid: number; start: number }): number[] {
  const tree = processTree(root);
  if (tree.length === 0) return [];
  signal(-root.pid, 'SIGKILL');
  for (const p of tree) signal(p.pid, 'SIGKILL');
  return tree.map((p) => p.pid);
}

export function userDataDirOf(pid: number): string | undefined {
  const arg = readCmdline(pid).find((a) => a.startsWith('--user-data-dir='));
  return arg?.slice('--user-data-dir='.length);
}
