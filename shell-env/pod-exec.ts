// One command of a pod-isolated shell sandbox (shellIsolation "pod": a Kubernetes worker pod is the isolation
// boundary, so no bubblewrap, no namespaces, no root). The command runs as the worker's own unprivileged user under
// inside/grove_reaper.py, a child subreaper in a session of its own: every descendant stays in its tree, a timeout or
// the sandbox closing kills that whole tree (exit code 124 on timeout), and the command's status comes back on a pipe
// as soon as it ends while background processes it left may keep running, as in a bubblewrap sandbox. Each process
// also carries the sandbox's tag in its environment, so what escaped even the reaper (its reaper killed) is found and
// killed by the tag when the sandbox closes.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import type { ExecResult } from '../protocol/shell.ts';
import type { RunningExec, RunOptions } from './exec.ts';
import { CappedOutput } from './output.ts';

const TAG_VAR = 'GROVE_SANDBOX_TAG';

export interface PodExecTarget {
  /** Path of grove_reaper.py. */
  reaper: string;
  /** This sandbox's tag: every command's environment has `${tag}/${n}` (n counts its commands). */
  tag: string;
  execs: number;
  /** RLIMIT_NPROC (0: none). Counts every process of the pod's user, the worker's threads included. */
  maxProcesses: number;
  /** Reapers still alive (commands, or what they left running), ended when the sandbox closes. */
  live: Set<ChildProcess>;
}

const SIGNAL_NAMES = Object.fromEntries(Object.entries(osConstants.signals).map(([name, n]) => [n, name])) as Record<number, NodeJS.Signals>;

export function startPodExec(target: PodExecTarget, opts: RunOptions): RunningExec {
  const extra = opts.extraFds ?? 0;
  const statusFd = 3 + extra;
  const cpuSeconds = Math.ceil(opts.timeoutMs / 1000) + 1;
  const tag = `${target.tag}/${++target.execs}`;
  const child = spawn('python3', [target.reaper, String(statusFd), String(target.maxProcesses), String(cpuSeconds), opts.mergeStderr ? '1' : '0', '--', ...opts.argv], {
    cwd: opts.cwd,
    env: { ...opts.env, [TAG_VAR]: tag, GROVE_REAPER_PARENT: String(process.pid) },
    // A session of its own: no controlling terminal to reach (TIOCSTI), and its process group to kill as a fallback.
    detached: true,
    stdio: [
      opts.stdin === undefined && !opts.interactive ? 'ignore' : 'pipe',
      'pipe',
      opts.mergeStderr ? 'ignore' : 'pipe',
      ...Array<'pipe'>(extra).fill('pipe'),
      'pipe',
    ],
  });
  target.live.add(child);
  child.once('exit', () => target.live.delete(child));
  const started = performance.now();
  const out = new CappedOutput(opts.maxOutputBytes);
  const err = new CappedOutput(opts.maxOutputBytes);
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => err.push(b));
  child.stdin?.on('error', () => {});
  if (opts.stdin !== undefined && !opts.interactive) child.stdin?.end(opts.stdin);

  // The command's own status, reported by the reaper the moment the command ended.
  let statusText = '';
  const statusPipe = child.stdio[statusFd] as Readable;
  statusPipe.on('data', (b: Buffer) => (statusText += b.toString('utf8')));
  const status = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const fromReaper = () => {
      const m = /^(exit|signal) (\d+)/.exec(statusText);
      if (m) resolve(m[1] === 'exit' ? { code: Number(m[2]), signal: null } : { code: null, signal: SIGNAL_NAMES[Number(m[2])] ?? null });
      // No status: the reaper itself ended first (killed): its own exit stands for the command's.
      else child.once('exit', (code, signal) => resolve({ code, signal }));
      if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    };
    statusPipe.once('end', fromReaper);
    statusPipe.once('error', fromReaper);
  });
  const streamsDone = Promise.all(
    [child.stdout, child.stderr].filter((s): s is Readable => s !== null).map((s) => new Promise<void>((r) => (s.readableEnded || s.destroyed ? r() : s.once('close', () => r())))),
  );

  let timedOut = false;
  let killing: Promise<void> | null = null;
  const kill = () =>
    (killing ??= (async () => {
      await killReaper(child);
      await killTagged(`${tag}\0`);
    })());
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, opts.timeoutMs);

  const result = new Promise<ExecResult>((resolve, reject) => {
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    void Promise.all([status, streamsDone]).then(([st]) => {
      clearTimeout(timer);
      const merged = opts.mergeStderr;
      let exit = st.code ?? (st.signal ? 128 + (osConstants.signals[st.signal] ?? 0) : -1);
      if (timedOut) exit = 124;
      resolve({
        exit_code: exit,
        timed_out: timedOut,
        signal: timedOut ? 'SIGKILL' : st.signal,
        stdout: out.text(),
        stderr: merged ? '' : err.text(),
        stdout_bytes: out.total,
        stderr_bytes: merged ? 0 : err.total,
        truncated: { stdout: out.truncated, stderr: merged ? false : err.truncated },
        merged,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      });
    });
  });
  return { child, result, stdoutBytes: () => out.bytes(), kill };
}

/**
 * The reaper kills its tree on SIGTERM and exits; then its process group goes too (anything started before it was
 * a subreaper). A reaper that does not exit in time is killed outright (its tree is then left to killTagged).
 */
export async function killReaper(child: ChildProcess, graceMs = 3000): Promise<void> {
  const pid = child.pid;
  if (child.exitCode === null && child.signalCode === null && pid) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited(child);
    clearTimeout(timer);
  }
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

/**
 * Kills every process of this user whose tag (in its environment) starts with `prefix` (repeated until none is
 * left or the passes run out), for what escaped its reaper. Returns how many were signalled.
 */
export async function killTagged(prefix: string, passes = 20): Promise<number> {
  const needle = Buffer.from(`\0${TAG_VAR}=${prefix}`);
  const first = Buffer.from(`${TAG_VAR}=${prefix}`);
  let total = 0;
  for (let i = 0; i < passes; i++) {
    let found = 0;
    for (const name of await readdir('/proc')) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
      const env = await readFile(`/proc/${name}/environ`).catch(() => null);
      if (!env || (!env.includes(needle) && !env.subarray(0, first.length).equals(first))) continue;
      try {
        process.kill(Number(name), 'SIGKILL');
        found++;
      } catch {
        // gone, or not ours
      }
    }
    total += found;
    if (found === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return total;
}
