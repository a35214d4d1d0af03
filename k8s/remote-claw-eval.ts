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
// A task with the sandbox tools (Bash, Read, …) gets a shell pod of its own (k8s/claw-eval-tools.ts), opened before
// the episode counts as ready: those calls run there from here, through the checkout's sandbox server functions, and
// each is recorded in the worker's trace (POST /worker/claw-eval/{id}/dispatch); at grade time the env snapshot is
// collected there and handed to the worker with the answer. The agent's shell never runs in the pod holding the
// services and the trace.
import type { GroveClient } from '../client/index.ts';
import { GroveError } from '../protocol/errors.ts';
import type { SandboxDetails } from '../sandbox/types.ts';
import type { PlacementDriver } from './remote-placement.ts';
import { RemoteSandbox, type RemoteSandboxExtras } from './remote-sandbox.ts';
import type { ToolsShell } from './claw-eval-tools.ts';
import type { CreateSandboxBody } from '../protocol/sandbox.ts';
import type { ClawEvalSandboxCall } from '../protocol/claw.ts';

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

/** The checkout's sandbox server over an episode's tools shell (claw-env's ClawEvalSandbox). */
export interface ClawEvalPodSandbox {
  call(name: string, args: Record<string, unknown>): Promise<ClawEvalSandboxCall>;
  /** The task's sandbox_grader_files put in, then its env snapshot (after the loop). */
  snapshot(): Promise<Record<string, unknown>>;
}

/** What the orchestrator adds to a pod's episode (its checkout, judge and user model). */
export interface ClawEvalOnOrchestrator {
  /** Refuses (4xx) at creation what cannot run on a pod: unknown or skipped tasks, a judge or user model this
   * orchestrator lacks; says whether the task runs with the sandbox tools. */
  admit(taskId: string): { sandbox: boolean };
  /** The names of the sandbox tools the task runs in a shell (none: empty). */
  sandboxTools(taskId: string): Promise<string[]>;
  /** The checkout's sandbox server in the episode's tools shell: installed with the task's sandbox_files (`fresh`),
   * or as another replica installed it. */
  openSandbox(taskId: string, shell: ToolsShell['shell'], python: string, fresh: boolean): Promise<ClawEvalPodSandbox>;
  /** The task as the orchestrator's checkout describes it, with the episode's tools (what MCP lists). */
  task(taskId: string, tools: { name: string; description: string; input_schema: Record<string, unknown> }[]): unknown;
  /** The simulated user's answer to the agent's `text` (null: no user, out of rounds, or done). */
  userTurn(taskId: string, conversation: ClawEvalConversationCopy, text: string, signal: AbortSignal): Promise<string | null>;
  /** The task's grader on the trace the worker handed back (the local episode's grade shape). */
  grade(taskId: string, trace: unknown, signal: AbortSignal): Promise<unknown>;
}

/** Where an episode's tools shell comes from (KubernetesBackend.clawEvalTools): a new one, or another replica's. */
export type ClawEvalToolsOpener = (episode: RemoteSandbox, create: boolean) => Promise<ToolsShell>;

export class RemoteClawEvalSandbox extends RemoteSandbox {
  readonly clawEval = true as const;
  private tools: ClawEvalToolDef[] = [];
  private replying = false;
  private graded?: Promise<unknown>;
  /** The sandbox tools' names (empty: the task has none) and their shell, once known. */
  private sandboxNames = new Set<string>();
  private toolsShell?: ToolsShell;
  private sandbox?: Promise<ClawEvalPodSandbox>;
  private readonly adopted: boolean;

  /** `hooks`: this orchestrator's checkout (server/claw-eval-pods.ts), absent without one; `openTools`: the backend's
   * tools shells. The base constructor starts the sandbox: started() reads these only after its first await. */
  constructor(
    id: string,
    spec: CreateSandboxBody,
    template: string,
    driver: PlacementDriver,
    extras: RemoteSandboxExtras,
    private readonly hooks: ClawEvalOnOrchestrator | undefined,
    private readonly openTools: ClawEvalToolsOpener,
  ) {
    super(id, spec, template, driver, extras);
    this.adopted = extras.attach !== undefined;
  }

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
    if (!this.hooks) return;
    this.sandboxNames = new Set(await this.hooks.sandboxTools(this.taskId));
    // The creating replica opens the tools shell before the episode is ready (a failure fails the create, and the
    // close that follows deletes both pods); a replica serving it later attaches on the first sandbox-tool call.
    if (this.sandboxNames.size && !this.adopted) await this.toolsSandbox();
  }

  /** The checkout's sandbox server in the tools shell (once). */
  private toolsSandbox(): Promise<ClawEvalPodSandbox> {
    const on = this.on();
    this.sandbox ??= (async () => {
      const t = await this.openTools(this, !this.adopted);
      this.toolsShell = t;
      if (this.status === 'closed') throw new GroveError('sandbox_closed');
      return on.openSandbox(this.taskId, t.shell, t.python, !this.adopted);
    })();
    this.sandbox.catch(() => (this.adopted ? (this.sandbox = undefined) : undefined));
    return this.sandbox;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      await this.sandbox?.catch(() => undefined);
      await this.toolsShell?.close().catch(() => undefined);
    }
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

  /** One tool call through the worker's services, or a sandbox tool in the tools shell recorded on the worker, in
   * the dispatch record's shape (the routes' and MCP's). */
  async callTool(_endpoints: unknown, id: string, name: string, args: Record<string, unknown>) {
    if (this.sandboxNames.has(name)) {
      if (this.graded) throw new GroveError('invalid_request', `The Claw-Eval episode of sandbox ${this.id} was graded: it is over (create a new sandbox for another trial).`);
      const sandbox = await this.toolsSandbox();
      const r = await sandbox.call(name, args);
      const rec = await this.workerCall<{ calls: number }>('POST', 'dispatch', r);
      this.steps = rec.calls;
      return r.dispatch;
    }
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
      // the env snapshot from the tools shell first (sandbox_grader_files put in, commands run, files read)
      const env_snapshot = this.sandboxNames.size ? await (await this.toolsSandbox()).snapshot() : undefined;
      const trace = await this.workerCall<unknown>('POST', 'finish', { ...(answer === undefined ? {} : { answer }), ...(env_snapshot ? { env_snapshot } : {}) });
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
 * template (an image with the checkout; for the sandbox tools, a shell template for their pod) or this orchestrator's
 * checkout. */
export function admitClawEval(spec: Record<string, unknown>, templates: Record<string, { type: string; sandboxTemplate?: string }>, on: ClawEvalOnOrchestrator | undefined): void {
  const taskId = spec.claw_eval_task as string;
  if (['task_id', 'state', 'world_seed', 'apps', 'tools', 'faults'].some((k) => spec[k] !== undefined)) {
    throw new GroveError('invalid_request', 'claw_eval_task takes its services, tools and faults from the checkout: give none of task_id, state, world_seed, apps, tools, faults with it.');
  }
  if (!on) throw new GroveError('invalid_request', 'This server has no Claw-Eval checkout: start it with --claw-eval DIR to create sandboxes with claw_eval_task.');
  const wanted = (spec.labels as Record<string, string> | undefined)?.template;
  const template = Object.entries(templates).find(([name, t]) => t.type === 'claw-eval' && (wanted === undefined || wanted === name))?.[1];
  if (!template) {
    throw new GroveError(
      'not_supported_on_backend',
      'claw_eval_task needs a `claw-eval` template on the kubernetes backend: pods whose image holds a copy of this server\'s --claw-eval checkout and its Python environment (scripts/claw-eval-image.sh; docs/kubernetes.md).',
    );
  }
  const { sandbox } = on.admit(taskId);
  if (sandbox && !template.sandboxTemplate) {
    throw new GroveError(
      'not_supported_on_backend',
      `Claw-Eval task ${taskId.slice(0, 200)} runs with the sandbox tools (Bash, Read, …), which run on a shell pod of their own: the claw-eval template names no \`sandboxTemplate\` (a shell template whose image has the sandbox server's Python: scripts/claw-eval-image.sh; docs/kubernetes.md).`,
    );
  }
}
