// The episode loop against the real server (in-process), real Chromium and the offline sites.
// Policies here are plain Policy objects (the runner's input), not doubles of anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runEpisode } from '../../runner/episode.ts';
import type { Policy, PolicyDecision } from '../../runner/policy.ts';
import { EpisodeRecorder } from '../../recording/recorder.ts';
import { closedPort, siteTask, startHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const policyOf = (name: string, next: (step: number) => PolicyDecision | Promise<PolicyDecision>): Policy => ({
  name,
  start() {},
  next: async (_obs, ctx) => next(ctx.step),
});
const sandbox = () => ({ network: { allow: [h.sitesHost] } });
const qwenAnswer = (text: string) => `<tool_call>\n{"name": "computer_use", "arguments": {"action": "answer", "text": ${JSON.stringify(text)}}}\n</tool_call>`;

describe('runEpisode', () => {
  it('ends with task_completed on an answer, records every step and deletes the sandbox', async () => {
    const dir = join(h.tmp, 'rec-answer');
    const o = await runEpisode({
      env: h.client,
      task: siteTask(h, 'answer'),
      sandbox: sandbox(),
      maxSteps: 5,
      policy: policyOf('p', (step) =>
        step === 1
          ? { output: 'scroll', actions: [{ action: 'scroll', direction: 'down', amount: 2 }] }
          : // step 2: raw model text parsed by the server (the same path a Python trainer uses)
            { output: qwenAnswer('forty-two'), format: 'qwen3vl', prompt_tokens: 7, completion_tokens: 3 },
      ),
      recorder: () => EpisodeRecorder.create(dir, { episode_id: 'answer' }),
    });
    expect(o.result.termination).toEqual({ reason: 'task_completed', detail: 'answer at step 2' });
    expect(o.result).toMatchObject({ steps: 2, answer: 'forty-two', attempts: 1, parse_failures: 0, tokens: { prompt: 7, completion: 3 } });
    expect(o.result.final_url).toBe(`${h.sites.url}/shop/`);
    expect(o.result.step_timings).toHaveLength(2);
    expect(o.result.step_timings[0].env).toBeGreaterThan(0);
    const meta = JSON.parse(await readFile(join(dir, 'episode.json'), 'utf8'));
    expect(meta).toMatchObject({ status: 'complete', steps: 2, termination: { reason: 'task_completed' }, answer: 'forty-two' });
    const lines = (await readFile(join(dir, 'steps.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.actions.map((a: { action: { action: string } }) => a.action.action))).toEqual([['scroll'], ['answer']]);
    expect(lines[1]).toMatchObject({ format: 'qwen3vl', model_output: qwenAnswer('forty-two'), frame: 'frames/0002.jpg' });
    expect(await h.client.listSandboxes()).toEqual([]);
  });

  it('ends with consecutive_parse_failures after 3 unparseable outputs in a row (a success in between resets the count)', async () => {
    const o = await runEpisode({
      env: h.client,
      task: siteTask(h, 'garbage'),
      sandbox: sandbox(),
      maxSteps: 10,
      policy: policyOf('garbage', (step) =>
        step === 3 ? { output: 'ok', actions: [{ action: 'wait', ms: 0 }] } : { output: `I think I should click somewhere ${step}`, format: 'qwen3vl' },
      ),
    });
    expect(o.result.termination.reason).toBe('consecutive_parse_failures');
    expect(o.result.termination.detail).toMatch(/^3 in a row; last: /);
    expect(o.result.steps).toBe(6);
    expect(o.result.parse_failures).toBe(5);
    expect(o.trajectory[0].parse_error).toBeTruthy();
    expect(o.trajectory[2].parse_error).toBeUndefined();
  });

  it('ends with max_steps_exhausted', async () => {
    const o = await runEpisode({
      env: h.client,
      task: siteTask(h, 'scroll'),
      sandbox: sandbox(),
      maxSteps: 2,
      policy: policyOf('scroll', () => ({ output: 'scroll', actions: [{ action: 'scroll', direction: 'down', amount: 1 }] })),
    });
    expect(o.result.termination).toEqual({ reason: 'max_steps_exhausted', detail: 'no answer within 2 steps' });
    expect(o.result.steps).toBe(2);
  });

  it('ends with generation_error when the policy throws, without restarting', async () => {
    const o = await runEpisode({
      env: h.client,
      task: siteTask(h, 'gen'),
      sandbox: sandbox(),
      maxSteps: 3,
      policy: policyOf('broken', () => {
        throw Object.assign(new Error('model server answered 500'), { status: 500 });
      }),
    });
    expect(o.result.termination.reason).toBe('generation_error');
    expect(o.result.termination.detail).toContain('model server answered 500');
    expect(o.result.attempts).toBe(1);
  });

  it('classifies a dead start URL as website_error after restarts, and leaves no sandbox behind', async () => {
    const port = await closedPort();
    const o = await runEpisode({
      env: h.client,
      task: { ...siteTask(h, 'dead'), start_url: `http://127.0.0.1:${port}/` },
      sandbox: { network: { allow: [`127.0.0.1:${port}`] } },
      maxSteps: 3,
      retry: { maxRestarts: 1, startUrlAttempts: 1, backoffMs: 10 },
      policy: policyOf('unused', () => {
        throw new Error('must not be called');
      }),
    });
    expect(o.result.termination.reason).toBe('website_error');
    expect(o.result.termination.detail).toContain('connection_refused');
    expect(o.result.attempts).toBe(2);
    expect(o.result.attempt_failures).toEqual([{ attempt: 1, reason: 'website_error', detail: o.result.termination.detail }]);
    expect(o.result.steps).toBe(0);
    expect(await h.client.listSandboxes()).toEqual([]);
  });

  it('classifies a blocked start URL as env_error (configuration), not the model', async () => {
    const o = await runEpisode({
      env: h.client,
      task: siteTask(h, 'blocked'),
      sandbox: { network: { allow: [] } }, // loopback is blocked unless allowed
      maxSteps: 3,
      retry: { maxRestarts: 2, backoffMs: 10 },
      policy: policyOf('unused', () => ({ output: 'x', actions: [{ action: 'wait', ms: 0 }] })),
    });
    expect(o.result.termination.reason).toBe('env_error');
    expect(o.result.termination.detail).toContain('network_blocked');
    expect(o.result.attempts).toBe(1); // not retried: it would fail the same way
  });

  it('ends with timeout, and with aborted on the caller signal', async () => {
    const slow = policyOf('slow', () => new Promise<PolicyDecision>((ok) => setTimeout(() => ok({ output: 'x', actions: [{ action: 'wait', ms: 0 }] }), 400)));
    const t = await runEpisode({ env: h.client, task: siteTask(h, 'slow'), sandbox: sandbox(), maxSteps: 100, timeoutMs: 8000, policy: slow });
    expect(t.result.termination.reason).toBe('timeout');
    expect(t.result.steps).toBeGreaterThan(0);
    const ctl = new AbortController();
    const a = await runEpisode({
      env: h.client,
      task: siteTask(h, 'abort'),
      sandbox: sandbox(),
      maxSteps: 100,
      signal: ctl.signal,
      policy: policyOf('abort', (step) => {
        if (step === 2) ctl.abort('operator pressed Ctrl-C');
        return { output: 'x', actions: [{ action: 'wait', ms: 0 }] };
      }),
    });
    expect(a.result.termination).toEqual({ reason: 'aborted', detail: 'operator pressed Ctrl-C' });
    expect(await h.client.listSandboxes()).toEqual([]);
  });
});
