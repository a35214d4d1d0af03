// A Claw sandbox created with `claw_eval_task`: one trial of a task of the server's Claw-Eval checkout as an episode
// any agent can drive — REST (/claw/tools, /claw/call, /claw/grade) or MCP (/sandboxes/{id}/mcp, so an agent harness
// such as Codex through `grove harness run --claw-eval`). Its environment is the same ClawEvalSession
// `grove claw run --claw-eval` uses (session.ts: the checkout's services in their no-network sandbox, every call
// recorded as Claw-Eval's dispatcher records it), and /claw/grade is the same grading: the task's own grader.py and
// compute_task_score over that trace, with the agent's answer as its last assistant message. A graded episode is
// over: its services are stopped and further calls are refused.
import type { ClawEvalDetails } from '../../protocol/claw.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { SandboxStatus } from '../../protocol/sandbox.ts';
import type { Sandbox, SandboxDetails } from '../../sandbox/types.ts';
import { gradeClawEvalTrial, type ClawEvalGrade } from './grade.ts';
import type { ClawEvalTask } from './checkout.ts';
import type { ClawEvalHost } from './host.ts';
import { clawEvalPrompt } from './prompt.ts';
import { ClawEvalSession } from './session.ts';
import type { DispatchRecord } from './services.ts';

export type ClawEvalEpisodeGrade =
  | { task_id: string; score: number; task_score: number; passed: boolean; scores: Record<string, number>; judge_calls: number; tool_calls: number }
  | { task_id: string; score: null; errored: true; error: string; tool_calls: number };

export class ClawEvalEpisodeSandbox implements Sandbox {
  readonly type = 'claw' as const;
  readonly clawEval = true as const;
  status: SandboxStatus = 'creating';
  private session?: ClawEvalSession;
  private prompt = '';
  private graded?: Promise<ClawEvalEpisodeGrade>;
  private readonly starting: Promise<void>;

  constructor(
    readonly id: string,
    readonly taskId: string,
    private readonly host: ClawEvalHost,
  ) {
    this.starting = this.start().then(
      () => {
        if (this.status === 'creating') this.status = 'ready';
      },
      async (err: unknown) => {
        this.status = 'error';
        await this.session?.close().catch(() => undefined);
        if (err instanceof GroveError) throw err;
        throw new GroveError('internal_error', `Claw-Eval task ${taskId} could not start: ${(err as Error).message}`);
      },
    );
  }

  private async start(): Promise<void> {
    const { task, prepared } = await this.host.task(this.taskId);
    const first = await clawEvalPrompt(task, prepared);
    this.prompt = first.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n');
    this.session = new ClawEvalSession(task, 0, { root: prepared.root, python: prepared.python, driver: prepared.driver, errorRate: this.host.o.errorRate }, first);
    if (this.status === 'closed') return;
    await this.session.start();
  }

  ready(): Promise<void> {
    return this.starting;
  }

  private live(): ClawEvalSession {
    if (!this.session || this.status === 'creating') throw new GroveError('sandbox_not_ready');
    if (this.graded) throw new GroveError('invalid_request', `The Claw-Eval episode of sandbox ${this.id} was graded: it is over (create a new sandbox for another trial).`);
    return this.session;
  }

  /** The task (its yaml's tools: mcp/claw-eval-tools.ts lists them); sandbox_not_ready until started. */
  get task(): ClawEvalTask {
    if (!this.session) throw new GroveError('sandbox_not_ready');
    return this.session.task;
  }

  get steps(): number {
    return this.session?.trace.dispatches.length ?? 0;
  }

  /** What the agent is told: the task's id, its first message's text and its tools. */
  details(): SandboxDetails {
    const claw_eval: ClawEvalDetails = { task_id: this.taskId, prompt: this.prompt, tools: (this.session?.tools ?? []).map((t) => t.name), graded: this.graded !== undefined };
    return { claw_eval };
  }

  /** The task yaml's tools in OpenAI function-calling shape. */
  toolDefs(): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[] {
    return (this.session?.tools ?? []).map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: Object.keys(t.input_schema).length ? t.input_schema : { type: 'object', properties: {} } } }));
  }

  /** One call from an agent outside Grove's loop, recorded in the trace (mcp/claw-eval-tools.ts calls this). */
  callTool(endpoints: unknown, id: string, name: string, args: Record<string, unknown>): Promise<DispatchRecord> {
    return this.live().callTool(endpoints, id, name, args);
  }

  /** The episode graded once by the task's own grader; later calls answer the same grade. */
  grade(answer: string | undefined): Promise<ClawEvalEpisodeGrade> {
    const s = this.session;
    if (!s || this.status === 'creating') return Promise.reject(new GroveError('sandbox_not_ready'));
    this.graded ??= (async () => {
      s.answer(answer ?? '');
      try {
        const trace = await s.finish();
        const p = await this.host.prepare();
        const g: ClawEvalGrade = await gradeClawEvalTrial(s.task, trace, { root: p.root, python: p.python, driver: p.driver, judge: this.host.o.judge });
        const tool_calls = trace.dispatches.length;
        if ('error' in g) return { task_id: this.taskId, score: null, errored: true as const, error: g.error.slice(0, 2000), tool_calls };
        return { task_id: this.taskId, score: g.task_score, task_score: g.task_score, passed: g.passed, scores: g.scores, judge_calls: g.judge_calls, tool_calls };
      } finally {
        await s.close();
      }
    })();
    return this.graded;
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'closed';
    await this.starting.catch(() => undefined);
    await this.session?.close();
  }
}

export function isClawEvalEpisode(sb: Sandbox): sb is ClawEvalEpisodeSandbox {
  return (sb as Partial<ClawEvalEpisodeSandbox>).clawEval === true;
}
