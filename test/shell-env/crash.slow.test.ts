// No leaked processes: a server killed with SIGKILL takes every sandbox process with it (bubblewrap's
// --die-with-parent ends the holder, and with it the sandbox's PID namespace).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { hostProcesses, processesWhen } from '../support/processes.ts';

it('a server killed with SIGKILL leaves no sandbox process behind', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-shell-crash-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/shell-env/server-child.fixture.ts', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (b: Buffer) => {
      buf += b.toString();
      if (buf.includes('\n')) resolve(buf.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited early (${code})`)));
  });
  const { uid } = JSON.parse(line) as { uid: number };
  const sleeps = () => hostProcesses(uid).filter((a) => /sleep 77[78]/.test(a));
  expect(await processesWhen(sleeps, (p) => p.length >= 2)).toHaveLength(2);
  child.kill('SIGKILL');
  // The kernel tears the namespace down asynchronously: look until the processes are gone (bounded).
  expect(await processesWhen(() => hostProcesses(uid), (p) => p.length === 0)).toEqual([]);
}, 60_000);
