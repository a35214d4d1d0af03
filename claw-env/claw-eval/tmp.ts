// Temp folders of the Claw-Eval path (a trial's service sockets, the driver, a grade's or prompt's files), named
// grove-claw-eval-<pid>-<kind>-XXXXXX, and one watchdog per process that removes them when the process dies however it
// dies (SIGKILL included): a detached `sh` blocked reading a pipe whose write end only this process holds; at EOF it
// removes this pid's folders. Each folder is still removed by its owner when done; the watchdog is the net for a
// parent that never got that far. (The services themselves die with it: bwrap --die-with-parent, own PID namespace.)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

let watchdog: ChildProcess | undefined;

function ensureWatchdog(): void {
  if (watchdog) return;
  // The folder and pid are positional arguments ($1, $2), never part of the script.
  const child = spawn('/bin/sh', ['-c', 'cat >/dev/null; rm -rf "$1"/grove-claw-eval-"$2"-*', 'grove-claw-eval-watchdog', tmpdir(), String(process.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: { PATH: '/usr/bin:/bin' },
  });
  child.on('error', () => (watchdog = undefined));
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  watchdog = child;
}

/** A fresh temp folder of this process's Claw-Eval work (removed by the watchdog if the process dies first). */
export function clawEvalTempDir(kind: string): string {
  ensureWatchdog();
  return mkdtempSync(path.join(tmpdir(), `grove-claw-eval-${process.pid}-${kind}-`));
}
