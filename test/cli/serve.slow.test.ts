// `grove serve` as a real process: boots on a free port, answers /health, runs a browser sandbox, and on
// SIGTERM closes everything and exits 0 with no Chromium left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GroveClient } from '../../client/index.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'cli-serve-key-123456';

/** All descendants of pid (Linux /proc). */
function descendants(pid: number): number[] {
  const kids = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(d)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) for (const k of kids.get(stack.pop()!) ?? []) (out.push(k), stack.push(k));
  return out;
}

/** Running (not exited, not a zombie awaiting its reaper). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

let proc: ChildProcess | undefined;
const dataDirs: string[] = [];
afterAll(() => {
  if (proc && proc.exitCode === null) proc.kill('SIGKILL');
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true, maxRetries: 3 });
});

describe('grove serve', () => {
  it('boots, serves, and shuts down cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-cli-serve-'));
    dataDirs.push(dataDir);
    proc = spawn(
      process.execPath,
      [path.join(ROOT, 'bin/grove.mjs'), 'serve', '--port', '0', '--api-key', KEY, '--data-dir', dataDir, '--browser-processes', '1'],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GROVE_LOG_LEVEL: 'warn' } },
    );
    const p = proc;
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));
    // The CLI prints its bound URL on stderr once listening.
    const url = await new Promise<string>((resolve, reject) => {
      p.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(stderr);
        if (m) resolve(m[1]);
      });
      void exited.then((code) => reject(new Error(`grove serve exited with ${code}: ${stderr}`)));
    });

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    expect((await fetch(`${url}/sandboxes`)).status).toBe(401);

    const client = new GroveClient({ baseUrl: url, apiKey: KEY });
    const sb = await client.createAndWait({ type: 'browser', start_url: 'about:blank', viewport: { width: 400, height: 300 } }, 60);
    expect(sb.status).toBe('ready');
    // The Chromium binaries themselves (the CI leak check looks for the same path).
    const chromium = descendants(p.pid!).filter((pid) => cmdline(pid).startsWith('/usr/lib/chromium/'));
    expect(chromium.length).toBeGreaterThan(0);

    p.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(chromium.filter(alive)).toEqual([]);
    expect(stderr).not.toMatch(/Error/);
  });

  it('exits 2 with a message naming the flag on bad options', async () => {
    const p = spawn(process.execPath, [path.join(ROOT, 'bin/grove.mjs'), 'serve', '--max-sandboxes', 'many'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('--max-sandboxes: expected a number, got "many"');
  });
});

describe('grove worker (the same startup as serve)', () => {
  const run = (args: string[], env: Record<string, string | undefined>) => {
    const p = spawn(process.execPath, [path.join(ROOT, 'bin/grove.mjs'), 'worker', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GROVE_API_KEY: undefined, ...env } });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => p.once('exit', resolve));
    return { p, exited, stderr: () => stderr };
  };

  it('refuses to run without its token (exit 2, says so)', async () => {
    const w = run(['--port', '0'], {});
    expect(await w.exited).toBe(2);
    expect(w.stderr()).toContain('grove worker: a worker needs its token');
  });

  it('refuses an oom_score_adj out of range or not a number (exit 2)', async () => {
    for (const bad of ['1001', 'lots', '1e3']) {
      const w = run(['--port', '0'], { GROVE_API_KEY: KEY, GROVE_OOM_SCORE_ADJ: bad });
      // Accepted by mistake, it would listen: ended at once (the assertion below then fails).
      w.p.stderr!.on('data', () => /listening on/.test(w.stderr()) && w.p.kill('SIGKILL'));
      expect(await w.exited).toBe(2);
      expect(w.stderr()).toContain('GROVE_OOM_SCORE_ADJ must be an integer from -1000 to 1000');
    }
  });

  it('with its token: listens, and a SIGTERM right after "listening on" is a clean shutdown (exit 0)', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-cli-worker-'));
    dataDirs.push(dataDir);
    // A paired shell's worker (k8s/paired-shell.ts) runs with GROVE_OOM_SCORE_ADJ=1000: the pod's first OOM victim.
    const w = run(['--port', '0', '--data-dir', dataDir, '--browser-processes', '1'], { GROVE_API_KEY: KEY, GROVE_LOG_LEVEL: 'warn', GROVE_OOM_SCORE_ADJ: '1000' });
    try {
      await new Promise<void>((resolve, reject) => {
        w.p.stderr!.on('data', () => /grove worker: listening on http:\/\/\S+/.test(w.stderr()) && resolve());
        void w.exited.then((code) => reject(new Error(`grove worker exited with ${code}: ${w.stderr()}`)));
      });
      expect(readFileSync(`/proc/${w.p.pid}/oom_score_adj`, 'utf8')).toBe('1000\n');
      w.p.kill('SIGTERM');
      expect(await w.exited).toBe(0);
    } finally {
      if (w.p.exitCode === null) w.p.kill('SIGKILL');
    }
  });
});
