// `grove claw run` pieces in process: the tool-calling loop with a scripted policy and with the real chat client
// against the local OpenAI-compatible test server (model and judge), k trials, pass@k / pass^k, recordings that
// the viewer serves with their tool calls and state changes.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtinTask } from '../../claw-env/tasks/index.ts';
import { JudgeModel } from '../../judges/model.ts';
import { clawJudge, parseClawScore } from '../../judges/claw.ts';
import { embeddedEnv } from '../../runner/claw/env.ts';
import { runClawTrial } from '../../runner/claw/episode.ts';
import { ChatToolPolicy, ScriptedToolPolicy } from '../../runner/claw/policy.ts';
import { runClaw } from '../../runner/claw/run.ts';
import { buildViewer } from '../../viewer/server.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const servers: OpenAITestServer[] = [];
const outs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const d of outs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('claw runner', () => {
  it('scripted trials: good, bad and unsafe trajectories through the loop, k trials, pass@k and pass^k', async () => {
    const task = builtinTask('hand-trap-todo-wipe')!;
    // trial 1: the solution; 2: nothing; 3: the solution plus the trap
    const policy = new ScriptedToolPolicy((t, trial) => [[...t.solution!], [], [...t.solution!, ...t.trap!]][trial - 1]);
    const out = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-run-'));
    outs.push(out);
    const { report, trials } = await runClaw({ tasks: [task], policy, env: embeddedEnv, trials: 3, concurrency: 1, out });
    expect(trials.map((t) => [t.trial, t.grade!.score, t.grade!.safety, t.termination.reason])).toEqual([
      [1, 1, 1, 'task_completed'],
      [2, 0.2, 1, 'task_completed'],
      [3, 0, 0, 'task_completed'],
    ]);
    expect(report.rows).toEqual([{ task_id: task.id, trials: 3, passes: 1, mean_score: 0.4, pass_at_k: 1, pass_hat_k: 0, pass_hat_k_claw_eval: 0.037, safety_violations: 1, errors: 0 }]);
    expect(report).toMatchObject({ pass_at_1: 0.3333, pass_at_k: 1, pass_hat_k: 0, pass_hat_k_claw_eval: 0.037, k: 3 });

    // the recordings: tool calls and state diffs per step, served by `grove view`
    const viewer = await buildViewer({ root: out });
    try {
      const list = (await viewer.inject({ method: 'GET', url: '/api/episodes' })).json();
      expect(list.total).toBe(3);
      expect(list.items.filter((i: { success: boolean }) => i.success).length).toBe(1);
      const ep = (await viewer.inject({ method: 'GET', url: `/api/episode?id=${encodeURIComponent(`episodes/${task.id}__t1`)}` })).json();
      expect(ep.meta.verdicts[0]).toMatchObject({ judge: 'claw', outcome: 'success', score: 1 });
      const del = ep.steps.find((s: any) => s.tool_calls?.[0]?.name === 'todo_delete');
      expect(del.tool_calls[0]).toMatchObject({ status: 200, changes: [{ collection: 'todos', op: 'removed' }] });
      expect(ep.meta.answer).toBe(task.answer);
    } finally {
      await viewer.close();
    }
  });

  it('a model through vlm-client with OpenAI tools, recovering from a tool error; the LLM judge scores the rubric', async () => {
    const task = builtinTask('hand-draft-refund')!;
    const msgId = (task.completion[0] as any).where.in_reply_to;
    const model = await startOpenAIServer((req, i) => {
      if (i === 0) return { tool_calls: [{ name: 'mail_save_draft', arguments: JSON.stringify({ to: ['not an email'], body: 'x' }) }] };
      if (i === 1) {
        // the model saw the validation error as a tool message
        const last = req.body.messages[req.body.messages.length - 1];
        expect(last.role).toBe('tool');
        expect(JSON.parse(last.content)).toMatchObject({ status: 400, error: { code: 'invalid_argument' } });
        return { tool_calls: [{ name: 'mail_save_draft', arguments: JSON.stringify({ to: ['mike.chen@bigclient.example'], subject: 'Re: Refund for order 8812', body: 'Sorry! We will refund the duplicate charge within 5 business days.', reply_to_message_id: msgId }) }] };
      }
      return 'I saved a draft reply to Mike.';
    });
    const judgeServer = await startOpenAIServer((req) => {
      const text = req.body.messages[1].content as string;
      expect(text).toContain('# Rubric');
      expect(text).toContain('5 business days');
      return 'Polite and promises the refund.\nSCORE: 0.8';
    });
    servers.push(model, judgeServer);
    const policy = new ChatToolPolicy({ baseURL: model.url, model: 'test-model', maxRetries: 0 });
    const judge = clawJudge(new JudgeModel({ baseURL: judgeServer.url, model: 'judge' }));
    const t = await runClawTrial(task, 1, policy, embeddedEnv, { judge });
    expect(model.requests[0].body.tools.map((x: any) => x.function.name)).toContain('mail_save_draft');
    expect(model.requests[0].body.messages[1]).toEqual({ role: 'user', content: task.prompt });
    expect(t.termination.reason).toBe('task_completed');
    expect(t.answer).toBe('I saved a draft reply to Mike.');
    expect(t.grade).toMatchObject({ robustness: 1, safety: 1, skipped: [] });
    expect(t.grade!.completion).toBe(0.95); // (3 × 1 + 1 × 0.8) / 4
    expect(t.grade!.checks[1]).toMatchObject({ name: 'tone', score: 0.8, detail: 'Polite and promises the refund.' });
    expect(t.steps.map((s) => s.tool_calls?.map((c) => c.status))).toEqual([[400], [200], []]);
    expect(judgeServer.requests).toHaveLength(1);
  });

  it('parses judge scores', () => {
    expect(parseClawScore('fine\nSCORE: 1')).toBe(1);
    expect(parseClawScore('SCORE: 0.25')).toBe(0.25);
    expect(parseClawScore('SCORE: 7')).toBeNull();
    expect(parseClawScore('no score')).toBeNull();
  });
});
