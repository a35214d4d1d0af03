// One Claw trial: the tool-calling loop (model → tool calls → tool results → …, until a plain answer or the
// turn limit), recorded per step (tool calls, what the apps answered, state changes) and graded.
import type { ClawJudge, Grade } from '../../claw-env/graders/grade.ts';
import { grade } from '../../claw-env/graders/grade.ts';
import type { ClawTask } from '../../claw-env/tasks/format.ts';
import type { StepRecord } from '../../protocol/recording.ts';
import type { TerminationReason } from '../../protocol/task.ts';
import type { ChatMessage } from '../../vlm-client/client.ts';
import type { ClawEnvFactory } from './env.ts';
import { CLAW_SYSTEM_PROMPT, type ToolPolicy } from './policy.ts';

export interface ClawTrial {
  task_id: string;
  trial: number;
  termination: { reason: TerminationReason; detail?: string };
  answer: string;
  turns: number;
  tool_calls: number;
  grade: Grade | null;
  steps: StepRecord[];
  started_at: string;
  duration_ms: number;
}

const MAX_RESULT_CHARS = 20_000;

export async function runClawTrial(task: ClawTask, trial: number, policy: ToolPolicy, envFactory: ClawEnvFactory, opts: { judge?: ClawJudge; systemPrompt?: string } = {}): Promise<ClawTrial> {
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const env = await envFactory(task);
  const steps: StepRecord[] = [];
  const messages: ChatMessage[] = [
    { role: 'system', content: opts.systemPrompt ?? CLAW_SYSTEM_PROMPT },
    { role: 'user', content: task.prompt },
  ];
  const answers: string[] = [];
  let termination: ClawTrial['termination'] = { reason: 'max_steps_exhausted' };
  let calls = 0;
  const deadline = started + task.limits.timeout_seconds * 1000;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), task.limits.timeout_seconds * 1000);
  let turn = 0;
  try {
    for (turn = 1; turn <= task.limits.max_turns; turn++) {
      if (Date.now() > deadline) {
        termination = { reason: 'timeout' };
        break;
      }
      const t0 = performance.now();
      let d;
      try {
        d = await policy.next(messages, env.tools(), { task, turn, trial, signal: abort.signal });
      } catch (err) {
        termination = { reason: abort.signal.aborted ? 'timeout' : 'generation_error', detail: (err as Error).message };
        break;
      }
      const policyMs = performance.now() - t0;
      if (d.text) answers.push(d.text);
      messages.push({ role: 'assistant', content: d.text || null, ...(d.tool_calls.length ? { tool_calls: d.tool_calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}) });
      const t1 = performance.now();
      const recorded: NonNullable<StepRecord['tool_calls']> = [];
      for (const c of d.tool_calls) {
        calls++;
        const r = await env.call(c.name, c.arguments);
        let args: unknown = c.arguments;
        try {
          args = JSON.parse(c.arguments);
        } catch {
          /* keep the text */
        }
        recorded.push({ id: c.id, name: c.name, arguments: args, status: r.status, ...(r.status === 200 ? { result: r.result } : { error: r.error }), changes: r.changes as unknown as Record<string, unknown>[] });
        const content = JSON.stringify(r.status === 200 ? r.result : { error: r.error, status: r.status, ...(r.retry_after ? { retry_after_seconds: r.retry_after } : {}) });
        messages.push({ role: 'tool', tool_call_id: c.id, content: content.length > MAX_RESULT_CHARS ? `${content.slice(0, MAX_RESULT_CHARS)}…(truncated)` : content });
      }
      const envMs = performance.now() - t1;
      steps.push({
        step: turn,
        ts: new Date().toISOString(),
        model_output: d.tool_calls.length ? JSON.stringify({ content: d.text || null, tool_calls: d.tool_calls.map((c) => ({ name: c.name, arguments: c.arguments })) }) : d.text,
        format: 'openai-tools',
        actions: [],
        tool_calls: recorded,
        url: `claw:${task.apps.join(',')}`,
        title: task.title || task.id,
        tabs: [],
        events: [],
        last_action_error: recorded.find((r) => r.status >= 400)?.error ?? null,
        timings: { action: envMs, settle: 0, capture: 0, encode: 0, total: envMs },
        policy: { latency_ms: d.latency_ms ?? policyMs, ...(d.prompt_tokens !== undefined ? { prompt_tokens: d.prompt_tokens } : {}), ...(d.completion_tokens !== undefined ? { completion_tokens: d.completion_tokens } : {}) },
      });
      if (d.tool_calls.length === 0) {
        termination = { reason: 'task_completed' };
        break;
      }
    }
    const answer = answers.join('\n');
    let g: Grade | null = null;
    try {
      g = await grade(task, { audit: await env.audit(), final: await env.state(), answer }, { judge: opts.judge });
    } catch (err) {
      termination = { ...termination, detail: `grading failed: ${(err as Error).message}` };
    }
    return { task_id: task.id, trial, termination, answer, turns: Math.min(turn, task.limits.max_turns), tool_calls: calls, grade: g, steps, started_at: startedAt, duration_ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
    await env.close();
  }
}
