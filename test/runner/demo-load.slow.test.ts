// The demo's core (every offline task, scripted policy, rule judges, concurrency 4: what `grove demo` runs) on a
// loaded machine: beside it, Chromium pages busy-looping in another browser and another demo running in a child
// process, restarted until this one ends. Every episode must still succeed (issue 35: 35/36 twice under such load).
// It runs two full demos (~18 min on the shared 2-core machine at load 50-70), so it is opt-in: GROVE_DEMO_LOAD=1.
// Runs there: 21:46-22:05 (load 50-70 with other engineers' work, before the typing and popup fixes) 22/36: 9
// episodes past the demo's 180 s episode timeout, 5 gave up after garbled or abandoned search typing, 2 env_error;
// 22:32-22:37 (5-min load ~19, the fixes in) passed, 36/36.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from '../../browser-env/chromium-launch.ts';
import { executeRun, type RunIO } from '../../cli/commands/run-exec.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { loadOfflineTasks } from '../../sites/tasks.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
let tmp = '';
let browser: Browser | undefined;
let stopLoad = false;
let child: ChildProcess | undefined;
let loadRuns = 0;

/** Another demo in a child process of its own process group; started again whenever it ends, until stopped. */
function demoLoad(out: string): void {
  if (stopLoad) return;
  loadRuns++;
  const c = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'demo', '--out', join(out, `load-${loadRuns}`)], { cwd: ROOT, detached: true, stdio: 'ignore' });
  child = c;
  c.on('exit', () => {
    if (child === c) child = undefined;
    demoLoad(out);
  });
}

async function stopDemoLoad(): Promise<void> {
  stopLoad = true;
  const c = child;
  if (!c || c.exitCode !== null || c.pid === undefined) return;
  const exited = new Promise((ok) => c.once('exit', ok));
  // SIGINT first (the demo shuts its server and Chromium down), then the whole group we started.
  c.kill('SIGINT');
  const late = setTimeout(() => {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 30_000);
  await exited;
  clearTimeout(late);
}

afterAll(async () => {
  await stopDemoLoad();
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const quiet = (): RunIO => ({ out: () => {}, err: () => {}, progress: { write: () => true, isTTY: false } });

describe.runIf(process.env.GROVE_DEMO_LOAD === '1')('the demo on a loaded machine', () => {
  it('succeeds on every offline task while other browser work runs beside it', async () => {
    tmp = await mkdtemp(join(tmpdir(), 'grove-demo-load-'));
    // Two renderers spinning: about both cores of the CI machine.
    browser = await chromium.launch({ executablePath: loadConfig({ env: {}, flags: {} }).chromiumPath, args: CHROMIUM_FLAGS });
    for (let i = 0; i < 2; i++) {
      const page = await browser.newPage();
      await page.evaluate('setTimeout(() => { for (;;) {} }, 0)');
    }
    demoLoad(tmp);

    const ids = loadOfflineTasks('http://sites.grove.test').map((t) => t.id);
    const r = await executeRun(
      { suite: 'offline', policy: 'scripted', judge: 'rule', judgeAll: true, concurrency: 4, maxSteps: 40, episodeTimeoutSec: 180, out: join(tmp, 'main'), resume: false },
      quiet(),
    );
    // The load was there for the whole run: the other demo was still running (or had been restarted).
    expect(child?.exitCode ?? null).toBeNull();
    await stopDemoLoad();
    const bad = r.summary.episodes
      .filter((e) => e.success !== true)
      .map((e) => `${e.task_id}: ${e.termination.reason} ${e.termination.detail ?? ''} ${e.verdicts[0]?.reasoning ?? ''}`);
    expect(bad).toEqual([]);
    expect(r.summary).toMatchObject({ total: ids.length, finished: ids.length, succeeded: ids.length });
    // No step was refused: the scripted policy only sends actions the schema accepts.
    expect(r.summary.episodes.map((e) => e.parse_failures).filter((n) => n > 0)).toEqual([]);
  }, 1_800_000);
});
