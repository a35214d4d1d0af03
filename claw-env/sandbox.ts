// Claw sandboxes on the core: a ClawApp (state, clock, audit, faults) served on its own origin with its own
// token. ClawEnvironment is the factory the local backend delegates `type: "claw"` to.
import { GroveError } from '../protocol/errors.ts';
import type { ClawCreateOptions, ClawDetails } from '../protocol/claw.ts';
import type { SandboxStatus } from '../protocol/sandbox.ts';
import type { EnvironmentFactory } from '../sandbox/local-backend.ts';
import type { Sandbox, SandboxDetails } from '../sandbox/types.ts';
import { ClawApp, type CallResult } from './app.ts';
import { ClawEvalEpisodeSandbox } from './claw-eval/episode.ts';
import type { ClawEvalHost } from './claw-eval/host.ts';
import { baseWorld } from './fixtures/world.ts';
import { startClawServer, type ClawServer } from './http.ts';
import { newToken } from './ids.ts';
import { APPS, parseState, type AppName, type ClawState } from './state.ts';
import { COMPAT_TOOLS } from './tasks/claw-eval-compat.ts';
import type { ClawTask } from './tasks/format.ts';
import { builtinTask } from './tasks/index.ts';
import { openAiTool, ALL_TOOLS, type OpenAIToolDef } from './tools.ts';

export interface ResolvedClawSpec {
  seed: ClawState;
  apps: readonly AppName[];
  tools?: string[];
  task: ClawTask | null;
  faults?: ClawCreateOptions['faults'];
}

/** Seed, apps and tools of a creation request; a 400 (invalid_request) for unknown tasks or bad fixtures. */
export function resolveClawSpec(spec: ClawCreateOptions, tasks: (id: string) => ClawTask | undefined = builtinTask): ResolvedClawSpec {
  const given = [spec.task_id, spec.state, spec.world_seed].filter((x) => x !== undefined).length;
  if (given > 1) throw new GroveError('invalid_request', 'Give at most one of task_id, state and world_seed.');
  if (spec.task_id !== undefined) {
    const task = tasks(spec.task_id);
    if (!task) throw new GroveError('invalid_request', `No Claw task "${spec.task_id}"; list them with \`grove claw tasks\`.`);
    return { seed: task.seed, apps: spec.apps ?? task.apps, tools: spec.tools ?? task.tools, task, faults: spec.faults ?? task.faults };
  }
  let seed: ClawState;
  if (spec.state !== undefined) {
    try {
      seed = parseState(spec.state, 'state');
    } catch (err) {
      throw new GroveError('invalid_request', (err as Error).message);
    }
  } else seed = baseWorld(spec.world_seed ?? 1).state;
  return { seed, apps: spec.apps ?? APPS, tools: spec.tools, task: null, faults: spec.faults };
}

function appFor(spec: ResolvedClawSpec): ClawApp {
  return new ClawApp({
    seed: spec.seed,
    apps: spec.apps,
    tools: spec.tools,
    faults: spec.faults,
    aliases: spec.task?.aliases,
    extraTools: spec.task && Object.keys(spec.task.aliases).length ? COMPAT_TOOLS : undefined,
  });
}

export class ClawSandbox implements Sandbox {
  readonly type = 'claw' as const;
  status: SandboxStatus = 'creating';
  private current: ClawApp;
  readonly token = newToken();
  private currentTask: ClawTask | null;
  private server: ClawServer | null = null;
  private readonly starting: Promise<void>;

  constructor(
    readonly id: string,
    spec: ResolvedClawSpec,
  ) {
    this.currentTask = spec.task;
    this.current = appFor(spec);
    this.starting = startClawServer(this.current, this.token).then(
      (s) => {
        this.server = s;
        if (this.status === 'creating') this.status = 'ready';
        else void s.close();
      },
      (err: unknown) => {
        this.status = 'error';
        throw new GroveError('internal_error', `Claw server failed to start: ${(err as Error).message}`);
      },
    );
  }

  ready(): Promise<void> {
    return this.starting;
  }

  /** The apps of the current episode (replaced by switchTask). */
  get app(): ClawApp {
    return this.current;
  }

  /** The task the current episode runs, if any. */
  get task(): ClawTask | null {
    return this.currentTask;
  }

  /**
   * A new episode of another task in this sandbox: fresh apps from the task's seed, tools and faults, served on the
   * same origin and token. What a runner does between tasks instead of deleting the sandbox and creating another.
   */
  switchTask(spec: ResolvedClawSpec): void {
    if (!this.server) throw new GroveError('sandbox_not_ready');
    this.current = appFor(spec);
    this.currentTask = spec.task;
    this.server.setApp(this.current);
  }

  get origin(): string {
    if (!this.server) throw new GroveError('sandbox_not_ready');
    return this.server.origin;
  }

  get steps(): number {
    return this.app.audit.length;
  }

  details(): SandboxDetails {
    if (!this.server) return {};
    const claw: ClawDetails = { origin: this.server.origin, login_url: `${this.server.origin}/login?token=${this.token}`, token: this.token, apps: [...this.app.apps], task_id: this.task?.id ?? null };
    return { claw };
  }

  /** Tool definitions offered to a tool-calling agent (a Claw-Eval task's own, else the built-in ones). */
  toolDefs(): OpenAIToolDef[] {
    if (this.task?.tool_defs) return this.task.tool_defs;
    return ALL_TOOLS.filter((t) => this.app.offers(t)).map(openAiTool);
  }

  /** One tool call; a "slow" fault delays the answer. */
  async call(tool: string, args: unknown, actor = 'tool'): Promise<CallResult> {
    const r = this.app.call(tool, args, actor);
    if (r.delayMs) await new Promise((ok) => setTimeout(ok, r.delayMs));
    return r;
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'closed';
    await this.starting.catch(() => undefined);
    await this.server?.close();
  }
}

export class ClawEnvironment implements EnvironmentFactory<ClawCreateOptions, ClawSandbox | ClawEvalEpisodeSandbox> {
  private readonly live = new Set<ClawSandbox | ClawEvalEpisodeSandbox>();

  /** `clawEval`: the server's Claw-Eval checkout (`--claw-eval DIR`), for sandboxes created with claw_eval_task. */
  constructor(private readonly opts: { clawEval?: ClawEvalHost } = {}) {}

  /** A claw_eval_task is checked before the sandbox exists: a stable 4xx for what can never run here. */
  admit(spec: ClawCreateOptions): void {
    if (spec.claw_eval_task === undefined) return;
    if (!this.opts.clawEval) throw new GroveError('invalid_request', 'This server has no Claw-Eval checkout: start it with --claw-eval DIR to create sandboxes with claw_eval_task.');
    const other = [spec.task_id, spec.state, spec.world_seed, spec.apps, spec.tools, spec.faults].some((x) => x !== undefined);
    if (other) throw new GroveError('invalid_request', 'claw_eval_task takes its services, tools and faults from the checkout: give none of task_id, state, world_seed, apps, tools, faults with it.');
    this.opts.clawEval.check(spec.claw_eval_task);
  }

  async create(id: string, spec: ClawCreateOptions): Promise<ClawSandbox | ClawEvalEpisodeSandbox> {
    const sb = spec.claw_eval_task !== undefined ? (this.admit(spec), new ClawEvalEpisodeSandbox(id, spec.claw_eval_task, this.opts.clawEval!)) : new ClawSandbox(id, resolveClawSpec(spec));
    this.live.add(sb);
    const close = sb.close.bind(sb);
    sb.close = async () => {
      this.live.delete(sb);
      await close();
    };
    return sb;
  }

  async shutdown(): Promise<void> {
    await Promise.allSettled([...this.live].map((s) => s.close()));
    await this.opts.clawEval?.close();
  }

  stats(): Record<string, number> {
    return { claw_sandboxes: this.live.size };
  }
}
