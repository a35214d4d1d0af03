// The benchmark runner end to end through `grove run`'s executeRun: embedded Grove server, offline sites,
// real Chromium, rule judges; VLM policies talk to the local OpenAI-compatible test server.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeRun, type RunIO } from '../../cli/commands/run-exec.ts';
import type { RunArgs } from '../../cli/commands/run-args.ts';
import { ScriptedPolicy } from '../../runner/scripted-policy.ts';
import { RunSummary } from '../../runner/types.ts';
import { loadOfflineTasks } from '../../sites/tasks.ts';
import { startOpenAIServer } from '../support/openai-server.ts';

const tmpDirs: string[] = [];
afterAll(async () => {
  if (!process.env.GROVE_KEEP_TMP) for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'grove-bench-test-'));
  tmpDirs.push(d);
  return d;
}
const quiet = (): RunIO & { lines: string[] } => {
  const lines: string[] = [];
  return { lines, out: (s) => void lines.push(s), err: (s) => void lines.push(s), progress: { write: (s) => lines.push(s), isTTY: false } };
};
const base = (out: string, p: Partial<RunArgs> = {}): RunArgs => ({
  suite: 'offline', policy: 'scripted', judge: 'rule', judgeAll: true, concurrency: 3, maxSteps: 40, out, resume: false, ...p,
});
const readSummary = async (dir: string) => RunSummary.parse(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')));

describe('benchmark runner on the offline suite', () => {
  let fullRun = '';
  const allIds = loadOfflineTasks('http://sites.grove.test').map((t) => t.id);

  it('runs every offline task with the scripted policy: all succeed, the rule judges agree, everything is recorded', async () => {
    fullRun = await tmp();
    const r = await executeRun(base(fullRun), quiet());
    const s = await readSummary(fullRun);
    const bad = s.episodes.filter((e) => e.success !== true).map((e) => `${e.task_id}: ${e.termination.reason} ${e.termination.detail ?? ''} ${e.verdicts[0]?.reasoning ?? ''}`);
    expect(bad).toEqual([]);
    expect(s).toMatchObject({ total: allIds.length, finished: allIds.length, succeeded: allIds.length, failed: 0, judge_errors: 0, infra_failures: 0, success_rate: 1 });
    expect(s.termination_reasons).toEqual({ task_completed: allIds.length });
    expect(Object.keys(s.by_site).sort()).toEqual(['Forms', 'Recipes', 'Shop']);
    expect(s.by_level).toHaveProperty('easy');
    for (const e of s.episodes) {
      expect(e.verdicts).toEqual([expect.objectContaining({ judge: 'rule:offline', outcome: 'success', score: 1 })]);
      const meta = JSON.parse(await readFile(join(fullRun, e.dir, 'episode.json'), 'utf8'));
      expect(meta).toMatchObject({ status: 'complete', termination: { reason: 'task_completed' }, reward: 1, steps: e.steps });
      expect(meta.verdicts[0].outcome).toBe('success');
    }
    expect(r.summary.episodes.map((e) => e.task_id)).toEqual(allIds);
    const html = await readFile(join(fullRun, 'report.html'), 'utf8');
    expect(html).toContain(`href="episodes/${allIds[0]}/"`);
    expect(html).toContain('<svg');
  }, 900_000);

  it('resume skips finished episodes and reruns only the missing one', async () => {
    expect(fullRun).not.toBe('');
    const victim = allIds[1];
    await rm(join(fullRun, 'episodes', victim), { recursive: true });
    const started: string[] = [];
    const io = quiet();
    await executeRun(base(fullRun, { resume: true }), io, {
      policy: (t) => {
        started.push(t.id);
        return new ScriptedPolicy();
      },
    });
    expect(started).toEqual([victim]);
    const s = await readSummary(fullRun);
    expect(s.finished).toBe(allIds.length);
    expect(s.succeeded).toBe(allIds.length);
    expect(s.episodes.filter((e) => !e.resumed).map((e) => e.task_id)).toEqual([victim]);
  }, 300_000);

  it('VLM policies over the OpenAI wire: answers, garbage, endless scrolling and a broken model server end as they should', async () => {
    const tasks = loadOfflineTasks('http://sites.grove.test');
    const priceTask = tasks.find((t) => t.id === 'Shop--1')!;
    const accepted = (priceTask.extra.ground_truth as { checks: { kind: string; accepted?: string[] }[] }).checks.find((c) => c.kind === 'answer')!.accepted![0];
    const call = (action: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name: 'computer_use', arguments: action })}\n</tool_call>`;
    const model = await startOpenAIServer((req) => {
      const text = JSON.stringify(req.body.messages);
      if (text.includes('Lumina Reader LED Desk Lamp')) return `The price is on the page.\n${call({ action: 'answer', text: `It costs ${accepted}` })}`;
      if (text.includes('Voyo Weekender')) return 'I will now click the button, I promise.';
      if (text.includes('Lemon Garlic Roast Chicken')) return call({ action: 'scroll', pixels: -300 });
      return { status: 500 };
    });
    try {
      const out = await tmp();
      await executeRun(
        base(out, { policy: model.url, model: 'test-model', format: 'qwen3vl', ids: ['Shop--1', 'Shop--2', 'Recipes--0', 'Forms--0'], maxSteps: 4, concurrency: 2, judgeAll: false }),
        quiet(),
      );
      const s = await readSummary(out);
      const by = Object.fromEntries(s.episodes.map((e) => [e.task_id, e]));
      expect(by['Shop--1']).toMatchObject({ termination: { reason: 'task_completed' }, success: true, answer: `It costs ${accepted}` });
      expect(by['Shop--1'].tokens.prompt).toBeGreaterThan(0);
      expect(by['Shop--2'].termination.reason).toBe('consecutive_parse_failures');
      expect(by['Shop--2'].steps).toBe(3);
      expect(by['Recipes--0']).toMatchObject({ termination: { reason: 'max_steps_exhausted' }, steps: 4, success: false });
      expect(by['Forms--0'].termination.reason).toBe('generation_error');
      expect(by['Forms--0'].termination.detail).toMatch(/500/);
      expect(s).toMatchObject({ total: 4, succeeded: 1, failed: 3, judge_errors: 0, infra_failures: 0 });
      expect(s.termination_reasons).toEqual({ task_completed: 1, consecutive_parse_failures: 1, max_steps_exhausted: 1, generation_error: 1 });
      expect(s.success_rate).toBe(0.25);
      expect(s.by_site.Shop).toEqual({ total: 2, succeeded: 1, success_rate: 0.5 });
      // The recorded step carries the raw model output as sent to the step endpoint.
      const steps = (await readFile(join(out, 'episodes', 'Shop--2', 'steps.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(steps).toHaveLength(3);
      expect(steps[0]).toMatchObject({ model_output: 'I will now click the button, I promise.', format: 'qwen3vl', actions: [] });
      expect(steps[0].parse_error).toBeTruthy();
    } finally {
      await model.close();
    }
  }, 300_000);
});
