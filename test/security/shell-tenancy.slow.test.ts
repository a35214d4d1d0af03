// One tenant hurting the host or another tenant (issue 30 items 4, 6, 7), against real Grove servers in processes
// of their own with real bubblewrap: a sandbox that fills its disk gets ENOSPC and the host's disk is untouched; two
// servers on one host (same data folder, same client-chosen Orchard id) never touch each other's sandboxes; a
// server killed with SIGKILL leaves nothing behind once the next one starts (its watchdogs killed too), or once its
// watchdog ran (the server alone killed).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { KEY, startChildServer } from './shell-support.ts';

const CONTROLLERS = ['pids', 'memory', 'cpu', 'freezer'];
const MiB = 1024 * 1024;
const freeBytes = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

describe('disk quota (issue 30 item 4)', () => {
  it('filling /workspace or /tmp past disk_mb is ENOSPC inside, and the host disk does not fill', async () => {
    const srv = await startChildServer();
    try {
      const id = await srv.sandbox({ disk_mb: 128 });
      const info = (await srv.call('GET', `/sandboxes/${id}`)).json;
      expect(info.shell.disk).toEqual({ limit_mb: 128, enforced_by: 'loop' });
      const before = freeBytes(srv.dataDir);
      const r = await srv.exec(
        id,
        'fallocate -l 512M /workspace/big; echo "fallocate=$?"; dd if=/dev/zero of=/tmp/fill bs=1M count=300 2>&1 | tail -1; echo "dd=$?"; ' +
          'dd if=/dev/zero of=/var/tmp/fill bs=1M count=300 2>&1 | tail -1; df -m /workspace | tail -1',
        { merge_stderr: true, timeout_s: 120 },
      );
      const after = freeBytes(srv.dataDir);
      console.log('inside:', r.stdout, `host free before ${Math.round(before / MiB)} MiB, after ${Math.round(after / MiB)} MiB`);
      expect(r.stdout).toMatch(/No space left on device/);
      expect(r.stdout).toMatch(/fallocate=[1-9]/);
      // 512 + 300 + 300 MiB asked for; the host lost at most the cap (and the file system's own bytes).
      expect(before - after).toBeLessThan(200 * MiB);
      // Freed space is usable again; the default applies when the request names none.
      expect((await srv.exec(id, 'rm -f /tmp/fill /var/tmp/fill /workspace/big && echo ok > /workspace/f && cat /workspace/f')).stdout).toBe('ok\n');
      const dflt = await srv.sandbox();
      expect((await srv.call('GET', `/sandboxes/${dflt}`)).json.shell.disk).toEqual({ limit_mb: 8192, enforced_by: 'loop' });
      const bad = await srv.call('POST', '/sandboxes', { type: 'shell', disk_mb: 1 });
      expect(bad.status).toBe(400);
    } finally {
      await srv.kill();
    }
  }, 180_000);
});

describe('two servers on one host (issue 30 item 6)', () => {
  it('the same Orchard id on a second server (same data folder) leaves the first server\'s sandbox and job alone', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-sec-shared-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const a = await startChildServer({ dataDir });
    const b = await startChildServer({ dataDir });
    try {
      const create = (s: typeof a) => s.call('POST', '/orchard/sandboxes', { image: 'python:3.11', sandbox_id: 'same-id', block_network: true });
      expect((await create(a)).status).toBe(200);
      expect((await a.call('GET', '/orchard/sandboxes/same-id/wait?timeout=60')).json.status).toBe('ready');
      await a.exec('same-id', 'echo mine > /workspace/a.txt');
      const job = (await a.call('POST', '/orchard/sandboxes/same-id/exec', { command: 'sleep 8; cat /workspace/a.txt; echo survived' })).json;
      // The second server makes its own sandbox of that id while the first one's job runs.
      expect((await create(b)).status).toBe(200);
      expect((await b.call('GET', '/orchard/sandboxes/same-id/wait?timeout=60')).json.status).toBe('ready');
      expect((await b.exec('same-id', 'ls /workspace; echo theirs')).stdout).toBe('theirs\n');
      const done = (await a.call('GET', `/orchard/jobs/${job.job_id}/wait?timeout=60`)).json;
      console.log('first server\'s job:', JSON.stringify(done));
      expect(done.exit_code).toBe(0);
      expect(done.stdout).toBe('mine\nsurvived\n');
      const uidA = (await a.call('GET', '/sandboxes/same-id')).json.shell.uid;
      const uidB = (await b.call('GET', '/sandboxes/same-id')).json.shell.uid;
      expect(uidA).not.toBe(uidB);
      // Deleting it on the second server ends only that one.
      await b.call('DELETE', '/orchard/sandboxes/same-id');
      expect((await a.exec('same-id', 'cat /workspace/a.txt')).stdout).toBe('mine\n');
    } finally {
      await a.kill();
      await b.kill();
    }
  }, 180_000);
});

// ---- leftovers after SIGKILL (item 7): a full server (Chromium pool included) with its own TMPDIR ----

interface FullServer {
  child: ChildProcess;
  url: string;
}

async function startFullServer(dataDir: string, tmpdir: string): Promise<FullServer> {
  const child = spawn(process.execPath, ['bin/grove.mjs', 'serve', '--port', '0', '--data-dir', dataDir, '--api-key', KEY, '--warm-pool', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TMPDIR: tmpdir },
  });
  // "grove serve: listening on URL" goes to stderr.
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stderr?.on('data', (b: Buffer) => {
      buf = (buf + b.toString()).slice(-4000);
      const m = /listening on (http:\/\/\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited early (${code}): ${buf.slice(-500)}`)));
  });
  return { child, url };
}

/** Graceful stop of a server still running (a failed test's). */
async function stop(s: FullServer): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

async function call(url: string, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(url + p, { method, headers: { 'x-api-key': KEY, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return res.json();
}

/** Everything of one server on the host: its shell instance's cgroups, marker, folder and mounts, and TMPDIR entries. */
function footprint(pid: number, dataDir: string, tmpdir: string) {
  const markers = readdirSync('/run/grove/shell/instances').filter((n) => n.endsWith('.json'));
  const inst = markers.map((n) => JSON.parse(readFileSync(`/run/grove/shell/instances/${n}`, 'utf8'))).find((m) => m.owner.pid === pid);
  const id: string = inst?.id ?? 'none';
  const cgroups = CONTROLLERS.map((c) => `/sys/fs/cgroup/${c}/grove/${id}`).filter((d) => existsSync(d));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4]).filter((m) => m?.includes(id));
  const folder = path.join(dataDir, 'shell', id);
  const temp = chromiumTemp(tmpdir);
  return { id, marker: !!inst, cgroups, mounts, folder: existsSync(folder), temp };
}

/** Chromium's and Playwright's temporary folders anywhere under `dir` (relative paths). */
function chromiumTemp(dir: string): string[] {
  for (let attempt = 0; ; attempt++) {
    try {
      return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => /(^|\/)(org\.chromium\.Chromium\.|playwright_chromiumdev_profile-)[^/]*$/.test(p));
    } catch (e) {
      // A folder removed while it is listed (a cleanup at work): list again.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 20) throw e;
    }
  }
}

/** The server's detached children (the shell and Chromium watchdogs, Chromium itself): its children leading a session. */
function watchdogs(pid: number): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,ppid=,sid=', '-e'], { encoding: 'utf8' });
  return out.split('\n').map((l) => l.trim().split(/\s+/).map(Number)).filter(([p, pp, sid]) => pp === pid && sid === p).map(([p]) => p);
}

async function sandboxes(url: string): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const { sandbox_id } = await call(url, 'POST', '/sandboxes', { type: 'shell', disk_mb: 256 });
    await call(url, 'GET', `/sandboxes/${sandbox_id}/wait?timeout=60`);
    await call(url, 'POST', `/sandboxes/${sandbox_id}/exec`, { command: 'nohup sleep 600 >/dev/null 2>&1 & echo x > /workspace/f' });
  }
}

/**
 * A data folder too deep for Chromium's socket path (browser-env/chromium-launch.ts): Chromium keeps the server's
 * TMPDIR and makes its org.chromium.Chromium.* folders there, where a killed server leaves them unless cleaned.
 */
function deepDataDir(): string {
  const top = mkdtempSync(path.join(os.tmpdir(), 'grove-sec-kill-'));
  onTestFinished(() => rmSync(top, { recursive: true, force: true }));
  return path.join(top, 'a-folder-deep-enough-that-chromium-keeps-the-server-tmpdir');
}

function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'grove-sec-tmp-'));
  onTestFinished(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function until<T>(read: () => T, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let v = read();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    v = read();
  }
  return v;
}

const clean = (f: ReturnType<typeof footprint>, temp0: string[]) =>
  !f.marker && f.cgroups.length === 0 && f.mounts.length === 0 && !f.folder && f.temp.filter((n) => temp0.includes(n)).length === 0;

describe('leftovers after SIGKILL (issue 30 item 7)', () => {
  it('the next server removes everything a SIGKILLed one made (its watchdogs killed with it)', async () => {
    const dataDir = deepDataDir();
    const tmpdir = tempDir();
    const first = await startFullServer(dataDir, tmpdir);
    const pid = first.child.pid as number;
    onTestFinished(() => stop(first));
    await sandboxes(first.url);
    const before = footprint(pid, dataDir, tmpdir);
    console.log('before SIGKILL:', JSON.stringify(before));
    expect(before.cgroups.length).toBe(4);
    expect(before.temp.filter((n) => n.includes('org.chromium.Chromium.')).length).toBeGreaterThan(0);
    expect(before.mounts.length).toBe(2);
    const dogs = watchdogs(pid);
    for (const p of [pid, ...dogs]) process.kill(p, 'SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const stale = footprint(pid, dataDir, tmpdir);
    console.log(`after SIGKILL of the server and its ${dogs.length} detached children (watchdogs, Chromium):`, JSON.stringify(stale));
    expect(stale.cgroups.length).toBe(4);
    const second = await startFullServer(dataDir, tmpdir);
    onTestFinished(() => stop(second));
    try {
      const after = footprint(pid, dataDir, tmpdir);
      console.log('after the next server started:', JSON.stringify(after), 'TMPDIR now:', readdirSync(tmpdir));
      expect(after.marker).toBe(false);
      expect(after.cgroups).toEqual([]);
      expect(after.mounts).toEqual([]);
      expect(after.folder).toBe(false);
      expect(after.temp.filter((n) => before.temp.includes(n))).toEqual([]);
      expect(execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })).not.toContain('sleep 600');
    } finally {
      await stop(second);
    }
    expect(chromiumTemp(tmpdir)).toEqual([]);
  }, 300_000);

  it('the watchdog removes everything once a server is SIGKILLed alone', async () => {
    const dataDir = deepDataDir();
    const tmpdir = tempDir();
    const srv = await startFullServer(dataDir, tmpdir);
    const pid = srv.child.pid as number;
    onTestFinished(() => stop(srv));
    await sandboxes(srv.url);
    const before = footprint(pid, dataDir, tmpdir);
    expect(before.cgroups.length).toBe(4);
    expect(before.temp.filter((n) => n.includes('org.chromium.Chromium.')).length).toBeGreaterThan(0);
    srv.child.kill('SIGKILL');
    const after = await until(() => footprint(pid, dataDir, tmpdir), (f) => clean(f, before.temp), 60_000);
    console.log('before:', JSON.stringify(before), '\nafter the watchdogs ran:', JSON.stringify(after), 'TMPDIR:', readdirSync(tmpdir));
    expect(after).toMatchObject({ marker: false, cgroups: [], mounts: [], folder: false });
    expect(after.temp.filter((n) => before.temp.includes(n))).toEqual([]);
  }, 300_000);
});
