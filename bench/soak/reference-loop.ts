// A reference event loop: an idle Node process in a session of its own (the server has one too: the same CPU share
// under Linux's autogroup scheduler) that only times its own loop, as server/loop-stalls.ts does. A server stall that
// this idle loop shared at the same moment was the machine's (no CPU for anyone); one it did not share was the
// server's own doing. It prints each stall as a JSON line; the soak lines them up with the server's.
import { spawn, type ChildProcess } from 'node:child_process';
import { STALL_MS } from '../../server/loop-stalls.ts';

/** The loop the child runs (plain JavaScript: no tsx to load, nothing else to do). */
const SCRIPT = `
const TICK = 250, STALL = ${STALL_MS};
let due = Date.now() + TICK, max = 0;
setInterval(() => {
  const now = Date.now(), late = now - due;
  due = now + TICK;
  if (late > max) max = late;
  if (late >= STALL) process.stdout.write(JSON.stringify({ at: now, ms: late }) + '\\n');
}, TICK);
process.on('SIGTERM', () => { process.stdout.write(JSON.stringify({ max }) + '\\n', () => process.exit(0)); });
`;

export interface ReferenceLoop {
  /** Its stalls so far: when each ended (ms since the epoch) and how late (ms). */
  stalls: { at: number; ms: number }[];
  /** Stops it; resolves with its longest lateness (ms). */
  stop(): Promise<number>;
}

export function startReferenceLoop(): ReferenceLoop {
  const child: ChildProcess = spawn(process.execPath, ['-e', SCRIPT], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  // Gone with this process, whatever way it ends.
  const kill = () => child.exitCode === null && child.kill('SIGKILL');
  process.once('exit', kill);
  const stalls: { at: number; ms: number }[] = [];
  let max = 0;
  let buf = '';
  child.stdout!.on('data', (d) => {
    buf += String(d);
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = JSON.parse(buf.slice(0, i)) as { at?: number; ms?: number; max?: number };
      buf = buf.slice(i + 1);
      if (line.max !== undefined) max = line.max;
      else stalls.push({ at: line.at!, ms: line.ms! });
    }
  });
  return {
    stalls,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((ok) => child.once('close', ok));
        child.kill('SIGTERM');
        await exited;
      }
      process.off('exit', kill);
      return max;
    },
  };
}
