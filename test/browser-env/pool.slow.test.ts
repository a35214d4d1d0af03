import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { queryObjects } from 'node:v8';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ChromiumPool } from '../../browser-env/pool.ts';
import { listProcesses, readCmdline, readProcStat, userDataDirOf } from '../../browser-env/reaper.ts';

const dirs: string[] = [];
const pools: ChromiumPool[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'grove-pool-test-'));
  dirs.push(d);
  return d;
}
function makePool(opts: Partial<ConstructorParameters<typeof ChromiumPool>[0]> = {}): ChromiumPool {
  const pool = new ChromiumPool({
    executablePath: '/usr/bin/chromium',
    processes: 1,
    recycleAfter: 0,
    dataDir: dataDir(),
    headless: true,
    extraArgs: [],
    ...opts,
  });
  pools.push(pool);
  return pool;
}

/** Live (non-zombie) processes in the sessions led by these roots, plus the roots themselves. */
function survivors(roots: number[]): number[] {
  return listProcesses()
    .filter((p) => p.state !== 'Z' && (roots.includes(p.sid) || roots.includes(p.pid)))
    .map((p) => p.pid);
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Chromium roots this test process launched (the pool's marker flag, parent = us). */
function ownChromiumRoots(): number[] {
  return listProcesses()
    .filter((p) => p.ppid === process.pid && p.state !== 'Z' && readCmdline(p.pid).some((a) => a.startsWith('--grove-pool=')))
    .map((p) => p.pid);
}

/** Kills the pool's browser `afterMs` after starting six context creations on it; releases what was created. */
async function killWhileCreating(pool: ChromiumPool, afterMs: number): Promise<void> {
  // A function of its own, so no reference to these contexts outlives it on the test's stack.
  const [pid] = pool.pids();
  const creating = Array.from({ length: 6 }, () => pool.newContext({}));
  await new Promise((r) => setTimeout(r, afterMs));
  process.kill(pid, 'SIGKILL');
  for (const r of await Promise.allSettled(creating)) if (r.status === 'fulfilled') await r.value.release();
  await until(() => pool.pids().length === 1 && pool.pids()[0] !== pid);
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('ChromiumPool', () => {
  it('leaves no Chromium behind when its server is SIGKILLed', async () => {
    const dir = dataDir();
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/browser-env/pool-child.fixture.ts', dir], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      const { pids, watchdog } = JSON.parse(line[0]) as { pids: number[]; watchdog: number };
      expect(pids).toHaveLength(2);
      const tree = survivors(pids);
      expect(tree.length).toBeGreaterThan(2); // roots plus zygotes, renderers, utilities
      expect(readdirSync(join(dir, 'chromium-pids'))).toHaveLength(1);
      const profiles = pids.map((pid) => userDataDirOf(pid));
      expect(profiles.every((p) => p && existsSync(p))).toBe(true);

      child.kill('SIGKILL');
      await until(() => survivors(pids).length === 0);
      await until(() => readProcStat(watchdog) === null || readProcStat(watchdog)?.state === 'Z');
      expect(readdirSync(join(dir, 'chromium-pids'))).toEqual([]);
      // Playwright's temporary profiles would otherwise pile up in /tmp after every crash.
      expect(profiles.filter((p) => existsSync(p!))).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('launches exactly `processes` Chromiums for concurrent newContext calls during start', async () => {
    const pool = makePool({ processes: 2 });
    const contexts = await Promise.all(Array.from({ length: 5 }, () => pool.newContext({})));
    expect(ownChromiumRoots()).toHaveLength(2);
    expect(new Set(contexts.map((c) => c.browserPid)).size).toBe(2);
    expect(pool.stats()).toMatchObject({ chromium_processes: 2, contexts_open: 5, contexts_created_total: 5, browser_restarts_total: 0 });
    // Least-loaded: 5 contexts over 2 processes split 3/2.
    const perPid = contexts.reduce<Record<number, number>>((m, c) => ({ ...m, [c.browserPid]: (m[c.browserPid] ?? 0) + 1 }), {});
    expect(Object.values(perPid).sort()).toEqual([2, 3]);
    await Promise.all(contexts.map((c) => c.release()));
    expect(pool.stats().contexts_open).toBe(0);
  });

  it('recycles a process after recycleAfter contexts, once its last context is released', async () => {
    const pool = makePool({ processes: 1, recycleAfter: 2 });
    await pool.start();
    const [first] = pool.pids();
    const a = await pool.newContext({});
    const b = await pool.newContext({});
    expect([a.browserPid, b.browserPid]).toEqual([first, first]);
    const c = await pool.newContext({}); // the replacement
    expect(c.browserPid).not.toBe(first);
    const page = await a.context.newPage(); // the draining process still serves its open contexts
    await page.setContent('<p>still here</p>');
    expect(survivors([first]).length).toBeGreaterThan(0);
    await a.release();
    expect(pool.pids()).toContain(first);
    await b.release();
    // Retirement runs in the background (release() does not wait for the browser to close).
    await until(() => survivors([first]).length === 0 && pool.pids().length === 1);
    expect(pool.pids()).toEqual([c.browserPid]);
    expect(pool.stats()).toMatchObject({ chromium_processes: 1, browser_restarts_total: 1, browser_crashes_total: 0, contexts_open: 1 });
    await c.release();
  });

  it('replaces a crashed process', async () => {
    const pool = makePool({ processes: 1 });
    const a = await pool.newContext({});
    const closed = new Promise<void>((resolve) => a.context.once('close', () => resolve()));
    process.kill(a.browserPid, 'SIGKILL');
    await closed;
    const b = await pool.newContext({});
    expect(b.browserPid).not.toBe(a.browserPid);
    const page = await b.context.newPage();
    await page.setContent('<p>ok</p>');
    expect(await page.textContent('p')).toBe('ok');
    expect(pool.stats()).toMatchObject({ browser_crashes_total: 1, browser_restarts_total: 1, chromium_processes: 1, contexts_open: 1 });
    await until(() => survivors([a.browserPid]).length === 0);
    await a.release(); // releasing a context of a dead browser is harmless
    await b.release();
    expect(pool.stats().contexts_open).toBe(0);
  });

  it('keeps nothing of a browser killed while contexts were being created on it', async () => {
    // Playwright's server builds a context before it is initialized; if the browser dies in between, nothing closes
    // that context and a static registry keeps it (and the dead browser with all its pages) alive forever. Counted
    // here directly: Playwright's server-side context objects left on the heap after everything was released.
    const { BrowserContext: ServerContext } = createRequire(import.meta.url)('playwright-core/lib/coreBundle').server;
    const liveServerContexts = () => queryObjects(ServerContext, { format: 'count' }) as number;
    const pool = makePool({ processes: 1 });
    await pool.start();
    const before = liveServerContexts();
    for (let round = 0; round < 12; round++) await killWhileCreating(pool, (round % 6) * 8);
    // Whatever a dead browser left must be collectable once the pool has let go of it.
    let left = liveServerContexts() - before;
    for (let i = 0; i < 80 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = liveServerContexts() - before;
    }
    expect(left).toBeLessThanOrEqual(0); // below 0 when an earlier test's context was collected meanwhile
  });

  it('kills what a dead server left at start, but never a recycled pid', async () => {
    const dir = dataDir();
    const pidDir = join(dir, 'chromium-pids');
    mkdirSync(pidDir, { recursive: true });
    const orphan = spawn(
      '/usr/bin/chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-port=0', `--user-data-dir=${join(dir, 'profile')}`, 'about:blank'],
      { detached: true, stdio: 'ignore' },
    );
    const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await until(() => survivors([orphan.pid!]).length > 2); // the browser and some children are up
      const deadOwner = spawn('true');
      await once(deadOwner, 'exit');
      const orphanStart = readProcStat(orphan.pid!)!.start;
      const bystanderStart = readProcStat(bystander.pid!)!.start;
      writeFileSync(
        join(pidDir, `${deadOwner.pid}-feedface.json`),
        JSON.stringify({
          owner: { pid: deadOwner.pid, start: 1 },
          token: 'feedface',
          browsers: [
            { pid: orphan.pid, start: orphanStart },
            // Same pid as a live process but another start time: a recycled pid, must survive.
            { pid: bystander.pid, start: bystanderStart + 1 },
          ],
        }),
      );
      const tree = survivors([orphan.pid!]);
      const pool = makePool({ dataDir: dir });
      await pool.start();
      await until(() => survivors(tree).length === 0);
      expect(readProcStat(bystander.pid!)?.state).not.toBe('Z');
      expect(readdirSync(pidDir).filter((n) => n.includes('feedface'))).toEqual([]);
    } finally {
      orphan.kill('SIGKILL');
      bystander.kill('SIGKILL');
    }
  });

  it('shutdown closes every browser and the watchdog', async () => {
    const pool = makePool({ processes: 2 });
    const ctx = await pool.newContext({});
    const roots = pool.pids();
    const watchdog = (pool as unknown as { watchdog: { pid: number } }).watchdog.pid;
    expect(roots).toHaveLength(2);
    await pool.shutdown();
    expect(survivors(roots)).toEqual([]);
    await until(() => readProcStat(watchdog) === null || readProcStat(watchdog)?.state === 'Z');
    await expect(pool.newContext({})).rejects.toMatchObject({ code: 'shutting_down' });
    await ctx.release();
  });
});
