// Host processes as `ps` sees them, for the tests that check what a sandbox started and that it is gone. A command
// that backgrounds a process returns before that process has exec'd its final command line, so a check that it runs
// polls (bounded) instead of reading once; so does a check that it is gone, since the kernel ends it asynchronously.
import { execFileSync } from 'node:child_process';

/** Command lines of the processes of `uid` (every PID namespace), or of every process when no uid is given. */
export function hostProcesses(uid?: number): string[] {
  const who = uid === undefined ? ['-e'] : ['-u', String(uid)];
  try {
    return execFileSync('ps', [...who, '-o', 'args='], { encoding: 'utf8' }).split('\n').map((l) => l.trim()).filter(Boolean);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

/** Reads `list` until `done` holds or 10 s pass, and returns the last reading (the caller asserts on it). */
export async function processesWhen(list: () => string[], done: (found: string[]) => boolean, timeoutMs = 10_000): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  let found = list();
  while (!done(found) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    found = list();
  }
  return found;
}
