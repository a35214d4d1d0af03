// Process accounting from Linux /proc: process trees, PSS and RSS, Chromium processes.
import { readdirSync, readFileSync } from 'node:fs';

function children(): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = m.get(ppid) ?? [];
      list.push(Number(d));
      m.set(ppid, list);
    } catch { /* process gone */ }
  }
  return m;
}

function tree(root: number): number[] {
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

export function allChromiumPids(): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('/usr/lib/chromium/chromium'); } catch { return false; }
  });
}
