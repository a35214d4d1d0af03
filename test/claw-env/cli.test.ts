import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClawCommand } from '../../cli/commands/claw.ts';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) }, out, err };
}

describe('grove claw', () => {
  it('tasks lists the built-in set (200+ generated, 20+ hand-written)', async () => {
    const c = io();
    expect(await runClawCommand(['tasks'], c.io)).toBe(0);
    const rows = c.out.join('').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.filter((r) => r.source === 'generated').length).toBeGreaterThanOrEqual(200);
    expect(rows.filter((r) => r.source === 'handwritten').length).toBeGreaterThanOrEqual(20);
  });

  it('run --scripted prints the report with pass@k and pass^k', async () => {
    const c = io();
    const code = await runClawCommand(['run', '--scripted', '--ids', 'hand-sched-berlin-overlap,gen-todo_create-1', '--trials', '2'], c.io);
    expect(code).toBe(0);
    const out = c.out.join('');
    expect(out).toContain('pass@1 1 · pass@2 1 · pass^2 τ-bench unbiased C(c,k)/C(n,k) 1 · pass^2 Claw-Eval (c/n)^k 1 (pass = score ≥ 0.75)');
    expect(out).toContain('| hand-sched-berlin-overlap | 2 | 2 | 1 | 1 | 1 | 1 | 0 |');
  });

  it('a task.yaml with a service Grove lacks fails at load with unsupported_service', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-yaml-'));
    try {
      mkdirSync(path.join(dir, 'tasks', 'T1'), { recursive: true });
      writeFileSync(path.join(dir, 'tasks', 'T1', 'task.yaml'), 'task_id: T1\nprompt:\n  text: submit my expenses\nservices:\n  - name: finance\n    port: 9104\n');
      const c = io();
      expect(await runClawCommand(['run', '--scripted', '--yaml', path.join(dir, 'tasks')], c.io)).toBe(2);
      expect(c.err.join('')).toContain('task.yaml: not loaded: unsupported_service:finance:');
      expect(await runClawCommand(['run', '--trials', '2'], io().io)).toBe(2);
      expect(await runClawCommand(['run', '--scripted', '--faults', '429=2'], io().io)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('run: a task with llm_judge components and no judge is an error at start, not renormalised', async () => {
    const c = io();
    expect(await runClawCommand(['run', '--scripted', '--ids', 'hand-judge-thanks-note,gen-todo_create-1'], c.io)).toBe(2);
    expect(c.err.join('')).toContain('1 selected task(s) have llm_judge components (hand-judge-thanks-note)');
    expect(c.out.join('')).toBe('');
  });
});
