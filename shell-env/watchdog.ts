// The watchdog of one shell instance: a detached `sh` that blocks reading a pipe only the server holds. When the
// server dies (SIGKILL included) the pipe closes and the sh runs reap-main.ts, which removes what every dead
// instance made (host-state.ts: processes, cgroups, disk mounts, folders, uid claims). A graceful shutdown removes
// its own things and then kills the watchdog. The sh costs ~1 MB; Node starts only when there is work.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../sandbox/log.ts';
import { HOST_ENV } from './exec.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = fileURLToPath(new URL('./reap-main.ts', import.meta.url));

// $0 node, $1 the reaper's entry. `read` returns non-zero at end of file: the server is gone.
const SCRIPT = 'while read -r _; do :; done; exec "$0" --import tsx "$1"';

export class ShellWatchdog {
  private constructor(private readonly child: ChildProcess) {}

  static start(log: Logger): ShellWatchdog {
    const child = spawn('/bin/sh', ['-c', SCRIPT, process.execPath, MAIN], {
      cwd: ROOT,
      env: HOST_ENV,
      // Its own session: a signal to the server's process group must not take it along.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', (err) => log.error({ err }, 'shell watchdog failed to start'));
    child.stdin?.on('error', () => {});
    // Neither the child nor its pipe keeps the server's event loop alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return new ShellWatchdog(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** After a graceful shutdown there is nothing left to reap: the watchdog goes without running the reaper. */
  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
