// `grove export` and `grove view` argument handling and an end-to-end export through the command.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExport } from '../../cli/commands/export.ts';
import { runView } from '../../cli/commands/view.ts';
import { writeSyntheticRun } from '../../recording/synthetic.ts';

let root: string;
const io = () => {
  const o = { out: '', err: '' };
  return { o, io: { out: (s: string) => void (o.out += s), err: (s: string) => void (o.err += s) } };
};
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-cli-export-'));
  await writeSyntheticRun(join(root, 'runs'), { count: 6, steps: 2, runId: 'r', durable: false });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('grove export', () => {
  it('rejects bad options with exit code 2 and says why', async () => {
    for (const [args, msg] of [
      [['--format', 'csv', '--out', 'x', 'd'], /--format must be one of/],
      [['--format', 'sft', '--out', 'x', 'd'], /--policy-format NAME is required/],
      [['--format', 'webp', 'd'], /--out OUT is required/],
      [['--format', 'webp', '--out', 'x', '--termination', 'bored', 'd'], /unknown reason "bored"/],
      [['--format', 'webp', '--out', 'x'], /exactly one DIR/],
    ] as const) {
      const { o, io: cio } = io();
      expect(await runExport([...args], cio)).toBe(2);
      expect(o.err).toMatch(msg);
    }
  });

  it('exports successful episodes as WebVoyager folders, one per task', async () => {
    const out = join(root, 'wv');
    const { o, io: cio } = io();
    expect(await runExport(['--format', 'webvoyager', '--out', out, '--success-only', join(root, 'runs')], cio)).toBe(0);
    expect(o.err).toMatch(/4 of 6 episodes pass the filters/);
    const dirs = (await readdir(out)).sort();
    // Synthetic episodes 1, 2, 4, 5 succeed (every third fails).
    expect(dirs).toEqual(['taskdocs--4', 'taskmail--1', 'tasknews--2', 'taskshop--5']);
    const msgs = JSON.parse(await readFile(join(out, dirs[0], 'interact_messages.json'), 'utf8'));
    expect(msgs.at(-1).content).toContain('Action: ANSWER');
  });

  it('exports SFT samples in a policy format', async () => {
    const out = join(root, 'sft');
    const { o, io: cio } = io();
    expect(await runExport(['--format', 'sft', '--policy-format', 'qwen3vl', '--out', out, '--termination', 'task_completed', join(root, 'runs')], cio)).toBe(0);
    const lines = (await readFile(join(out, 'samples.jsonl'), 'utf8')).trim().split('\n');
    expect(o.out).toContain(`${lines.length} samples`);
    expect(lines.length).toBeGreaterThan(0);
  });
});

describe('grove view', () => {
  it('rejects a missing directory and a bad port', async () => {
    const a = io();
    expect(await runView([], a.io)).toBe(2);
    expect(a.o.err).toMatch(/DIR is required/);
    const b = io();
    expect(await runView([root, '--port', 'eighty'], b.io)).toBe(2);
    expect(b.o.err).toMatch(/--port/);
    const c = io();
    expect(await runView([join(root, 'nope')], c.io)).toBe(1);
    expect(c.o.err).toMatch(/not a readable directory/);
  });
});
