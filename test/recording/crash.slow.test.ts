// A recording process killed with SIGKILL mid-run leaves every finished step readable and the episode incomplete.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, expect, it } from 'vitest';
import { readEpisode } from '../../recording/reader.ts';

let root: string | undefined;
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

it('a killed run leaves readable steps and an incomplete episode', async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-crash-'));
  const dir = join(root, 'ep');
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'crash-writer.ts'), dir], {
    cwd: join(import.meta.dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let announced = 0;
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
    child.stdout.on('data', (d: Buffer) => {
      announced = Math.max(announced, ...[...d.toString().matchAll(/step (\d+)/g)].map((m) => Number(m[1])));
      if (announced >= 4) resolve();
    });
  });
  child.removeAllListeners('exit');
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  const [code, signal] = await exited;
  expect(code).toBeNull();
  expect(signal).toBe('SIGKILL');

  const v = await readEpisode(dir);
  expect(v.meta.status).toBe('incomplete');
  expect(v.meta.termination).toBeUndefined();
  // Every step the writer announced is on disk (lines are fsynced before the announcement); a step being written
  // at the kill may also be there, or be a torn line that is skipped.
  expect(v.steps.length).toBeGreaterThanOrEqual(announced);
  expect(v.steps.map((s) => s.step)).toEqual(Array.from({ length: v.steps.length }, (_, i) => i + 1));
  expect(v.damaged_lines).toBeLessThanOrEqual(1);
  for (const s of v.steps) expect((await stat(join(dir, s.frame!))).size).toBeGreaterThan(0);
});
