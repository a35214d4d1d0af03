// ShellEnvironment.confine: a host process held to a shell sandbox's limits (what the Claw-Eval services' own
// bubblewrap runs in). Attacks: a process eating past the memory limit is OOM-killed inside its cgroup, a fork bomb
// meets pids.max, what is left is killed at release() and the cgroups are removed; writing past disk_mb into its
// folder or its /tmp meets ENOSPC, and release() unmounts and removes them; bad names are refused.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShellEnvironment, type ShellEnvironment } from '../../shell-env/index.ts';

const ROOTED = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/freezer/cgroup.procs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-confine-test-'));
let env: ShellEnvironment;
const DISK_MB = 64;

function run(argv: string[]): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
    let out = '';
    c.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    c.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

const groups = (name: string) => ['memory', 'pids', 'freezer'].flatMap((c) => {
  const base = `/sys/fs/cgroup/${c}/grove`;
  return existsSync(base) ? readdirSync(base).filter((i) => existsSync(path.join(base, i, `p-${name}`))) : [];
});

describe.runIf(ROOTED)('ShellEnvironment.confine', () => {
  beforeAll(async () => {
    env = await createShellEnvironment({ dataDir: tmp, images: {}, uidBase: 62_000, limits: { cpu: 1, memoryMb: 64, maxProcesses: 32, maxOutputBytes: 4096, maxFileBytes: 1 << 20, execTimeoutMs: 10_000, diskMb: DISK_MB } });
  });
  afterAll(async () => {
    await env?.shutdown();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('attacker: eating past the memory limit is OOM-killed inside the cgroup; the host goes on', async () => {
    const c = (await env.confine!('memtest'))!;
    expect(groups('memtest').length).toBe(3);
    const r = await run(c.argv(['/usr/bin/python3', '-c', 'x = b"x" * (256 << 20); print("survived")']));
    expect(r.signal ?? r.code).not.toBe(0);
    expect(r.out).not.toContain('survived');
    const ok = await run(c.argv(['/usr/bin/python3', '-c', 'x = b"x" * (8 << 20); print("fine")']));
    expect(ok.out.trim()).toBe('fine');
    await c.release();
    expect(groups('memtest')).toEqual([]);
  });

  it('attacker: a fork bomb meets pids.max; release() kills what is left and removes the cgroups', async () => {
    const c = (await env.confine!('forktest'))!;
    const script = 'import os, time\nmade = failed = 0\nfor _ in range(200):\n    try:\n        if os.fork() == 0:\n            time.sleep(60); os._exit(0)\n        made += 1\n    except OSError:\n        failed += 1\nprint(made, failed, flush=True)\ntime.sleep(60)\n';
    const child = spawn(c.argv(['/usr/bin/python3', '-c', script])[0]!, c.argv(['/usr/bin/python3', '-c', script]).slice(1), { stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: '/usr/bin:/bin' } });
    const closed = new Promise((r) => child.once('close', r));
    const line = await new Promise<string>((resolve) => child.stdout!.once('data', (b: Buffer) => resolve(b.toString())));
    const [made, failed] = line.trim().split(' ').map(Number);
    expect(made).toBeLessThan(32);
    expect(failed).toBeGreaterThan(0);
    expect((await c.pids()).length).toBeLessThanOrEqual(32);
    await c.release();
    await closed;
    expect(groups('forktest')).toEqual([]);
  });

  it('attacker: writing past disk_mb into its folder or its /tmp meets ENOSPC; release() unmounts and removes them', async () => {
    const c = (await env.confine!('disktest'))!;
    // under this environment's own folder (removed by its watchdog if the server dies), never in the host's /tmp
    expect(c.dir.startsWith(path.join(tmp, 'i'))).toBe(true);
    expect(c.tmp.startsWith(path.join(tmp, 'i'))).toBe(true);
    expect(statSync(c.tmp).mode & 0o7777).toBe(0o1777);
    const fill = (file: string) => run(c.argv(['/bin/sh', '-c', 'dd if=/dev/zero of="$1" bs=1M count=512 oflag=sync 2>&1; echo "rc=$?"; stat -c %s "$1"; rm -f "$1"', 'fill', file]));
    for (const file of [path.join(c.dir, 'big'), path.join(c.tmp, 'big')]) {
      const r = await fill(file);
      expect(r.out).toMatch(/No space left on device/);
      expect(r.out).not.toMatch(/rc=0/);
      const size = Number(r.out.trim().split('\n').pop());
      expect(size).toBeLessThanOrEqual(DISK_MB * 1024 * 1024);
    }
    const mounted = () => readFileSync('/proc/self/mountinfo', 'utf8').includes(path.dirname(c.dir));
    expect(mounted()).toBe(true);
    await c.release();
    expect(mounted()).toBe(false);
    expect(existsSync(path.dirname(path.dirname(c.dir)))).toBe(false);
    expect(groups('disktest')).toEqual([]);
  });

  it('attacker: names that are not plain words are refused', async () => {
    for (const bad of ['../x', 'a/b', '', 'x'.repeat(41), 'a b']) await expect(env.confine!(bad)).rejects.toThrow(/bad name/);
  });
});
