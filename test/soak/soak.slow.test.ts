// The short CI variant of `npm run soak` (issue 8): a real server under concurrent episodes for 2 minutes at
// concurrency 4 with every fault injected — renderer and browser killed, server SIGKILLed and restarted, busy loops,
// dialog and popup storms, a page that never loads, a large download. No episode may be lost without a cause, no
// step may outlive its deadline, and nothing may be left behind: no process, no temporary folder (the server's
// TMPDIR, its data dir). The full run is `npm run soak` (60 minutes at concurrency 16).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

interface Summary {
  episodes: number;
  episodes_ok: number;
  episodes_lost_unattributed: number;
  lost_reasons: string[];
  steps: number;
  steps_over_deadline: number;
  leaked_processes: number;
  leaked_temp_folders: string[];
  injected: Record<string, number>;
  injections_below_target: string[];
}

it('soak --ci: nothing lost without attribution, no step past its deadline, no leaked process or temp folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'grove-soak-ci-'));
  const out = join(dir, 'soak.json');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/soak.ts', '--ci', '--json', out], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let log = '';
    child.stdout!.on('data', (d) => (log += String(d)));
    child.stderr!.on('data', (d) => (log += String(d)));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code, log.slice(-3000)).toBe(0);
    const s = JSON.parse(readFileSync(out, 'utf8')) as Summary;
    expect(s.lost_reasons).toEqual([]);
    expect(s.episodes_lost_unattributed).toBe(0);
    expect(s.steps_over_deadline).toBe(0);
    expect(s.leaked_processes).toBe(0);
    expect(s.leaked_temp_folders).toEqual([]);
    expect(s.episodes_ok).toBeGreaterThan(0);
    expect(s.steps).toBeGreaterThan(0);
    // Every fault was injected at least once.
    expect(s.injections_below_target, JSON.stringify(s.injected)).toEqual([]);
    expect(Object.keys(s.injected).sort()).toEqual(
      ['busy_loop', 'dialog_storm', 'kill_browser', 'kill_renderer', 'large_download', 'never_loads', 'popup_storm', 'server_restart'].sort(),
    );
  } finally {
    // A timed-out run: the soak kills its server on SIGTERM.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}, 420_000);
