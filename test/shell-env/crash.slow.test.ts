// No leaked processes: a server killed with SIGKILL takes every sandbox process with it (bubblewrap's
// --die-with-parent ends the holder, and with it the sandbox's PID namespace).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { unmountUnder } from '../../shell-env/disk.ts';
import { hostProcesses, processesWhen } from '../support/processes.ts';

it('a server killed with SIGKILL leaves no sandbox process behind', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-shell-crash-'));
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'test/shell-env/server-child.fixture.ts', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    child = proc;
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      proc.stdout?.on('data', (b: Buffer) => {
        buf += b.toString();
        if (buf.includes('\n')) resolve(buf.split('\n')[0]);
      });
      proc.once('exit', (code) => reject(new Error(`fixture exited early (${code})`)));
    });
    const { uid } = JSON.parse(line) as { uid: number };
    const sleeps = () => hostProcesses(uid).filter((a) => /sleep 77[78]/.test(a));
    expect(await processesWhen(sleeps, (p) => p.length >= 2)).toHaveLength(2);
    proc.kill('SIGKILL');
    // The kernel tears the namespace down asynchronously: look until the processes are gone (bounded).
    expect(await processesWhen(() => hostProcesses(uid), (p) => p.length === 0)).toEqual([]);
  } finally {
    if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // A SIGKILLed server leaves its sandboxes' disk mounts (a restart's cleanup would take them, as here).
    await unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
