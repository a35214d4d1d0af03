// The embedded server of `grove run` / `grove claw run --browser` leaves no folder behind (a real `grove` process, its
// TMPDIR a folder of this test): its grove-embedded-* data folder goes when the run ends, and when a SIGTERM ends the
// run half-way; the run's own output (--out) stays. The TMPDIR is short enough for Chromium's socket path and deep
// enough that the pool keeps its artifacts in a grove-a-* folder there (browser-env/chromium-launch.ts), which must
// go too.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/datasets.ts';

let dir: string;
let tmp: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grove-et-'));
  tmp = join(dir, 't');
  await mkdir(tmp);
});
afterAll(async () => dir && rm(dir, { recursive: true, force: true }));

/** `grove ARGS` with TMPDIR = `tmp` (tsx keeps its compile cache there too: only grove-* folders are looked at). */
function grove(args: string[]) {
  const child = spawn(process.execPath, [join(REPO, 'bin/grove.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.on('exit', (code, signal) => ok({ code, signal })));
  return { child, exited, out: () => stdout, err: () => stderr };
}

const until = async (what: () => Promise<boolean>) => {
  while (!(await what())) await new Promise((ok) => setTimeout(ok, 20));
};
const list = (p: string) => readdir(p).catch(() => [] as string[]);
const groveFolders = async () => (await list(tmp)).filter((n) => n.startsWith('grove-'));

describe('the embedded server leaves no temp folder', () => {
  it('grove run: the data folder exists during the run and is gone after it; the recordings stay in --out', async () => {
    const out = join(dir, 'done');
    const g = grove(['run', '--suite', 'offline', '--policy', 'scripted', '--limit', '1', '--out', out]);
    let seen: string[] = [];
    await until(async () => (seen = (await groveFolders()).filter((n) => n.startsWith('grove-embedded-'))).length > 0 || g.child.exitCode !== null);
    expect(seen, g.err()).toHaveLength(1);
    expect(await g.exited, g.err()).toEqual({ code: 0, signal: null });
    expect(await groveFolders()).toEqual([]);
    expect(await list(join(out, 'episodes'))).toHaveLength(1);
  });

  it('grove run ended by SIGTERM half-way: the folder is removed before the process dies of the signal', async () => {
    const out = join(dir, 'term');
    const g = grove(['run', '--suite', 'offline', '--policy', 'scripted', '--out', out, '--concurrency', '2']);
    // Mid-run: an episode's sandbox is being made, and the server's data folder holds the browser's files.
    await until(async () => (await list(join(out, 'episodes'))).length >= 1 || g.child.exitCode !== null);
    const data = (await groveFolders()).filter((n) => n.startsWith('grove-embedded-'));
    expect(data, g.err()).toHaveLength(1);
    expect(await list(join(tmp, data[0]))).toContain('browser');
    g.child.kill('SIGTERM');
    expect(await g.exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await groveFolders()).toEqual([]);
    expect((await list(join(out, 'episodes'))).length).toBeGreaterThanOrEqual(1);
  });

  it('grove claw run --browser without --out: neither the data folder nor the trials\' recordings stay', async () => {
    const g = grove(['claw', 'run', '--browser', '--scripted', '--ids', 'gen-docs_create-1', '--trials', '1']);
    expect(await g.exited, g.err()).toEqual({ code: 0, signal: null });
    expect(g.out()).toMatch(/mean score 1 /);
    expect(await groveFolders()).toEqual([]);
  });
});
