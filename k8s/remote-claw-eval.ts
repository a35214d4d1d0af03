// A Claw-Eval episode (a claw sandbox with `claw_eval_task`) on a worker pod of a `claw-eval` template: the pod's
// image holds the checkout and its Python environment, and its worker (`grove worker`, GROVE_CLAW_EVAL_ISOLATION=pod)
// runs the task's services without bubblewrap, the pod being their boundary. This is the orchestrator's copy of it,
// the one object the routes (server/routes/claw-eval.ts) and MCP (mcp/sandbox-tools.ts) use, as they use a local
// episode (`clawEval: true`): the tools read once at ready, each call relayed to the worker's /claw-eval/call; the
// agent's text turns answered here by the orchestrator's simulated user on the conversation read back from the
// worker, the turn recorded there; the grade here too, by the task's grader from the orchestrator's checkout on the
// trace the worker hands back when the episode ends (worker-only routes, server/worker-claw-eval.ts). The judge's
// and user model's keys never enter a pod, and a pod never calls the orchestrator. What needs claw-env (the grader,
// the simulated user, the task as the checkout describes it) is the orchestrator's `ClawEvalOnOrchestrator`
// (server/claw-eval-pods.ts), which k8s/ may not import.
import type { GroveClient } from '../client/index.ts';
import { GroveError } from '../protocol/errors.ts';
import type { SandboxDetails } from '../sandbox/types.ts';
import { RemoteSandbox } from './remote-sandbox.ts';

/** A tool in OpenAI function-calling shape, as the worker's /claw-eval/tools lists it. */
export interface ClawEvalToolDef {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** The worker's conversation of an episode (server/worker-claw-eval.ts). */
export interface ClawEvalConversationCopy {
  messages: unknown[];
  user_rounds: number;
  user_done: boolean;
  over: boolean;
}

/** What the orchestrator adds to a pod's episode (its checkout, judge and user model). */
export interface ClawEvalOnOrchestrator {
  /** Refuses (4xx) at creation what cannot run on a pod: unknown or skipped tasks, sandbox tools, a judge or user
   * model this orchestrator lacks. */
  admit(taskId: string): void;
  /** The task as the orchestrator's checkout describes it, with the episode's tools (what MCP lists). */
  task(taskId: string, tools: { name: string; description: string; input_schema: Record<string, unknown> }[]): unknown;
  /** The simulated user's answer to the agent's `text` (null: no user, out of rounds, or done). */
  userTurn(taskId: string, conversation: ClawEvalConversationCopy, text: string, signal: AbortSignal): Promise<string | null>;
  /** The task's grader on the trace the worker handed back (the local episode's grade shape). */
  grade(taskId: string, trace: unknown, signal: AbortSignal): Promise<unknown>;
}

export class RemoteClawEvalSandbox extends RemoteSandbox {
  readonly clawEval = true as const;
  private tools: ClawEvalToolDef[] = [];
  private replying = false;
  private graded?: Promise<unknown>;
  /** Set by the backend when this orchestrator has the checkout (server/claw-eval-pods.ts). */
  hooks?: ClawEvalOnOrchestrator;

  /** The task: from the create body, or (adopted from another replica, whose records hold no spec) as the worker's
   * episode names it. */
  get taskId(): string {
    return (this.spec as { claw_eval_task?: string }).claw_eval_task ?? this.details().claw_eval?.task_id ?? '';
  }

  protected override async started(client: GroveClient, wid: string): Promise<void> {
    const id = encodeURIComponent(wid);
    this.tools = (JSON.parse(await (await client.request('GET', `/sandboxes/${id}/claw-eval/tools`)).text()) as { tools: ClawEvalToolDef[] }).tools;
    const info = JSON.parse(await (await client.request('GET', `/sandboxes/${id}`)).text()) as { claw_eval?: SandboxDetails['claw_eval'] };
    if (info.claw_eval) this.setDetails({ ...this.details(), claw_eval: info.claw_eval });
  }

  private on(): ClawEvalOnOrchestrator {
    if (!this.hooks) throw new GroveError('not_supported_on_backend', `This orchestrator has no Claw-Eval checkout (--claw-eval DIR): it cannot serve episode ${this.id}.`);
    return this.hooks;
  }

  toolDefs(): ClawEvalToolDef[] {
    return this.tools;
  }

  /** The task with the episode's tools (MCP's tools/list). */
  get task(): unknown {
    return this.on().task(
      this.taskId,
      this.tools.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters })),
    );
  }

  /** One tool call through the worker's services, in the dispatch record's shape (the routes' and MCP's). */
  async callTool(_endpoints: unknown, id: string, name: string, args: Record<string, unknown>) {
    const started = performance.now();
    const r = await this.remote(async (c, wid) => JSON.parse(await (await c.request('POST', `/sandboxes/${encodeURIComponent(wid)}/claw-eval/call`, { tool: name, arguments: args })).text()) as { status: number; body: unknown; calls: number });
    this.steps = r.calls;
    return { tool_use_id: id, tool_name: name, endpoint_url: '', request_body: args, response_status: r.status, response_body: r.body, latency_ms: performance.now() - started };
  }

  /** The agent's text turn: the simulated user (on this orchestrator) answers the conversation read back from the
   * worker; both are recorded there at once, so a user model that fails leaves the episode as it was. */
  async reply(text: string): Promise<{ user: string | null; done: boolean; rounds: number }> {
    const on = this.on();
    if (this.graded) throw new GroveError('invalid_request', `The Claw-Eval episode of sandbox ${this.id} was graded: it is over (create a new sandbox for another trial).`);
    if (this.replying) throw new GroveError('invalid_request', `A reply to the simulated user of episode ${this.id} is already running.`);
    this.replying = true;
    try {
      const conv = await this.workerCall<ClawEvalConversationCopy>('GET', 'conversation');
      if (conv.over) throw new GroveError('invalid_request', `The conversation of Claw-Eval episode ${this.id} is over: grade it.`);
      let user: string | null;
      try {
        user = await on.userTurn(this.taskId, conv, text, this.aborted.signal);
      } catch (err) {
        if (this.status === 'closed') throw new GroveError('sandbox_closed');
        if (err instanceof GroveError) throw err;
        throw new GroveError('model_unavailable', `The simulated user of task ${this.taskId} did not answer: ${(err as Error).message.slice(0, 1000)}`);
      }
      return await this.workerCall<{ user: string | null; done: boolean; rounds: number }>('POST', 'turn', { text, user });
    } finally {
      this.replying = false;
    }
  }

  /** Ends the episode on the worker (the trace back, the services stopped) and grades it here, once. */
  grade(answer: string | undefined): Promise<unknown> {
    let on: ClawEvalOnOrchestrator;
    try {
      on = this.on();
    } catch (err) {
      return Promise.reject(err);
    }
    this.graded ??= (async () => {
      const trace = await this.workerCall<unknown>('POST', 'finish', answer === undefined ? {} : { answer });
      return on.grade(this.taskId, trace, this.aborted.signal);
    })();
    this.graded.catch(() => undefined);
    return this.graded;
  }

  private workerCall<T>(method: 'GET' | 'POST', what: string, body?: unknown): Promise<T> {
    return this.remote(async (c, wid) => JSON.parse(await (await c.request(method, `/worker/claw-eval/${encodeURIComponent(wid)}/${what}`, method === 'POST' ? (body ?? {}) : undefined)).text()) as T);
  }
}

/** A claw_eval_task checked at creation, before any pod: what the local server refuses, and what needs a claw-eval
 * template (an image with the checkout) or this orchestrator's checkout. */
export function admitClawEval(spec: Record<string, unknown>, templates: Record<string, { type: string }>, on: ClawEvalOnOrchestrator | undefined): void {
  const taskId = spec.claw_eval_task as string;
  if (['task_id', 'state', 'world_seed', 'apps', 'tools', 'faults'].some((k) => spec[k] !== undefined)) {
    throw new GroveError('invalid_request', 'claw_eval_task takes its services, tools and faults from the checkout: give none of task_id, state, world_seed, apps, tools, faults with it.');
  }
  if (!on) throw new GroveError('invalid_request', 'This server has no Claw-Eval checkout: start it with --claw-eval DIR to create sandboxes with claw_eval_task.');
  if (!Object.values(templates).some((t) => t.type === 'claw-eval')) {
    throw new GroveError(
      'not_supported_on_backend',
      'claw_eval_task needs a `claw-eval` template on the kubernetes backend: pods whose image holds the checkout and its Python environment at this server\'s --claw-eval path (scripts/claw-eval-image.sh; docs/kubernetes.md).',
    );
  }
  on.admit(taskId);
}
