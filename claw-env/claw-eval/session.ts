// One Claw-Eval trial's environment, whoever drives it: `grove claw run --claw-eval` (runner/claw-eval/trial.ts),
// a Claw sandbox of the server created with `claw_eval_task` (REST and MCP, so an agent harness such as Codex), all
// through this one class: the task's services from the checkout (services.ts), its sandbox tools when it has them
// (sandbox.ts), each tool call routed and recorded as Claw-Eval's dispatcher records it, and after the episode the
// audit data, env snapshot and local grader files its grader reads. The grade itself is grade.ts on `trace`.
import { randomUUID } from 'node:crypto';
import type { ClawEvalEndpoint, ClawEvalTask, ClawEvalTool } from './checkout.ts';
import { toolResultBlock, type ClawEvalMessage, type ClawEvalTrace } from './grade.ts';
import type { ClawEvalPrompt } from './prompt.ts';
import type { ClawEvalPython } from './pyenv.ts';
import { ClawEvalSandbox, localGraderFiles, type ClawEvalShell } from './sandbox.ts';
import { ClawEvalServiceSet, type ClawEvalConfine, type ClawEvalIsolation, type DispatchRecord } from './services.ts';
import { simulatedUserTurn, type ClawEvalUserModel } from './user-agent.ts';
import type { Progress } from '../../sandbox/progress.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { ClawEvalSandboxCall } from '../../protocol/claw.ts';

/** Shell sandboxes for the sandbox tools: one per trial, the Python inside that runs the checkout's sandbox server,
 * and the checkout's sandbox tool specs. */
export interface ClawEvalSandboxProvider {
  open(labels: Record<string, string>): Promise<{ shell: ClawEvalShell; close(): Promise<void> }>;
  python: string;
  tools: ClawEvalTool[];
}

export interface ClawEvalSessionOptions {
  root: string;
  python: ClawEvalPython;
  driver: string;
  errorRate?: number;
  sandbox?: ClawEvalSandboxProvider;
  /** The sandbox tools run elsewhere (a worker pod's episode: its orchestrator runs them on a shell pod of their own
   * and records each call here, recordCall, and hands the env snapshot to finish): their specs only. */
  sandboxElsewhere?: { tools: ClawEvalTool[] };
  /** The services under a shell sandbox's limits (services.ts ClawEvalConfine). */
  confine?: ClawEvalConfine;
  /** `pod`: the services without bubblewrap, in a worker pod (services.ts). */
  isolation?: ClawEvalIsolation;
}

/** A tool call's record and what the model is shown: service and sandbox tools alike (protocol/claw.ts; frames only
 * from media answers of the sandbox tools). */
export type ClawEvalCallResult = ClawEvalSandboxCall;

export class ClawEvalSession {
  readonly trace: ClawEvalTrace;
  readonly tools: ClawEvalTool[];
  private readonly endpoints: Map<string, ClawEvalEndpoint>;
  private readonly sandboxNames: Set<string>;
  private readonly services?: ClawEvalServiceSet;
  private shellSession?: { shell: ClawEvalShell; close(): Promise<void> };
  private sandbox?: ClawEvalSandbox;
  private finished = false;
  /** Messages the simulated user has sent, and whether it said it is done. */
  userRounds = 0;
  userDone = false;

  constructor(
    readonly task: ClawEvalTask,
    readonly trial: number,
    private readonly o: ClawEvalSessionOptions,
    first: ClawEvalPrompt,
  ) {
    if (task.sandbox && !o.sandbox && !o.sandboxElsewhere) throw new Error('the task runs with the sandbox tools and no shell sandbox is configured');
    this.services = task.services.length ? new ClawEvalServiceSet(task, { root: o.root, python: o.python, driver: o.driver, errorRate: o.errorRate, confine: o.confine, isolation: o.isolation }) : undefined;
    this.endpoints = new Map(task.endpoints.map((e) => [e.tool_name, e]));
    // Claw-Eval's --sandbox loop: the task's tools, then the sandbox tools the yaml does not define itself
    const own = new Set(task.tools.map((t) => t.name));
    const sandboxTools = task.sandbox ? (o.sandbox ?? o.sandboxElsewhere)!.tools : [];
    this.tools = [...task.tools, ...sandboxTools.filter((t) => !own.has(t.name))];
    this.sandboxNames = new Set(sandboxTools.map((t) => t.name));
    this.trace = { messages: [{ role: 'user', content: first.content }], dispatches: [], audit_data: {}, media_events: first.media_events };
  }

  /** Services up (each answering its health check) and the shell sandbox with the task's files, within `progress`
   * (the caller's startup deadline; serviceStartBudgetMs is the task's own). */
  async start(progress: Progress): Promise<void> {
    await this.services?.start(progress);
    if (this.task.sandbox && this.o.sandbox) {
      progress.throwIfAborted();
      const opened = await progress.race(this.o.sandbox!.open({ 'grove.claw-eval.task': this.task.id.slice(0, 60), 'grove.claw-eval.trial': String(this.trial) }), `the shell sandbox of ${this.task.id}`, { dispose: (late) => void late.close() });
      if (this.finished) {
        await opened.close();
        throw new Error('the episode was closed while it started');
      }
      this.shellSession = opened;
      this.sandbox = await progress.race(ClawEvalSandbox.open(opened.shell, { root: this.o.root, python: this.o.sandbox!.python, task: this.task }), `the sandbox tools of ${this.task.id}`);
    }
  }

  /**
   * The simulated user's turn after an assistant message without tool calls (Claw-Eval's loop): null when the task
   * has no simulated user, its rounds are used up, or it is done ([DONE]); else its message, recorded in the trace
   * as `[user_agent]\n<text>`.
   */
  async userTurn(model: ClawEvalUserModel | undefined, progress: Progress): Promise<string | null> {
    const ua = this.task.user_agent;
    if (!ua || this.userDone || this.userRounds >= ua.max_rounds) return null;
    if (this.finished) throw new Error('the episode is over (graded or closed)');
    if (!model) throw new Error('the task has a simulated user (user_agent) and no user model is configured');
    const reply = await simulatedUserTurn(ua.persona, this.trace.messages, { root: this.o.root, python: this.o.python, driver: this.o.driver, model, progress });
    if (reply === null) {
      this.userDone = true;
      return null;
    }
    this.userRounds++;
    const text = `[user_agent]\n${reply}`;
    this.trace.messages.push({ role: 'user', content: [{ type: 'text', text }] });
    return text;
  }

  /** One tool call: a sandbox tool in the shell sandbox, else the yaml's endpoint through the service bridge.
   * The dispatch is recorded in the trace; the caller records the messages. */
  async call(id: string, name: string, input: Record<string, unknown>): Promise<ClawEvalCallResult> {
    if (this.finished) throw new Error('the episode is over (graded or closed)');
    if (this.sandboxNames.has(name)) {
      if (!this.sandbox) throw new GroveError('invalid_request', `${name} is a sandbox tool: it runs where the episode's shell is (its orchestrator), not beside the services.`);
      const r = await this.sandbox.call(id, name, input);
      this.trace.dispatches.push(r.dispatch);
      return r;
    }
    const rec = this.services
      ? await this.services.callTool(this.endpoints, id, name, input)
      : { tool_use_id: id, tool_name: name, endpoint_url: '', request_body: input, response_status: 404, response_body: { error: `unknown tool '${name}'` }, latency_ms: 0 };
    this.trace.dispatches.push(rec);
    const block = toolResultBlock(rec);
    return { dispatch: rec, text: block.type === 'tool_result' ? block.content[0]!.text : '', is_error: rec.response_status >= 400, images: [] };
  }

  /**
   * A call made by an agent outside Grove's loop (an MCP client, a REST caller): recorded in the trace as Claw-Eval's
   * loop records one turn with one call (the assistant's tool_use, the user's tool_result, the frames after it).
   * The signature is the service bridge's, so it serves mcp/claw-eval-tools.ts as it is.
   */
  async callTool(_endpoints: unknown, _id: string, name: string, args: Record<string, unknown>): Promise<DispatchRecord> {
    const id = `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const r = await this.call(id, name, args);
    this.recordMessages(id, name, args, r);
    return r.dispatch;
  }

  /** A sandbox tool call run elsewhere (sandboxElsewhere), recorded as callTool records one. */
  recordCall(r: ClawEvalCallResult): void {
    if (this.finished) throw new GroveError('invalid_request', 'the episode is over (graded or closed)');
    const { tool_use_id: id, tool_name: name, request_body: args } = r.dispatch;
    if (!this.o.sandboxElsewhere || !this.sandboxNames.has(name)) throw new GroveError('invalid_request', `${name.slice(0, 100)} is no sandbox tool of this episode.`);
    this.trace.dispatches.push(r.dispatch);
    this.recordMessages(id, name, args, r);
  }

  private recordMessages(id: string, name: string, args: Record<string, unknown>, r: ClawEvalCallResult): void {
    this.trace.messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name, input: args }] });
    this.trace.messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: r.text }], is_error: r.is_error }] });
    if (r.images.length) this.trace.messages.push({ role: 'user', content: [{ type: 'text', text: `[Visual content from tool results: ${r.images.length} image(s)]` }, ...r.images.map((i) => ({ type: 'image' as const, data: i.data, mime_type: i.mime_type }))] });
  }

  /** The agent's final answer (an external agent's last text), as Claw-Eval's last assistant message. */
  answer(text: string): void {
    const m: ClawEvalMessage = { role: 'assistant', content: text ? [{ type: 'text', text }] : [] };
    this.trace.messages.push(m);
  }

  /** After the loop: each service's audit, the sandbox's env snapshot (or the one collected elsewhere,
   * sandboxElsewhere), the local grader files (once). */
  async finish(envSnapshot?: Record<string, unknown>): Promise<ClawEvalTrace> {
    if (this.finished) return this.trace;
    this.finished = true;
    if (this.services) this.trace.audit_data = await this.services.audit();
    if (this.sandbox) this.trace.env_snapshot = await this.sandbox.snapshot(this.o.root, this.task);
    else if (this.o.sandboxElsewhere && envSnapshot) this.trace.env_snapshot = envSnapshot;
    if (this.task.local_grader_files.length) this.trace.env_snapshot = { ...(this.trace.env_snapshot ?? {}), ...localGraderFiles(this.task) };
    return this.trace;
  }

  /** Services and shell sandbox down; idempotent. */
  async close(): Promise<void> {
    this.finished = true;
    const s = this.shellSession;
    this.shellSession = undefined;
    try {
      await this.services?.stop();
    } finally {
      await s?.close();
    }
  }
}
