// Ctrl-C during `grove run` (a real process, the offline suite with the scripted policy): the run stops without
// waiting out the embedded server's shutdown timeout (connections of abandoned requests used to hold it for 15 s,
// depending on what was in flight), keeps stdout for the summary (the server logs to stderr), and counts the
// interrupted episodes as `aborted` — neither failures nor environment failures — and removes the embedded server's
// data folder on its way out (the process's TMPDIR, a folder of this test, is empty after).
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/datasets.ts';

let dir: string | undefined;
let tmp: string | undefined;
afterAll(async () => {
  for (const d of [dir, tmp]) if (d) await rm(d, { recursive: true, force: true });
});

describe('grove run and SIGINT', () => {
  it('stops, writes the summary with the interrupted episodes as aborted, exits 130', async () => {
    dir = await mkdtemp(join(tmpdir(), 'grove-run-sigint-'));
    const out = join(dir, 'run');
    // The process's TMPDIR: short, as /tmp is (a deep one moves Chromium's own temporary folders elsewhere).
    tmp = await mkdtemp(join(tmpdir(), 'grove-ri-'));
    const child = spawn(process.execPath, [join(REPO, 'bin/grove.mjs'), 'run', '--suite', 'offline', '--policy', 'scripted', '--out', out, '--concurrency', '2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: tmp },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Interrupt while both workers are starting their first episode (its folder exists: the sandbox is being made).
    const started = async () => (await readdir(join(out, 'episodes')).catch(() => [] as string[])).length >= 2;
    while (!(await started())) await new Promise((ok) => setTimeout(ok, 20));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // (tsx keeps its compile cache in TMPDIR too: only Grove's folders count)
    expect((await readdir(tmp)).filter((n) => n.startsWith('grove-'))).toEqual([]);
    // stdout holds the summary only: the embedded server logs to stderr, and its shutdown did not time out.
    expect(stdout).not.toMatch(/"level":/);
    expect(stdout).toMatch(/stopped early: aborted: interrupted \(SIGINT\)/);
    expect(stderr).not.toMatch(/graceful shutdown is taking too long/);
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
    expect(summary.aborted).toBeGreaterThanOrEqual(1);
    expect(summary.infra_failures).toBe(0);
    expect(summary.termination_reasons.aborted).toBe(summary.aborted);
    expect(summary.failed).toBe(0);
    expect(stdout).toMatch(new RegExp(`env/website failures 0 {2}aborted ${summary.aborted}`));
  });
});
