// A killed Chromium (or a killed server) leaves no temporary folder anywhere: not its Playwright profile, not its
// singleton socket folder (`org.chromium.Chromium.*`, made in Chromium's TMPDIR, which is the pool's own artifacts
// folder), not the artifacts folder itself. Checked against the pool's folders, the child's private TMPDIR, and the
// real /tmp (by the names that belong to our browsers, before and after).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ChromiumPool, MAX_CHROMIUM_TMPDIR } from '../../browser-env/pool.ts';
import { listProcesses, userDataDirOf } from '../../browser-env/reaper.ts';

const dirs: string[] = [];
const pools: ChromiumPool[] = [];
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
});

/** A data dir, and a private TMPDIR for the server, so everything it (or Playwright) made there can be seen. */
function serverDirs(): { dataDir: string; serverTmp: string } {
  const serverTmp = join(tempDir('grove-tmpd-'), 't');
  mkdirSync(serverTmp);
  return { dataDir: tempDir('grove-tmpd-'), serverTmp };
}

/** A "server": a pool in a child process (`fixture` with `args`, TMPDIR = serverTmp), and its first line, parsed. */
async function startServer<T>(fixture: string, args: string[], serverTmp: string): Promise<{ child: ChildProcess; first: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', `test/browser-env/${fixture}`, ...args], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TMPDIR: serverTmp },
  });
  children.push(child);
  const line = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, first: JSON.parse(line[0]) as T };
}

/** A browser stand-in that never finishes launching: it reads its CDP pipe (fd 3) and exits when the server's end closes. */
function fakeChromium(dir: string): string {
  const fake = join(dir, 'fake-chromium.sh');
  writeFileSync(fake, '#!/bin/sh\nexec cat <&3 >/dev/null\n');
  chmodSync(fake, 0o755);
  return fake;
}

function newPool(dataDir: string): ChromiumPool {
  const pool = new ChromiumPool({ executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, dataDir, headless: true, extraArgs: [] });
  pools.push(pool);
  return pool;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function until(cond: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The temporary folders one live browser made: its profile and the folder its singleton socket lives in. */
function foldersOf(pid: number): { profile: string; socketDir: string } {
  const profile = userDataDirOf(pid)!;
  expect(profile, `profile of ${pid}`).toBeTruthy();
  return { profile, socketDir: dirname(readlinkSync(join(profile, 'SingletonSocket'))) };
}

/** Names in a folder that look like Chromium's or Playwright's temporary folders. */
function chromiumTempNames(dir: string): Set<string> {
  try {
    return new Set(readdirSync(dir).filter((n) => n.startsWith('org.chromium.Chromium.') || n.startsWith('playwright')));
  } catch {
    return new Set();
  }
}

function alive(pid: number): boolean {
  return listProcesses().some((p) => p.pid === pid && p.state !== 'Z');
}

/** What is left in a pool's artifacts root: nothing when the watchdog removed the emptied root itself. */
const leftIn = (root: string): string[] => (existsSync(root) ? readdirSync(root) : []);

describe('temporary folders of a killed Chromium', () => {
  it('a SIGKILLed browser leaves no profile, socket folder or artifacts folder, in the pool or in /tmp', async () => {
    const realTmpBefore = chromiumTempNames('/tmp');
    const osTmpBefore = chromiumTempNames(tmpdir());
    const dataDir = tempDir('grove-tmpd-');
    const pool = newPool(dataDir);
    const ctx = await pool.newContext({});
    await (await ctx.context.newPage()).setContent('<p>x</p>');
    const [pid] = pool.pids();
    const { profile, socketDir } = foldersOf(pid);
    const artifactsDir = dirname(socketDir);
    // The socket folder is made inside the pool's own folder, not in the shared TMPDIR.
    expect(dirname(artifactsDir)).toBe(join(dataDir, 'artifacts'));
    expect(existsSync(socketDir)).toBe(true);

    process.kill(pid, 'SIGKILL');
    await until(() => pool.stats().browser_crashes_total === 1 && pool.pids().length === 1 && pool.pids()[0] !== pid);
    await until(() => !existsSync(artifactsDir) && !existsSync(profile));

    const ours = [basename(profile), basename(socketDir)];
    const newNames = (before: Set<string>, dir: string) => [...chromiumTempNames(dir)].filter((n) => !before.has(n));
    expect(newNames(realTmpBefore, '/tmp').filter((n) => ours.includes(n))).toEqual([]);
    expect(newNames(osTmpBefore, tmpdir()).filter((n) => ours.includes(n))).toEqual([]);
    // What is left in the pool's artifacts root is the replacement's folder only.
    expect(readdirSync(join(dataDir, 'artifacts'))).toHaveLength(1);

    // The replacement works, and a graceful shutdown removes its folders too.
    const next = await pool.newContext({});
    await (await next.context.newPage()).setContent('<p>y</p>');
    const replacement = foldersOf(pool.pids()[0]);
    await pool.shutdown();
    expect(existsSync(replacement.profile)).toBe(false);
    expect(existsSync(replacement.socketDir)).toBe(false);
    expect(leftIn(join(dataDir, 'artifacts'))).toEqual([]);
  });

  it('a data dir too deep for a socket path under it still launches Chromium (with the inherited TMPDIR)', async () => {
    const dataDir = join(tempDir('grove-tmpd-'), 'd'.repeat(MAX_CHROMIUM_TMPDIR));
    const pool = newPool(dataDir);
    const ctx = await pool.newContext({});
    const page = await ctx.context.newPage();
    await page.setContent('<p>deep</p>');
    expect(await page.textContent('p')).toBe('deep');
  });

  it('a SIGKILLed server leaves none of its browsers temporary folders, before and after a restart', async () => {
    const { dataDir, serverTmp } = serverDirs();
    const realTmpBefore = chromiumTempNames('/tmp');
    const { child, first } = await startServer<{ pids: number[]; watchdog: number }>('pool-child.fixture.ts', [dataDir], serverTmp);
    const { pids, watchdog } = first;
    expect(pids).toHaveLength(2);
    const folders = pids.map(foldersOf);
    for (const f of folders) {
      expect(dirname(dirname(f.socketDir))).toBe(join(dataDir, 'artifacts'));
      expect(dirname(f.profile)).toBe(serverTmp);
    }
    const ours = folders.flatMap((f) => [basename(f.profile), basename(f.socketDir)]);

    child.kill('SIGKILL');
    await once(child, 'exit');
    // The watchdog sidecar kills the browsers and removes their folders without waiting for a restart.
    await until(() => !alive(watchdog) && pids.every((p) => !alive(p)));
    for (const f of folders) {
      expect(existsSync(f.profile)).toBe(false);
      expect(existsSync(f.socketDir)).toBe(false);
    }
    expect(leftIn(join(dataDir, 'artifacts'))).toEqual([]);

    // A restarted server on the same data dir starts clean and leaves nothing when it stops.
    const pool = newPool(dataDir);
    await pool.start();
    await pool.shutdown();
    expect(leftIn(join(dataDir, 'artifacts'))).toEqual([]);
    // (tsx keeps its compile cache in TMPDIR: a tool's cache, not a browser's.)
    expect(readdirSync(serverTmp).filter((n) => !n.startsWith('tsx-'))).toEqual([]);
    const newInTmp = [...chromiumTempNames('/tmp')].filter((n) => !realTmpBefore.has(n));
    expect(newInTmp.filter((n) => ours.includes(n))).toEqual([]);
  });

  it('the server SIGKILLed while its browser is launching: the profile Playwright made is removed, no other', async () => {
    const { dataDir, serverTmp } = serverDirs();
    // Made before the launch: another tool's leftover, which is not ours to remove. The clean-up allows a second
    // of clock slack before a launch's start, so the launch begins more than a second later.
    const older = mkdtempSync(join(serverTmp, 'playwright_chromiumdev_profile-'));
    await new Promise((r) => setTimeout(r, 1100));
    const { child, first } = await startServer<{ profile: string; watchdog: number }>('pool-launching.fixture.ts', [dataDir, fakeChromium(dataDir)], serverTmp);
    const { profile, watchdog } = first;
    expect(profile.startsWith(serverTmp)).toBe(true);
    expect(profile).not.toBe(older);
    child.kill('SIGKILL');
    await once(child, 'exit');
    // The watchdog waits until the folder is old enough not to be another launch's, then removes it.
    await until(() => !alive(watchdog));
    expect(existsSync(profile)).toBe(false);
    expect(existsSync(older)).toBe(true);
    expect(leftIn(join(dataDir, 'artifacts'))).toEqual([]);
  });

  it('the server and its watchdog SIGKILLed during a launch: a restart removes the profile', async () => {
    const { dataDir, serverTmp } = serverDirs();
    const { child, first } = await startServer<{ profile: string; watchdog: number }>('pool-launching.fixture.ts', [dataDir, fakeChromium(dataDir)], serverTmp);
    const { profile, watchdog } = first;
    process.kill(watchdog, 'SIGKILL');
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(existsSync(profile)).toBe(true);
    // The clean-up leaves profiles younger than 2 s (another launch's, before its exec): let this one age.
    await new Promise((r) => setTimeout(r, 2100));
    const pool = newPool(dataDir);
    await pool.start();
    expect(existsSync(profile)).toBe(false);
    await pool.shutdown();
  });

  it('the server SIGKILLed while a browser was just killed too: a restart removes what is left', async () => {
    const { dataDir, serverTmp } = serverDirs();
    const { child, first } = await startServer<{ pids: number[]; watchdog: number }>('pool-child.fixture.ts', [dataDir], serverTmp);
    const { pids, watchdog } = first;
    // The watchdog goes first (so nothing cleans up after the server), then a browser, then the server.
    process.kill(watchdog, 'SIGKILL');
    process.kill(pids[0], 'SIGKILL');
    child.kill('SIGKILL');
    await once(child, 'exit');
    const pool = newPool(dataDir);
    await pool.start();
    expect(pids.every((p) => !alive(p))).toBe(true);
    await pool.shutdown();
    expect(leftIn(join(dataDir, 'artifacts'))).toEqual([]);
    expect(readdirSync(serverTmp).filter((n) => !n.startsWith('tsx-'))).toEqual([]);
  });
});
