// CPU time from Linux /proc, for the tests that load the machine on purpose and must show the load was there: the
// machine's busy time (every CPU) and the CPU time of process trees (a child process and everything below it: a
// demo's Chromium leads a session of its own, so the tree, not the session, is what holds it). Processes are read at
// each sample, so a process counts as far as it was seen (one that lives less than a sampling period may not count
// at all): the figure is a lower bound.
import { readdirSync, readFileSync } from 'node:fs';

/** /proc counts CPU time in USER_HZ ticks: 1/100 s on every Linux architecture Node runs on. */
const MS_PER_TICK = 10;

/** The machine's CPU time (ms summed over CPUs): busy (everything but idle and iowait) and total. */
export function machineCpuMs(): { busy: number; total: number } {
  const f = /^cpu\s+(.*)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1].trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (total - f[3] - f[4]) * MS_PER_TICK, total: total * MS_PER_TICK };
}

interface ProcCpu {
  /** pid + start time: a reused pid is another process. */
  key: string;
  pid: number;
  ppid: number;
  /** utime + stime, ms (not the reaped children's cutime: they were counted while they ran, as far as seen). */
  ms: number;
}

function procs(): ProcCpu[] {
  const out: ProcCpu[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the parenthesised command: state(3) ppid(4) … utime(14) stime(15) … starttime(22).
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ key: `${pid}@${f[19]}`, pid: Number(pid), ppid: Number(f[1]), ms: (Number(f[11]) + Number(f[12])) * MS_PER_TICK });
    } catch {
      // gone while we looked
    }
  }
  return out;
}

/**
 * Follows the CPU time of `roots()` and every process below them (roots are read at each sample: children come
 * and go as they are restarted), from start() on. A process already running at start counts from there.
 */
export class TreeCpu {
  private readonly first = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly roots: () => Iterable<number>) {}

  start(periodMs = 500): void {
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), periodMs);
  }

  /** Samples once more, stops and returns the CPU ms those trees used since start(). */
  stop(): number {
    this.sample(false);
    clearInterval(this.timer);
    let ms = 0;
    for (const [k, v] of this.last) ms += v - (this.first.get(k) ?? 0);
    return ms;
  }

  private sample(baseline: boolean): void {
    const all = procs();
    const kids = new Map<number, ProcCpu[]>();
    for (const p of all) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), p]);
    const roots = new Set(this.roots());
    const stack = all.filter((p) => roots.has(p.pid));
    while (stack.length) {
      const p = stack.pop()!;
      if (baseline) this.first.set(p.key, p.ms);
      this.last.set(p.key, p.ms);
      stack.push(...(kids.get(p.pid) ?? []));
    }
  }
}

/**
 * CPU ms the Chromium renderers (`--type=renderer`) below `root` have used so far (processes as seen now): over
 * a few hundred ms they show whether the pages of a browser somebody started are actually running.
 */
export function rendererCpuMs(root: number): number {
  const all = procs();
  const kids = new Map<number, ProcCpu[]>();
  for (const p of all) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), p]);
  let ms = 0;
  const stack = all.filter((p) => p.pid === root);
  while (stack.length) {
    const p = stack.pop()!;
    if (isRenderer(p.pid)) ms += p.ms;
    stack.push(...(kids.get(p.pid) ?? []));
  }
  return ms;
}

function isRenderer(pid: number): boolean {
  try {
    // Chromium rewrites its children's command line into one space-separated string.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/).includes('--type=renderer');
  } catch {
    return false;
  }
}
