// Process accounting from Linux /proc: process trees, PSS and RSS, Chromium processes (also used by bench/soak).
import { readdirSync, readFileSync } from 'node:fs';

/** Every process id now in /proc. */
export function pids(): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
}

/** A process's argv (NUL-separated in /proc); [] when it is gone. */
export function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** A process's parent (field 4 of /proc/PID/stat, after the parenthesised name); 0 when it is gone. */
export function ppidOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

function children(): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (const pid of pids()) {
    const ppid = ppidOf(pid);
    if (!ppid) continue; // process gone
    const list = m.get(ppid) ?? [];
    list.push(pid);
    m.set(ppid, list);
  }
  return m;
}

/** root and every process below it. */
export function tree(root: number): number[] {
  const kids = children();
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(kids.get(p) ?? []));
  }
  return out;
}

/** Every process below root (root itself not included). */
export function descendantsOf(root: number): number[] {
  return tree(root).filter((p) => p !== root);
}

export function pssKb(pid: number): number {
  try {
    const m = /Pss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

export function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

export function chromiumPidsUnder(root: number): number[] {
  return tree(root).filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('chromium'); } catch { return false; }
  });
}

/** A Chromium process's type: its --type= flag (renderer, gpu-process, utility, zygote), or 'browser' for the root. */
export function chromiumType(pid: number): string {
  // Chromium rewrites its children's argv into one space-separated string: the executable is its first word.
  const argv = cmdline(pid).join(' ');
  if (argv.split(' ')[0].includes('crashpad')) return 'crashpad';
  const m = / --type=([a-z-]+)/.exec(argv);
  return m ? m[1] : 'browser';
}

/** CPU ms of `pids` summed by Chromium process type. */
export function cpuMsByType(pids: number[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of pids) m.set(chromiumType(p), (m.get(chromiumType(p)) ?? 0) + cpuMs(p));
  return m;
}

export function allChromiumPids(): number[] {
  return pids().filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('/usr/lib/chromium/chromium'); } catch { return false; }
  });
}

/** CPU time (user + system, ms) a process has used; 0 when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ = 100
  } catch {
    return 0;
  }
}

/**
 * Waits until the processes below `root` use less than `share` of one core over a `windowMs` window, at most
 * `maxMs`; returns the time waited (ms). New contexts keep Chromium busy for seconds after their pages load.
 */
export async function settledBelow(root: number, share: number, windowMs: number, maxMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const ps = descendantsOf(root);
    const c0 = ps.reduce((a, p) => a + cpuMs(p), 0);
    await new Promise((ok) => setTimeout(ok, windowMs));
    const used = ps.reduce((a, p) => a + cpuMs(p), 0) - c0;
    const waited = performance.now() - t0;
    if (used < share * windowMs || waited >= maxMs) return waited;
  }
}
