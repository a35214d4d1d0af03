// Interactive terminal sessions: the command runs under inside/grove_pty.py (Python's pty module, no native addon)
// inside the sandbox; bytes flow over the exec's stdin/stdout, resizes and signals over a control pipe (fd 3).
import type { Writable } from 'node:stream';
import type { RunningExec, RunOptions } from './exec.ts';
import type { PtyInit, PtySession } from './types.ts';

export async function openPty(
  run: (o: Partial<RunOptions> & { argv: string[] }) => Promise<RunningExec>,
  init: PtyInit,
  cwd: string,
  helper = '/.grove/grove_pty.py',
): Promise<PtySession> {
  const running = await run({
    argv: ['python3', helper, String(init.rows), String(init.cols), ...init.argv],
    cwd,
    env: { TERM: 'xterm-256color', ...(init.env ?? {}) },
    interactive: true,
    extraFds: 1,
    // A terminal lives as long as its client keeps it (or the sandbox lives).
    timeoutMs: 7 * 86400 * 1000,
    maxOutputBytes: 64,
  });
  const child = running.child;
  const control = child.stdio[3] as Writable;
  control.on('error', () => {});
  const exitFns: Array<(code: number) => void> = [];
  let exitCode: number | null = null;
  running.result.then(
    (r) => {
      exitCode = r.exit_code;
      for (const fn of exitFns) fn(r.exit_code);
    },
    () => {
      exitCode = -1;
      for (const fn of exitFns) fn(-1);
    },
  );
  return {
    write(data) {
      if (child.stdin?.writable) child.stdin.write(data);
    },
    resize(rows, cols) {
      if (control.writable) control.write(`resize ${Math.max(1, Math.floor(rows))} ${Math.max(1, Math.floor(cols))}\n`);
    },
    signal(name) {
      if (control.writable && /^[A-Za-z0-9]{1,12}$/.test(name)) control.write(`signal ${name}\n`);
    },
    onData(fn) {
      child.stdout?.on('data', fn);
    },
    onExit(fn) {
      if (exitCode !== null) fn(exitCode);
      else exitFns.push(fn);
    },
    kill: () => running.kill(),
  };
}
