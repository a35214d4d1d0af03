// The Grove server as a child process (so it can be SIGKILLed and restarted), its Chromium processes, its heap
// snapshots, and what it leaves behind: processes and folders.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { GroveClient } from '../../client/index.ts';
import { cmdline, descendantsOf, pids, tree } from '../core/procfs.ts';
import { CONC, CPU_PROF, KEY, ROOT, SNAPSHOTS, dataDir, serverLog, serverTmp, sleep, soakDir } from './config.ts';
import { run, type Server } from './state.ts';

let port = 0;

// The server runs in a session of its own (startGrove): whatever way this process ends, the current one goes too.
process.once('exit', () => {
  const proc = run.server?.proc;
  if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return p;
}

/** Starts `grove serve` (the same port every time) and waits until it answers /health. */
export async function startGrove(): Promise<Server> {
  port ||= await freePort();
  const logFd = openSync(serverLog, 'a');
  const proc = spawn(
    process.execPath,
    [
      ...(SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOTS}`] : []),
      ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, '--cpu-prof-interval=10000'] : []),
      path.join(ROOT, 'bin/grove.mjs'),
      ...['serve', '--port', String(port), '--api-key', KEY, '--max-sandboxes', String(CONC * 2 + 8), '--data-dir', dataDir],
    ],
    // Its own session, as a service started on its own would have: Linux's autogroup scheduler then gives the
    // server a CPU share of its own instead of splitting one with this soak, which also serves the offline sites,
    // the fault pages and their 400 MB downloads (sharing it, both event loops stalled together under load).
    // Killed with the soak on every way out the soak has (soak.ts), and by the exit handler above.
    { stdio: ['ignore', logFd, 'pipe'], env: { ...process.env, GROVE_LOG_LEVEL: 'warn', TMPDIR: serverTmp }, detached: true },
  );
  closeSync(logFd); // the child has its own copy
  let stderr = '';
  proc.stderr!.on('data', (d) => {
    stderr = (stderr + String(d)).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 300 || proc.exitCode !== null) throw new Error(`grove serve did not start: ${stderr}`);
    await sleep(100);
  }
  return { proc, url, client: new GroveClient({ baseUrl: url, apiKey: KEY, timeoutMs: 180_000 }) };
}

/** Chromium processes of this soak's servers: their command line names a profile or pool of this data dir. */
export function ourChromium(): { pid: number; args: string[] }[] {
  const underServer = new Set(tree(run.server.proc.pid!));
  const out: { pid: number; args: string[] }[] = [];
  for (const pid of pids()) {
    const args = cmdline(pid);
    if (!args[0]?.includes('chromium')) continue;
    // The server's Chromium: its profile lives in the soak's own TMPDIR, or it descends from the server.
    if (args.some((a) => a.includes(soakDir)) || underServer.has(pid)) out.push({ pid, args });
  }
  return out;
}

/** Processes left after the server at serverPid stopped: this soak's Chromium and anything still under the server. */
export function leakedProcesses(serverPid: number): number {
  return ourChromium().length + descendantsOf(serverPid).length;
}

/** Folders the servers left in their data dir and TMPDIR (Playwright profiles and artifacts, anything else). */
export function leftoverFolders(): string[] {
  const leftovers = ['artifacts', 'browser/artifacts', 'browser/downloads'].flatMap((d) => {
    try {
      return readdirSync(path.join(dataDir, d)).map((n) => `${d}/${n}`);
    } catch {
      return [];
    }
  });
  // (tsx keeps its compile cache in TMPDIR: a tool's cache, not Grove's.)
  const tmpAfter = readdirSync(serverTmp)
    .filter((n) => !n.startsWith('tsx-'))
    .map((n) => `tmp/${n}`);
  return [...leftovers, ...tmpAfter];
}

/** Has the server write a heap snapshot into SNAPSHOTS and waits until it is complete (the server answers again). */
export async function heapSnapshot(label: string): Promise<void> {
  if (!SNAPSHOTS) return;
  const before = new Set(readdirSync(SNAPSHOTS));
  const window: [number, number] = [Date.now(), Infinity];
  run.snapshotWindows.push(window);
  run.server.proc.kill('SIGUSR2');
  let file: string | undefined;
  for (let i = 0; i < 600 && !file; i++) {
    await sleep(500);
    file = readdirSync(SNAPSHOTS).find((n) => !before.has(n) && n.endsWith('.heapsnapshot'));
  }
  // The snapshot is written on the server's main thread: once it answers, the file is complete.
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${run.server.url}/health`).then((r) => r.ok, () => false)) break;
    await sleep(500);
  }
  window[1] = Date.now();
  console.log(`heap snapshot (${label}): ${file ? path.join(SNAPSHOTS, file) : 'none written'}`);
}
