// `grove swe run` as a user runs it (a real grove process): SWE grading needs shell sandboxes only, so its embedded
// server starts no Chromium. The process tree under the grove process is read from /proc through the whole run; as a
// control, the same reading sees Chromium under a browser run (`grove run --suite offline`). A shell-only server
// refuses browser sandboxes with a stable code.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { REPO } from '../support/datasets.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grove-swecli-'));
});
afterAll(async () => dir && rm(dir, { recursive: true, force: true }));

/** Command names of the processes under `root`, read from /proc (a process gone half-way is skipped). */
async function descendants(root: number): Promise<string[]> {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const m = /^\d+ \((.*)\) \S+ (\d+)/s.exec(await readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''));
    if (m) (parent.set(Number(name), Number(m[2])), comm.set(Number(name), m[1]));
  }
  const out: string[] = [];
  for (const pid of parent.keys()) {
    let p = parent.get(pid);
    while (p !== undefined && p !== root && p > 1) p = parent.get(p);
    if (p === root) out.push(comm.get(pid)!);
  }
  return out;
}

/** Runs `grove ARGS` and records every command name seen under it (sampled every 100 ms) until it exits. */
async function watchedGrove(args: string[]): Promise<{ code: number | null; out: string; err: string; seen: Set<string> }> {
  const child = spawn(process.execPath, [join(REPO, 'bin/grove.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  const seen = new Set<string>();
  let done = false;
  void exited.then(() => (done = true));
  while (!done) {
    for (const c of await descendants(child.pid!)) seen.add(c);
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return { code: await exited, out, err, seen };
}

const chromium = (names: Set<string>) => [...names].filter((n) => /chrom/i.test(n));

describe('grove swe run starts no browser', () => {
  it('grades the fixture in shell sandboxes with no Chromium process under it at any time', async () => {
    const r = await watchedGrove(['swe', 'run', '--fixture', '--gold', '--out', join(dir, 'swe'), '--max-workers', '2']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^2 FULL, 0 PARTIAL, 1 NO, 0 empty, 0 errors of 3/);
    // The sampling saw the run's sandboxes (bubblewrap and the tests in them), and no Chromium.
    expect([...r.seen], r.err).toContain('bwrap');
    expect(chromium(r.seen)).toEqual([]);
  });

  it('control: the same sampling sees Chromium under a browser run', async () => {
    const r = await watchedGrove(['run', '--suite', 'offline', '--policy', 'scripted', '--limit', '1', '--out', join(dir, 'browser')]);
    expect(r.code, r.err).toBe(0);
    expect(chromium(r.seen).length).toBeGreaterThan(0);
  });

  it('a shell-only server refuses a browser sandbox: 400 unsupported_sandbox_type, no stack, no Chromium', async () => {
    const grove = await startEmbeddedGrove({ browser: false });
    try {
      const res = await fetch(`${grove.url}/sandboxes`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': grove.apiKey }, body: JSON.stringify({ type: 'browser' }) });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status).toBe(400);
      expect(body.error.code).toBe('unsupported_sandbox_type');
      expect(body.error.message).toMatch(/browser/);
      expect(JSON.stringify(body)).not.toMatch(/\n\s+at |\.ts:\d+/);
      const shell = await fetch(`${grove.url}/sandboxes`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': grove.apiKey }, body: JSON.stringify({ type: 'shell' }) });
      expect(shell.status).toBeLessThan(300);
      const { sandbox_id: id } = (await shell.json()) as { sandbox_id: string };
      expect(chromium(new Set(await descendants(process.pid)))).toEqual([]);
      await fetch(`${grove.url}/sandboxes/${id}`, { method: 'DELETE', headers: { 'x-api-key': grove.apiKey } });
    } finally {
      await grove.close();
    }
  });
});
