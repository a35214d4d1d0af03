// A Claw sandbox created with `claw_eval_task`: one trial of a task of the server's Claw-Eval checkout as an episode
// any agent can drive — REST (/claw-eval/tools, /call, /reply, /grade) or MCP (/sandboxes/{id}/mcp, so an agent
// harness such as Codex through `grove harness run --claw-eval`). Tasks with the sandbox tools get a shell sandbox
// of the server (the checkout's sandbox server answers Bash, Read, …); a user_agent task's text turns go to /reply,
// which answers the checkout's simulated user on the server's user model, as Claw-Eval's loop does. Its environment is the same ClawEvalSession
// `grove claw run --claw-eval` uses (session.ts: the checkout's services in their no-network sandbox, every call
// recorded as Claw-Eval's dispatcher records it), and /claw/grade is the same grading: the task's own grader.py and
// compute_task_score over that trace, with the agent's answer as its last assistant message. A graded episode is
// over: its services are stopped and further calls are refused.
import type { ClawEvalDetails } from '../../protocol/claw.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { SandboxStatus } from '../../protocol/sandbox.ts';
import type { Sandbox, SandboxDetails } from '../../sandbox/types.ts';
import { Progress } from '../../sandbox/progress.ts';
import { GRADE_BUDGET_MS, gradeClawEvalTrial, type ClawEvalGrade, type ClawEvalMessage, type ClawEvalTrace } from './grade.ts';
import type { ClawEvalTask } from './checkout.ts';
import type { ClawEvalHost } from './host.ts';
import { clawEvalPrompt, clawEvalSandboxTools } from './prompt.ts';
import type { ClawEvalCallResult } from './session.ts';
import { ClawEvalSession } from './session.ts';
import { ClawEvalServiceStartError, serviceStartBudgetMs, type DispatchRecord } from './services.ts';

export type ClawEvalEpisodeGrade =
  | { task_id: string; score: number; task_score: number; passed: boolean; scores: Record<string, number>; judge_calls: number; tool_calls: number }
  | { task_id: string; score: null; errored: true; error: string; tool_calls: number };

/** What the routes (server/routes/claw-eval.ts) and MCP (mcp/sandbox-tools.ts) use of an episode: this class, or the
 * orchestrator's copy of one that runs on a worker pod (k8s/remote-claw-eval.ts, graded on the orchestrator). */
export interface ClawEvalEpisode extends Sandbox {
  readonly type: 'claw';
  readonly clawEval: true;
  readonly task: ClawEvalTask;
  readonly steps: number;
  toolDefs(): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  callTool(endpoints: unknown, id: string, name: string, args: Record<string, unknown>): Promise<DispatchRecord>;
  reply(text: string): Promise<{ user: string | null; done: boolean; rounds: number }>;
  grade(answer: string | undefined): Promise<ClawEvalEpisodeGrade>;
}

/** What the orchestrator reads of a worker's episode to answer its simulated user (worker route .../conversation). */
export interface ClawEvalConversation {
  messages: ClawEvalMessage[];
  user_rounds: number;
  user_done: boolean;
  over: boolean;
}

export class ClawEvalEpisodeSandbox implements ClawEvalEpisode {
  readonly type = 'claw' as const;
  readonly clawEval = true as const;
  status: SandboxStatus = 'creating';
  private session?: ClawEvalSession;
  private prompt = '';
  private graded?: Promise<ClawEvalEpisodeGrade>;
  /** A worker's episode ended for its orchestrator's grade (finishForGrade). */
  private finished?: Promise<ClawEvalTrace>;
  private readonly starting: Promise<void>;
  /** Aborted at close: stops a start, a simulated user's turn or a grade in progress. */
  private readonly life = new AbortController();
  /** The conversation ended on a /reply (the user done or out of rounds): that text was the final answer. */
  private conversationOver = false;
  private replying = false;

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
        if (this.status !== 'closed') this.status = 'error';
        await this.session?.close().catch(() => undefined);
        if (err instanceof GroveError) throw err;
        if (err instanceof ClawEvalServiceStartError) throw new GroveError('service_start_failed', `Claw-Eval task ${taskId}: ${err.message.slice(0, 1500)}`);
        throw new GroveError('internal_error', `Claw-Eval task ${taskId} could not start: ${(err as Error).message}`);
      },
    );
  }

  private async start(): Promise<void> {
    const { task, prepared } = await this.host.task(this.taskId);
    const first = await clawEvalPrompt(task, prepared);
    this.prompt = first.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n');
    // on a worker pod the sandbox tools are its orchestrator's (a shell pod of their own): only their specs here
    const elsewhere = task.sandbox && this.host.o.gradedElsewhere;
    const sandbox = task.sandbox && !elsewhere ? await this.host.sandboxProvider() : undefined;
    const sandboxElsewhere = elsewhere ? { tools: await clawEvalSandboxTools(prepared) } : undefined;
    this.session = new ClawEvalSession(task, 0, { root: prepared.root, python: prepared.python, driver: prepared.driver, errorRate: this.host.o.errorRate, sandbox, sandboxElsewhere, confine: this.host.o.confine, isolation: this.host.o.isolation }, first);
    if (this.status === 'closed') return;
    // the task's own startup budget, cut short by close
    const startup = Progress.after(serviceStartBudgetMs(task), `the services of Claw-Eval task ${task.id}`, { signal: this.life.signal });
    try {
      await this.session.start(startup);
    } finally {
      startup.done();
    }
  }

  ready(): Promise<void> {
    return this.starting;
  }

  private live(): ClawEvalSession {
    if (!this.session || this.status === 'creating') throw new GroveError('sandbox_not_ready');
    if (this.graded || this.finished) throw new GroveError('invalid_request', `The Claw-Eval episode of sandbox ${this.id} was graded: it is over (create a new sandbox for another trial).`);
    return this.session;
  }

  /** The task with the episode's tools (the yaml's, then the sandbox tools it lacks: mcp/claw-eval-tools.ts lists
   * them); sandbox_not_ready until started. */
  get task(): ClawEvalTask {
    if (!this.session) throw new GroveError('sandbox_not_ready');
    return { ...this.session.task, tools: this.session.tools };
  }

  get steps(): number {
    return this.session?.trace.dispatches.length ?? 0;
  }

  /** What the agent is told: the task's id, its first message's text and its tools. */
  details(): SandboxDetails {
    const ua = this.session?.task.user_agent;
    const claw_eval: ClawEvalDetails = { task_id: this.taskId, prompt: this.prompt, tools: (this.session?.tools ?? []).map((t) => t.name), graded: this.graded !== undefined || this.finished !== undefined, ...(ua ? { user_agent: { max_rounds: ua.max_rounds } } : {}) };
    return { claw_eval };
  }

  /** The task yaml's tools in OpenAI function-calling shape. */
  toolDefs(): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[] {
    return (this.session?.tools ?? []).map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: Object.keys(t.input_schema).length ? t.input_schema : { type: 'object', properties: {} } } }));
  }

  /** One call from an agent outside Grove's loop, recorded in the trace (mcp/claw-eval-tools.ts calls this). */
  callTool(endpoints: unknown, id: string, name: string, args: Record<string, unknown>): Promise<DispatchRecord> {
    const s = this.live();
    if (this.conversationOver) throw new GroveError('invalid_request', `The conversation of Claw-Eval episode ${this.id} is over: grade it.`);
    return s.callTool(endpoints, id, name, args);
  }

  /**
   * The agent's turn without tool calls (Claw-Eval's loop): recorded as its assistant message; then the simulated
   * user answers (a user_agent task with rounds left) or the conversation is over and that text is the final answer.
   */
  async reply(text: string): Promise<{ user: string | null; done: boolean; rounds: number }> {
    this.refuseOnWorker();
    const s = this.live();
    if (this.conversationOver) throw new GroveError('invalid_request', `The conversation of Claw-Eval episode ${this.id} is over: grade it.`);
    if (this.replying) throw new GroveError('invalid_request', `A reply to the simulated user of episode ${this.id} is already running.`);
    this.replying = true;
    const turn = Progress.after(s.task.timeout_s * 1000, `the simulated user of ${s.task.id}`, { signal: this.life.signal });
    try {
      const before = s.trace.messages.length;
      s.answer(text);
      let user: string | null;
      try {
        user = await s.userTurn(this.host.o.userModel, turn);
      } catch (err) {
        // the turn did not happen: the agent may reply again
        s.trace.messages.length = before;
        if (this.status === 'closed') throw new GroveError('sandbox_closed');
        throw new GroveError('model_unavailable', `The simulated user of task ${s.task.id} did not answer: ${(err as Error).message.slice(0, 1000)}`);
      }
      if (user === null) this.conversationOver = true;
      return { user, done: user === null, rounds: s.userRounds };
    } finally {
      turn.done();
      this.replying = false;
    }
  }

  /** The episode graded once by the task's own grader; later calls answer the same grade. */
  grade(answer: string | undefined): Promise<ClawEvalEpisodeGrade> {
    try {
      this.refuseOnWorker();
    } catch (err) {
      return Promise.reject(err);
    }
    const s = this.session;
    if (!s || this.status === 'creating') return Promise.reject(new GroveError('sandbox_not_ready'));
    this.graded ??= (async () => {
      // after a /reply that ended the conversation, its text was the final answer
      if (!this.conversationOver) s.answer(answer ?? '');
      try {
        const trace = await s.finish();
        const p = await this.host.prepare();
        const progress = Progress.after(GRADE_BUDGET_MS, `grading ${s.task.id}`, { signal: this.life.signal });
        const g: ClawEvalGrade = await gradeClawEvalTrial(s.task, trace, { root: p.root, python: p.python, driver: p.driver, judge: this.host.o.judge, progress }).finally(() => progress.done());
        return episodeGrade(this.taskId, g, trace.dispatches.length);
      } finally {
        await s.close();
      }
    })();
    return this.graded;
  }

  // --- a worker pod's episode (grove worker --claw-eval): the orchestrator grades and answers the simulated user ---

  /** On a worker, the grade and the simulated user are the orchestrator's (they need its checkout, judge and user
   * model; none of their keys enter a pod): it reads the conversation and the trace through worker-only routes. */
  private refuseOnWorker(): void {
    if (this.host.o.gradedElsewhere) throw new GroveError('invalid_request', `Claw-Eval episode ${this.id} runs on a worker: its orchestrator grades it and answers its simulated user.`);
  }

  /** The conversation so far (worker route GET /worker/claw-eval/{id}/conversation). */
  conversation(): ClawEvalConversation {
    const s = this.live();
    return { messages: s.trace.messages, user_rounds: s.userRounds, user_done: s.userDone, over: this.conversationOver };
  }

  /** One text turn answered on the orchestrator: the agent's text, then the simulated user's message (or null: the
   * user is done or out of rounds, and the text was the final answer). Both recorded at once. */
  recordTurn(text: string, user: string | null): { user: string | null; done: boolean; rounds: number } {
    const s = this.live();
    if (this.conversationOver) throw new GroveError('invalid_request', `The conversation of Claw-Eval episode ${this.id} is over: grade it.`);
    const ua = s.task.user_agent;
    if (user !== null && (!ua || s.userRounds >= ua.max_rounds)) throw new GroveError('invalid_request', `Task ${s.task.id} has no simulated user rounds left.`);
    s.answer(text);
    if (user === null) {
      s.userDone = ua !== undefined;
      this.conversationOver = true;
      return { user: null, done: true, rounds: s.userRounds };
    }
    s.userRounds++;
    const msg = user.startsWith('[user_agent]\n') ? user : `[user_agent]\n${user}`;
    s.trace.messages.push({ role: 'user', content: [{ type: 'text', text: msg }] });
    return { user: msg, done: false, rounds: s.userRounds };
  }

  /** A sandbox tool call the orchestrator ran on the episode's shell pod, recorded in the trace (worker route POST
   * /worker/claw-eval/{id}/dispatch); answers the calls so far. */
  recordSandboxCall(r: ClawEvalCallResult): { calls: number } {
    const s = this.live();
    if (this.conversationOver) throw new GroveError('invalid_request', `The conversation of Claw-Eval episode ${this.id} is over: grade it.`);
    s.recordCall(r);
    return { calls: s.trace.dispatches.length };
  }

  /** Ends the episode for the orchestrator's grade: the answer as the last assistant message, the services' audit
   * read, the env snapshot the orchestrator collected from the shell pod, the services stopped; the trace (worker
   * route POST /worker/claw-eval/{id}/finish). Asked again, the same. */
  finishForGrade(answer: string | undefined, envSnapshot?: Record<string, unknown>): Promise<ClawEvalTrace> {
    const s = this.session;
    if (!s || this.status === 'creating') return Promise.reject(new GroveError('sandbox_not_ready'));
    this.finished ??= (async () => {
      if (!this.conversationOver) s.answer(answer ?? '');
      try {
        return await s.finish(envSnapshot);
      } finally {
        await s.close();
      }
    })();
    return this.finished;
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'closed';
    this.life.abort(new GroveError('sandbox_closed'));
    await this.starting.catch(() => undefined);
    await this.session?.close();
  }
}

/** A grader's result as an episode's grade answers it (here, and on the orchestrator for a pod's episode). */
export function episodeGrade(taskId: string, g: ClawEvalGrade, tool_calls: number): ClawEvalEpisodeGrade {
  if ('error' in g) return { task_id: taskId, score: null, errored: true as const, error: g.error.slice(0, 2000), tool_calls };
  return { task_id: taskId, score: g.task_score, task_score: g.task_score, passed: g.passed, scores: g.scores, judge_calls: g.judge_calls, tool_calls };
}

export function isClawEvalEpisode(sb: Sandbox): sb is ClawEvalEpisode {
  return (sb as Partial<ClawEvalEpisode>).clawEval === true;
}
