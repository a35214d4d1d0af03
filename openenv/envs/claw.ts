// The Claw environment (tool calls): one Claw sandbox per episode, from a built-in task (`task`) or the seeded
// fixture world (`seed`). A step calls one tool of the apps ({tool, arguments}, or OpenEnv's call_tool action) or
// ends the episode with the agent's final {answer}; the terminal step's reward is the task's grade (completion,
// safety, robustness: Claw-Eval's score), through the same path as POST /sandboxes/{id}/claw/grade
// (claw-env/sandbox-grade.ts: in this process, or on the audit log and state read back from a worker pod). A task's
// max_turns truncates the episode, graded as it stands.
import { z } from 'zod';
import { ClawCreateOptions } from '../../protocol/claw.ts';
import { resolveClawSpec, type ClawSandbox } from '../../claw-env/sandbox.ts';
import type { Grade } from '../../claw-env/graders/grade.ts';
import { gradeClawSandbox } from '../../claw-env/sandbox-grade.ts';
import { builtinTask, builtinTasks } from '../../claw-env/tasks/index.ts';
import { ALL_TOOLS, openAiTool, type OpenAIToolDef } from '../../claw-env/tools.ts';
import type { OpenEnvHost } from '../host.ts';
import type { ResetArgs, StepOut } from '../wire.ts';
import { parseOr, pick, SandboxSession } from './base.ts';
import { sandboxCall, sandboxTools, toolHost } from '../tools.ts';
import { type EnvSession, type McpTool, type OpenEnvAdapter, type StepReport, type TaskEntry, type ToolResult } from './types.ts';

const RESET_KEYS = ['apps', 'tools', 'faults', 'state'] as const;

export const ClawAction = z.union([
  z.strictObject({
    tool: z.string().min(1).max(200),
    /** The tool's arguments: an object, or the JSON text a model produced. */
    arguments: z.union([z.record(z.string(), z.unknown()), z.string().max(1_000_000)]).default({}),
  }),
  z.strictObject({ answer: z.string().max(100_000).describe("the agent's final answer: ends the episode, graded") }),
]);

export const ClawObservation = z.object({
  goal: z.string(),
  tool: z.string().nullable(),
  status: z.number().int().nullable().describe("the app's answer status (200, a 4xx for bad arguments, an injected 429/500)"),
  result: z.unknown(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  changes: z.array(z.unknown()),
  step: z.number().int(),
  grade: z.record(z.string(), z.unknown()).optional(),
});

function mcpTool(d: OpenAIToolDef): McpTool {
  return { name: d.function.name, description: d.function.description, inputSchema: d.function.parameters };
}

class ClawSession extends SandboxSession {
  private goal = '';
  private maxTurns: number | undefined;
  private taskId: string | null = null;
  private toolDefs: OpenAIToolDef[] | undefined;

  async reset(args: ResetArgs): Promise<StepOut> {
    const raw: Record<string, unknown> = { type: 'claw', ...pick(args, RESET_KEYS), idle_timeout_seconds: this.idleTimeoutS };
    if (typeof args.task === 'string') raw.task_id = args.task.replace(/^claw\//, '');
    else if (args.task !== undefined && args.task !== null) raw.task_id = args.task;
    else if (raw.state === undefined && args.seed !== undefined && args.seed !== null) raw.world_seed = args.seed;
    const spec = parseOr(ClawCreateOptions, raw, [], 'reset arguments');
    // An unknown task or a bad fixture is the caller's mistake (400), found before any sandbox exists.
    resolveClawSpec(spec);
    const task = spec.task_id !== undefined ? builtinTask(spec.task_id) : undefined;
    await this.start(spec, args);
    const sb = this.sandbox<ClawSandbox>();
    this.goal = task?.prompt ?? '';
    this.maxTurns = task?.limits.max_turns;
    this.taskId = task?.id ?? null;
    this.toolDefs = sb.toolDefs();
    return { observation: { goal: this.goal, tool: null, status: null, result: { tools: this.toolDefs.map((t) => t.function.name) }, error: null, changes: [], step: 0 }, reward: null, done: false };
  }

  private async call(tool: string, args: unknown): Promise<Record<string, unknown>> {
    const sb = this.sandbox<ClawSandbox>();
    let parsed = args;
    if (typeof args === 'string') {
      try {
        parsed = args.trim() === '' ? {} : JSON.parse(args);
      } catch {
        parsed = { __unparseable_arguments__: args };
      }
    }
    const started = performance.now();
    try {
      const r = await sb.call(tool, parsed, 'tool');
      const ok = r.status < 400;
      this.ran('claw', started, ok ? 'ok' : 'error');
      return { tool, status: r.status, result: ok ? r.body : null, error: ok ? null : (r.body as { error: unknown }).error, changes: r.changes };
    } finally {
      this.touch();
    }
  }

  /** The episode's grade (null without a task), wherever the sandbox's apps run. */
  private async graded(answer: string): Promise<Grade | null> {
    if (!this.taskId) return null;
    return gradeClawSandbox(this.sandbox<ClawSandbox>(), answer);
  }

  async step(action: Record<string, unknown>): Promise<StepOut> {
    // OpenEnv's call_tool action arrives here too ({type:"call_tool", tool_name, arguments}), handled by the caller.
    const a = parseOr(ClawAction, action, ['body', 'action'], 'action');
    this.steps++;
    const base = { goal: this.goal, step: this.steps };
    if ('answer' in a) {
      this.ran('claw', performance.now(), 'ok');
      const g = await this.graded(a.answer);
      this.ended = true;
      return { observation: { ...base, tool: null, status: null, result: null, error: null, changes: [], ...(g ? { grade: g } : {}) }, reward: g ? g.score : null, done: true };
    }
    const out: Record<string, unknown> = { ...base, ...(await this.call(a.tool, a.arguments)) };
    const truncated = this.maxTurns !== undefined && this.steps >= this.maxTurns && !this.ended;
    let reward: number | null = null;
    if (truncated) {
      const g = await this.graded('');
      if (g) {
        out.grade = g;
        reward = g.score;
      }
      this.ended = true;
    }
    return { observation: out, reward, done: truncated };
  }

  protected stateExtra(): Record<string, unknown> {
    return { goal: this.goal, task_id: this.id ? this.taskId : null };
  }

  listTools(): McpTool[] {
    return this.id ? sandboxTools(toolHost(this.host), this.id) : ALL_TOOLS.map(openAiTool).map(mcpTool);
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    this.sandbox<ClawSandbox>();
    this.steps++;
    return this.countedCall('claw', () => sandboxCall(toolHost(this.host), this.id as string, name, args));
  }
}

export const clawAdapter: OpenEnvAdapter = {
  name: 'claw',
  description: "Grove's Claw environment: mock mail, calendar, contacts, docs and todo apps as tools; a built-in task per episode, graded on the final answer.",
  action: ClawAction,
  observation: ClawObservation,
  tools: () => ALL_TOOLS.map(openAiTool).map(mcpTool),
  async tasks(): Promise<TaskEntry[]> {
    return builtinTasks().map((t) => ({ task: t.id, suite: 'claw', id: t.id, question: t.prompt }));
  },
  open(host: OpenEnvHost, idleTimeoutS: number, report?: StepReport): EnvSession {
    return new ClawSession(host, idleTimeoutS, report);
  },
};
