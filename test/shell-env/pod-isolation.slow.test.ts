// The pod-isolation executor (shellIsolation "pod": Kubernetes worker pods, no bubblewrap) with real processes:
// commands run with the same limits, a timeout kills the whole tree (daemonised and setsid'd children too), closing
// the sandbox leaves no process of it alive (even one whose reaper was killed), a dying server takes its commands
// along, and the mode is refused on the local backend unless forced.
import { execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../sandbox/config.ts';
import { shellEnvironment } from '../../server/server.ts';
import { createPodShellEnvironment, type ShellSandbox } from '../../shell-env/index.ts';
import { hostProcesses, processesWhen } from '../support/processes.ts';

const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(path.join(os.tmpdir(), p));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const LIMITS = { cpu: 1, memoryMb: 256, maxProcesses: 4096, maxOutputBytes: 4096, maxFileBytes: 1 << 20, execTimeoutMs: 30_000 };

/** Host processes whose whole command line is `args` (not the shells that started them). */
const running = (args: string) => hostProcesses().filter((a) => a === args);
const appeared = (marker: string, n: number) => processesWhen(() => running(marker), (p) => p.length >= n);
const gone = (marker: string) => processesWhen(() => running(marker), (p) => p.length === 0);

/** A sleep duration no other test uses: it marks the processes of one case. */
const mark = () => String(900_000 + randomInt(99_999));

async function sandbox(): Promise<{ sb: ShellSandbox; workspace: string; close(): Promise<void> }> {
  const workspace = tmp('grove-pod-ws-');
  const env = createPodShellEnvironment({ workspace, network: 'deny', limits: LIMITS });
  env.admit?.({ type: 'shell', block_network: true, labels: {} });
  const sb = await env.create(`sb_pod_${randomInt(1e9)}`, { type: 'shell', block_network: true, labels: {} });
  await sb.ready();
  return { sb, workspace, close: () => env.shutdown() };
}

const run = (sb: ShellSandbox, command: string | string[], more: Record<string, unknown> = {}) =>
  sb.exec({ command, merge_stderr: false, login_shell: false, background: false, ...more });

describe('pod isolation: commands', () => {
  test('exec, exit codes, stdin, merged and capped output, cwd under /workspace, files and patches', async () => {
    const { sb, workspace, close } = await sandbox();
    try {
      const r = await run(sb, 'echo out; echo err >&2; pwd; exit 3');
      expect(r).toMatchObject({ exit_code: 3, stdout: `out\n${workspace}\n`, stderr: 'err\n', timed_out: false });
      expect((await run(sb, ['cat'], { stdin: 'from stdin' })).stdout).toBe('from stdin');
      expect((await run(sb, 'echo a; echo b >&2', { merge_stderr: true })).stdout).toBe('a\nb\n');
      const big = await run(sb, 'head -c 100000 /dev/zero | tr "\\0" x', { max_output_bytes: 1000 });
      expect(big.truncated.stdout).toBe(true);
      expect(big.stdout_bytes).toBe(100_000);
      expect(sb.details?.().shell).toMatchObject({ workspace: '/workspace', network: 'blocked', rootfs: 'host' });

      await sb.writeFile('/workspace/src/a.txt', Buffer.from('one\n'));
      expect((await run(sb, 'cat a.txt', { cwd: '/workspace/src' })).stdout).toBe('one\n');
      expect((await sb.readFile('src/a.txt')).data.toString()).toBe('one\n');
      expect((await sb.listFiles('/workspace')).files.map((f) => f.path)).toEqual(['/workspace/src']);
      await expect(sb.readFile('/etc/passwd')).rejects.toMatchObject({ code: 'path_not_allowed' });

      await run(sb, 'git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init');
      const patch = ['--- a/src/a.txt', '+++ b/src/a.txt', '@@ -1 +1 @@', '-one', '+two', ''].join('\n');
      expect((await sb.applyPatch(patch)).success).toBe(true);
      expect((await sb.readFile('src/a.txt')).data.toString()).toBe('two\n');

      const job = await sb.startJob({ command: 'sleep 0.2; echo done', merge_stderr: false, login_shell: false, background: true });
      const finished = await sb.job(job.job_id, 10_000);
      expect(finished.result).toMatchObject({ exit_code: 0, stdout: 'done\n' });
    } finally {
      await close();
    }
  });

  test('a background process that keeps no stream does not hold the exec, and lives until the sandbox closes', async () => {
    const { sb, close } = await sandbox();
    const m = mark();
    try {
      const r = await run(sb, `nohup sleep ${m} >/dev/null 2>&1 & echo started`);
      expect(r).toMatchObject({ exit_code: 0, stdout: 'started\n' });
      expect(await appeared(`sleep ${m}`, 1)).toHaveLength(1);
    } finally {
      await close();
    }
    expect(await gone(`sleep ${m}`)).toEqual([]);
  });

  test('a timeout kills the whole tree: children, a double fork and a setsid daemon', async () => {
    const { sb, close } = await sandbox();
    const [a, b, c, d] = [mark(), mark(), mark(), mark()];
    try {
      const r = await run(
        sb,
        `sleep ${a} & (sleep ${b} &) ; setsid sh -c 'exec sleep ${c}' </dev/null >/dev/null 2>&1 & echo up; sleep ${d}`,
        { timeout_s: 1.5 },
      );
      expect(r).toMatchObject({ exit_code: 124, timed_out: true, signal: 'SIGKILL', stdout: 'up\n' });
      for (const x of [a, b, c, d]) expect(await gone(`sleep ${x}`), `sleep ${x}`).toEqual([]);
    } finally {
      await close();
    }
  });

  test('no process survives closing the sandbox, not even one whose reaper was killed', async () => {
    const { sb, workspace, close } = await sandbox();
    const [a, b, c] = [mark(), mark(), mark()];
    try {
      // A job that keeps running, a daemon, and a daemon started by a command that then kills its own reaper.
      await sb.startJob({ command: `sleep ${a}`, merge_stderr: false, login_shell: false, background: true });
      await run(sb, `setsid sleep ${b} </dev/null >/dev/null 2>&1 &`);
      await run(sb, `setsid sleep ${c} </dev/null >/dev/null 2>&1 & kill -9 $PPID`).catch(() => undefined);
      await sb.writeFile('left.txt', Buffer.from('x'));
      for (const x of [a, b, c]) expect(await appeared(`sleep ${x}`, 1), `sleep ${x}`).toHaveLength(1);
    } finally {
      await close();
    }
    for (const x of [a, b, c]) expect(await gone(`sleep ${x}`), `sleep ${x}`).toEqual([]);
    // The workspace is emptied for whoever comes next (in a pod it is a mount point: kept, empty).
    expect(execFileSync('ls', ['-A', workspace], { encoding: 'utf8' })).toBe('');
  });

  test('a server that dies takes its commands along (the reaper follows its parent)', async () => {
    const m = mark();
    const ws = tmp('grove-pod-crash-');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/shell-env/pod-child.fixture.ts', ws, m], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (b: Buffer) => b.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`fixture exited early (${code})`)));
    });
    try {
      expect(await appeared(`sleep ${m}`, 2)).toHaveLength(2);
    } finally {
      child.kill('SIGKILL');
    }
    expect(await gone(`sleep ${m}`)).toEqual([]);
  });

  test('one sandbox per pod, and create options the pod cannot honour answer not_supported_on_backend', async () => {
    const env = createPodShellEnvironment({ workspace: tmp('grove-pod-ws-'), network: 'deny', limits: LIMITS });
    expect(() => env.admit?.({ type: 'shell', block_network: false, labels: {} })).toThrow(expect.objectContaining({ code: 'not_supported_on_backend' }));
    expect(() => env.admit?.({ type: 'shell', block_network: true, allow: ['example.com'], labels: {} })).toThrow(expect.objectContaining({ code: 'not_supported_on_backend' }));
    const sb = await env.create('sb_one', { type: 'shell', block_network: true, labels: {} });
    expect(() => env.admit?.({ type: 'shell', block_network: true, labels: {} })).toThrow(expect.objectContaining({ code: 'capacity_exhausted' }));
    await sb.close();
    expect(() => env.admit?.({ type: 'shell', block_network: true, labels: {} })).not.toThrow();
    const open = createPodShellEnvironment({ workspace: tmp('grove-pod-ws-'), network: 'internet', limits: LIMITS });
    expect(() => open.admit?.({ type: 'shell', block_network: true, labels: {} })).toThrow(expect.objectContaining({ code: 'not_supported_on_backend' }));
    expect(() => open.admit?.({ type: 'shell', block_network: false, labels: {} })).not.toThrow();
  });
});

describe('pod isolation: never the local default', () => {
  const config = (flags: Record<string, unknown>) => loadConfig({ env: {}, flags: { dataDir: tmp('grove-pod-cfg-'), ...flags } });
  const log = { debug() {}, info() {}, warn() {}, error() {} } as never;

  test('bubblewrap is the default; pod isolation outside a worker is refused unless forced', async () => {
    expect(config({}).shellIsolation).toBe('bwrap');
    await expect(shellEnvironment(config({ shellIsolation: 'pod' }), log)).rejects.toThrow(/worker pods/);
    const forced = await shellEnvironment(config({ shellIsolation: 'pod', unsafeShellIsolationPod: true, shellPodWorkspace: tmp('grove-pod-ws-') }), log);
    expect(forced?.cgroups).toBe(false);
    const worker = await shellEnvironment(config({ shellIsolation: 'pod', shellPodWorkspace: tmp('grove-pod-ws-') }), log, { worker: true });
    expect(worker).toBeDefined();
  });
});
