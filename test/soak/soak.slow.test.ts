// The short CI variant of `npm run soak` (issue 8): a real server under concurrent episodes with every fault
// injected at least once — renderer and browser killed, server SIGKILLed and restarted, busy loops, dialog and
// popup storms, a page that never loads, a large download. No episode may be lost without a cause, no step may
// outlive its deadline, and nothing may be left behind. (The full run is `npm run soak`, 60 minutes.)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('soak --ci: nothing lost without attribution, no step past its deadline, no leaks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'grove-soak-ci-'));
  const out = join(dir, 'soak.json');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/soak.ts', '--ci', '--minutes', '1.5', '--json', out], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout!.on('data', (d) => (log += String(d)));
    child.stderr!.on('data', (d) => (log += String(d)));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code, log.slice(-3000)).toBe(0);
    const s = JSON.parse(readFileSync(out, 'utf8')) as {
      episodes: number;
      episodes_ok: number;
      episodes_lost_unattributed: number;
      lost_reasons: string[];
      steps_over_deadline: number;
      leaked_processes: number;
      leaked_temp_folders: string[];
      injected: Record<string, number>;
    };
    expect(s.lost_reasons).toEqual([]);
    expect(s.episodes_lost_unattributed).toBe(0);
    expect(s.steps_over_deadline).toBe(0);
    expect(s.leaked_processes).toBe(0);
    expect(s.leaked_temp_folders).toEqual([]);
    expect(s.episodes_ok).toBeGreaterThan(0);
    for (const f of ['kill_renderer', 'kill_browser', 'server_restart', 'busy_loop', 'dialog_storm', 'popup_storm']) {
      expect(s.injected[f] ?? 0, `${f} injected`).toBeGreaterThanOrEqual(1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 600_000);
