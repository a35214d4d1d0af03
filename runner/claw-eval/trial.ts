// One Claw-Eval trial through Grove: the task's services from the checkout (claw-env/claw-eval/services.ts), a
// tool-calling policy over OpenAI-shape tools from the yaml, the trace in Claw-Eval's shape, then the task's own
// grader (grade.ts). Agent-model API failures are retried as Claw-Eval retries a task (3 attempts, 1 s then 2 s);
// a trial that still fails, or whose grader throws, is errored (left out of the scores), never a zero.
import type { ClawEvalTask } from '../../claw-env/claw-eval/checkout.ts';
import { gradeClawEvalTrial, type ClawEvalBlock, type ClawEvalGrade, type ClawEvalJudgeConfig, type ClawEvalMessage, type ClawEvalTrace } from '../../claw-env/claw-eval/grade.ts';
import type { ClawEvalPython } from '../../claw-env/claw-eval/pyenv.ts';
import { chatParts, clawEvalPrompt, type ClawEvalPrompt } from '../../claw-env/claw-eval/prompt.ts';
import { ClawEvalSession, type ClawEvalSandboxProvider } from '../../claw-env/claw-eval/session.ts';
import type { ClawEvalTool } from '../../claw-env/claw-eval/checkout.ts';
import { serviceStartBudgetMs, type ClawEvalConfine } from '../../claw-env/claw-eval/services.ts';
import type { ClawEvalUserModel } from '../../claw-env/claw-eval/user-agent.ts';
import { Progress } from '../../sandbox/progress.ts';
import { APIConnectionError, InternalServerError } from '../../vlm-client/errors.ts';
import { ChatClient, type ChatClientOptions, type ChatMessage, type ToolDef } from '../../vlm-client/client.ts';

export interface ClawEvalDecision {
  text: string;
  tool_calls: { id: string; name: string; arguments: string }[];
}

export interface ClawEvalPolicy {
  readonly name: string;
  next(messages: ChatMessage[], tools: ToolDef[], ctx: { task: ClawEvalTask; turn: number; trial: number; signal?: AbortSignal }): Promise<ClawEvalDecision>;
}

/** Attempts per trial (Claw-Eval's max_retries). */
const RETRIES = 3;

export const CLAW_EVAL_SYSTEM_PROMPT =
  'You are a personal assistant. Use the tools to do what the user asks, and only that. If a tool answers with an ' +
  'error, read it and retry or adjust. When you are done, answer the user in plain text without calling a tool.';

export class ChatClawEvalPolicy implements ClawEvalPolicy {
  readonly name: string;
  private readonly client: ChatClient;
  constructor(opts: ChatClientOptions) {
    this.client = new ChatClient(opts);
    this.name = `chat:${opts.model}`;
  }
  async next(messages: ChatMessage[], tools: ToolDef[], ctx: { signal?: AbortSignal }): Promise<ClawEvalDecision> {
    const r = await this.client.complete({ messages, tools, tool_choice: 'auto', temperature: 0, max_tokens: 2048, signal: ctx.signal });
    return { text: r.text, tool_calls: r.tool_calls };
  }
}

/** The simulated user's model on Grove's model client: every chat call of the checkout's UserAgent is made by a
 * ChatClient on this endpoint (its model name, its retries), as Claw-Eval's user_agent_model would be called. */
export function chatUserModel(opts: ChatClientOptions): ClawEvalUserModel {
  const client = new ChatClient(opts);
  return {
    model: opts.model,
    relay: async (req) => (await client.complete({ messages: req.messages as ChatMessage[], temperature: req.temperature, max_tokens: req.max_tokens })).text,
  };
}

/** A fixed trajectory per task and trial: calls one per turn, then the answer (tests, agreement, the bench). */
export class ScriptedClawEvalPolicy implements ClawEvalPolicy {
  readonly name = 'scripted';
  constructor(private readonly script: (task: ClawEvalTask, trial: number) => { calls: { name: string; args: Record<string, unknown> }[]; answer: string }) {}
  async next(_m: ChatMessage[], _t: ToolDef[], ctx: { task: ClawEvalTask; turn: number; trial: number }): Promise<ClawEvalDecision> {
    const s = this.script(ctx.task, ctx.trial);
    const c = s.calls[ctx.turn - 1];
    if (!c) return { text: s.answer, tool_calls: [] };
    return { text: '', tool_calls: [{ id: `call_${ctx.turn}`, name: c.name, arguments: JSON.stringify(c.args) }] };
  }
}

export interface ClawEvalTrialOptions {
  root: string;
  python: ClawEvalPython;
  driver: string;
  policy: ClawEvalPolicy;
  judge?: ClawEvalJudgeConfig;
  /** The simulated user's model, for tasks with user_agent (its calls through Grove's model client). */
  userModel?: ClawEvalUserModel;
  /** The services' startup deadline (default: serviceStartBudgetMs, the task's own time budget). */
  startBudgetMs?: number;
  errorRate?: number;
  signal?: AbortSignal;
  /** For tasks with `sandbox`: a fresh Grove shell sandbox per trial (the shell-env API), the Python inside it that
   * runs the checkout's sandbox server, and the checkout's sandbox tool specs. */
  sandbox?: ClawEvalSandboxProvider;
  /** The services under a shell environment's limits (cgroups, a disk for their writable state): the same confine
   * the server hands its episodes (server/claw-eval.ts clawEvalConfine). */
  confine?: ClawEvalConfine;
  /** The first user message per task id, as the checkout's loop builds it (attachments, media events). */
  prompts?: Map<string, ClawEvalPrompt>;
}

export interface ClawEvalTrialResult {
  task_id: string;
  trial: number;
  turns: number;
  tool_calls: number;
  /** Messages the simulated user sent (user_agent tasks). */
  user_rounds?: number;
  trace?: ClawEvalTrace;
  grade?: Extract<ClawEvalGrade, { scores: unknown }>;
  error?: string;
  attempts: number;
}

export function toolDefs(task: ClawEvalTask, sandboxTools: ClawEvalTool[] = []): ToolDef[] {
  // Claw-Eval's --sandbox loop: the task's tools, then the sandbox tools the yaml does not define itself
  const own = new Set(task.tools.map((t) => t.name));
  return [...task.tools, ...sandboxTools.filter((t) => !own.has(t.name))].map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: Object.keys(t.input_schema).length ? t.input_schema : { type: 'object', properties: {} } } }));
}

function parseArgs(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The episode: services up, the policy's turns through the session's tools, audit read, services down. */
export async function runEpisode(task: ClawEvalTask, trial: number, o: ClawEvalTrialOptions): Promise<{ trace: ClawEvalTrace; turns: number; userRounds: number }> {
  if (task.sandbox && !o.sandbox) throw new Error('the task runs with the sandbox tools and no shell sandbox is configured');
  let first = o.prompts?.get(task.id);
  if (!first) {
    first = await clawEvalPrompt(task, o);
    o.prompts?.set(task.id, first);
  }
  const session = new ClawEvalSession(task, trial, { root: o.root, python: o.python, driver: o.driver, errorRate: o.errorRate, sandbox: o.sandbox, confine: o.confine }, first);
  const tools = toolDefs(task, task.sandbox ? o.sandbox!.tools : []);
  const firstParts = chatParts(first.content);
  const chat: ChatMessage[] = [
    { role: 'system', content: CLAW_EVAL_SYSTEM_PROMPT },
    { role: 'user', content: firstParts.length === 1 && firstParts[0]!.type === 'text' ? firstParts[0]!.text : firstParts },
  ];
  const trace = session.trace;
  let turns = 0;
  try {
    const startup = Progress.after(o.startBudgetMs ?? serviceStartBudgetMs(task), `the services of ${task.id}`, { signal: o.signal });
    try {
      await session.start(startup);
    } finally {
      startup.done();
    }
    while (turns < task.max_turns) {
      turns++;
      const d = await o.policy.next(chat, tools, { task, turn: turns, trial, signal: o.signal });
      const calls = d.tool_calls.map((c) => ({ ...c, input: parseArgs(c.arguments) }));
      const assistant: ClawEvalMessage = { role: 'assistant', content: [...(d.text ? [{ type: 'text' as const, text: d.text }] : []), ...calls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.input }))] };
      trace.messages.push(assistant);
      chat.push({ role: 'assistant', content: d.text || null, ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}) });
      if (calls.length === 0) {
        // multi-turn: the simulated user answers until it is done or its rounds are used up (Claw-Eval's loop)
        // its turn has the task's own time budget (environment.timeout_seconds)
        const turn = Progress.after(task.timeout_s * 1000, `the simulated user of ${task.id}`, { signal: o.signal });
        const text = await session.userTurn(o.userModel, turn).finally(() => turn.done());
        if (text === null) break;
        chat.push({ role: 'user', content: text });
        continue;
      }
      const results: ClawEvalMessage = { role: 'user', content: [] };
      const images: ClawEvalBlock[] = [];
      for (const c of calls) {
        const r = await session.call(c.id, c.name, c.input);
        results.content.push({ type: 'tool_result', tool_use_id: c.id, content: [{ type: 'text', text: r.text }], is_error: r.is_error });
        chat.push({ role: 'tool', tool_call_id: c.id, content: r.text });
        for (const img of r.images) images.push({ type: 'image', data: img.data, mime_type: img.mime_type });
      }
      trace.messages.push(results);
      if (images.length) {
        // Claw-Eval's second message of a turn: the frames of media answers, after the tool results
        const media: ClawEvalMessage = { role: 'user', content: [{ type: 'text', text: `[Visual content from tool results: ${images.length} image(s)]` }, ...images] };
        trace.messages.push(media);
        chat.push({ role: 'user', content: chatParts(media.content) });
      }
    }
    await session.finish();
  } finally {
    await session.close();
  }
  return { trace, turns, userRounds: session.userRounds };
}

/** Failures Claw-Eval retries a task on (APIConnectionError, APITimeoutError, InternalServerError, ConnectionError):
 * the agent model's API; a service that did not start, or anything else, errors the trial at once. */
function retryable(err: unknown): boolean {
  return err instanceof APIConnectionError || err instanceof InternalServerError;
}

export async function runClawEvalTrial(task: ClawEvalTask, trial: number, o: ClawEvalTrialOptions): Promise<ClawEvalTrialResult> {
  let lastErr = '';
  for (let attempt = 1; attempt <= RETRIES; attempt++) {
    let ep: { trace: ClawEvalTrace; turns: number; userRounds: number };
    try {
      ep = await runEpisode(task, trial, o);
    } catch (err) {
      lastErr = (err as Error).message;
      if (!retryable(err) || o.signal?.aborted || attempt === RETRIES) return { task_id: task.id, trial, turns: 0, tool_calls: 0, error: lastErr, attempts: attempt };
      await new Promise((r) => setTimeout(r, 1000 * 2 ** (attempt - 1)));
      continue;
    }
    const g = await gradeClawEvalTrial(task, ep.trace, { root: o.root, python: o.python, driver: o.driver, judge: o.judge });
    const base = { task_id: task.id, trial, turns: ep.turns, tool_calls: ep.trace.dispatches.length, user_rounds: ep.userRounds, trace: ep.trace, attempts: attempt };
    if ('error' in g) {
      // a judge API failure inside the grader is retried with the task, as Claw-Eval's try block covers grading
      if (g.retryable && attempt < RETRIES && !o.signal?.aborted) {
        lastErr = `grader: ${g.error}`;
        await new Promise((r) => setTimeout(r, 1000 * 2 ** (attempt - 1)));
        continue;
      }
      return { ...base, error: `grader: ${g.error}` };
    }
    return { ...base, grade: g };
  }
  return { task_id: task.id, trial, turns: 0, tool_calls: 0, error: lastErr, attempts: RETRIES };
}
