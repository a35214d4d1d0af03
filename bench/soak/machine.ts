// What the machine itself did while the soak ran, read from the kernel: time every task waited on the disk
// (/proc/pressure/io) and time the hypervisor kept this VM's CPUs from running (/proc/stat's `steal`). A step that
// runs over while the host took the CPUs away ran over on no process's account; the summary shows both beside it.
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** /proc/pressure/io's `full` total in µs (NaN where the kernel has no PSI). */
export function ioFullUs(): number {
  try {
    return Number(/^full .*total=(\d+)/m.exec(readFileSync('/proc/pressure/io', 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** USER_HZ: /proc/stat counts in 1/100 s on every Linux architecture Node runs on. */
const TICKS_PER_S = 100;
const CPUS = os.cpus().length || 1;

/**
 * Wall-clock ms the hypervisor held this machine's CPUs, averaged over the CPUs (the 8th field of /proc/stat's
 * `cpu` line, summed over CPUs, divided by their number): 1000 means every CPU was stolen for a second. NaN when
 * the kernel reports no steal (bare metal, or a guest without steal accounting).
 */
export function stolenMs(): number {
  try {
    const f = /^cpu\s+(.*)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1].trim().split(/\s+/).map(Number);
    return f && f.length >= 8 ? (f[7] * 1000) / TICKS_PER_S / CPUS : NaN;
  } catch {
    return NaN;
  }
}
