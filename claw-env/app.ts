// ClawApp: one sandbox's apps — state seeded from a fixture, the sandbox clock, the audit log of every call,
// optional fault injection — behind one `call(tool, args, actor)`. The HTTP server, the web UI and the Grove
// API all call through here, so every path is audited the same way.
import { SandboxClock } from './clock.ts';
import { APP_COLLECTIONS, diffState, type RecordChange } from './diff.ts';
import { FaultInjector, type FaultConfigInput } from './faults.ts';
import { newId } from './ids.ts';
import { APPS, cloneState, type AppName, type ClawState } from './state.ts';
import { iso } from './time.ts';
import { parseArgs, ToolError, type AnyTool, type ToolContext } from './tool.ts';
import { getTool } from './tools.ts';

export interface AuditEntry {
  seq: number;
  /** Sandbox-clock time of the call. */
  at: string;
  /** Who called: "tool" (tool-calling agent via API), "web" (browser UI), or a caller-given name. */
  actor: string;
  tool: string;
  app: AppName | null;
  args: unknown;
  status: number;
  /** The answer body on success, or {error:{code,message}}. */
  result: unknown;
  mutated: boolean;
  fault: '429' | '500' | 'slow' | null;
}

export interface CallResult {
  status: number;
  body: unknown;
  /** Seconds, on 429. */
  retryAfter?: number;
  /** Milliseconds the caller should wait before answering (a "slow" fault). */
  delayMs?: number;
  changes: RecordChange[];
  entry: AuditEntry;
}

export interface ClawAppOptions {
  seed: ClawState;
  apps?: readonly AppName[];
  /** Restrict callable tools (a task's offered tools); default every tool of `apps`. */
  tools?: readonly string[];
  faults?: FaultConfigInput;
  /** Names the agent calls → tool names (Claw-Eval task.yaml tools → compat tools). */
  aliases?: Record<string, string>;
  /** Tools beyond the built-in ones (the Claw-Eval compat tools). */
  extraTools?: AnyTool[];
  /** Id generator (tests may make it deterministic). */
  newId?: (prefix: string) => string;
}

export class ClawApp {
  private seed: ClawState;
  state: ClawState;
  readonly clock: SandboxClock;
  readonly audit: AuditEntry[] = [];
  readonly apps: readonly AppName[];
  private readonly allowed: Set<string> | null;
  readonly faults: FaultInjector;
  private readonly idGen: (prefix: string) => string;
  private readonly aliases: Record<string, string>;
  private readonly extra: Map<string, AnyTool>;

  constructor(opts: ClawAppOptions) {
    this.seed = cloneState(opts.seed);
    this.state = cloneState(opts.seed);
    this.clock = new SandboxClock(opts.seed.now);
    this.apps = opts.apps ?? APPS;
    this.allowed = opts.tools ? new Set(opts.tools) : null;
    this.faults = new FaultInjector(opts.faults);
    this.idGen = opts.newId ?? newId;
    this.aliases = opts.aliases ?? {};
    this.extra = new Map((opts.extraTools ?? []).map((t) => [t.name, t]));
  }

  /** The tool a called name runs (through aliases), if this sandbox offers it. The web UI (actor "web") may use
   * every tool of the sandbox's apps; a task's tool subset limits tool-calling agents. */
  resolve(name: string, actor = 'tool'): AnyTool | undefined {
    const target = this.aliases[name] ?? name;
    const tool = this.extra.get(target) ?? getTool(target);
    if (!tool || !this.apps.includes(tool.app)) return undefined;
    if (this.allowed !== null && actor !== 'web' && !this.allowed.has(name)) return undefined;
    return tool;
  }

  /** Whether a tool is callable in this sandbox under its own name. */
  offers(tool: AnyTool): boolean {
    return this.resolve(tool.name) === tool;
  }

  /** Restores the seed state, the clock, the fault sequence, and clears the audit log. */
  reset(): void {
    this.state = cloneState(this.seed);
    this.clock.set(Date.parse(this.seed.now));
    this.audit.length = 0;
    this.faults.reset();
  }

  /** Replaces the seed (and resets to it). */
  reseed(seed: ClawState): void {
    this.seed = cloneState(seed);
    this.reset();
  }

  seedState(): ClawState {
    return cloneState(this.seed);
  }

  call(name: string, args: unknown, actor = 'tool'): CallResult {
    const at = iso(this.clock.tick());
    const tool = this.resolve(name, actor);
    const entry: AuditEntry = { seq: this.audit.length + 1, at, actor, tool: name, app: tool?.app ?? null, args: args ?? {}, status: 200, result: null, mutated: false, fault: null };
    this.audit.push(entry);
    const fail = (status: number, code: string, message: string, extra: Partial<CallResult> = {}): CallResult => {
      entry.status = status;
      entry.result = { error: { code, message } };
      return { status, body: entry.result, changes: [], entry, ...extra };
    };
    if (!tool) return fail(404, 'unknown_tool', `No tool ${JSON.stringify(name)} in this sandbox.`);
    const fault = this.faults.decide();
    if (fault.kind === '429') {
      entry.fault = '429';
      return fail(429, 'rate_limited', 'Too many requests; retry after the delay in Retry-After.', { retryAfter: 1 });
    }
    if (fault.kind === '500') {
      entry.fault = '500';
      return fail(500, 'internal', 'The service had an internal error; the call did nothing. Retry.');
    }
    const before = tool.mutates ? cloneState(this.state) : null;
    const ctx: ToolContext = { state: this.state, clock: this.clock, newId: this.idGen };
    try {
      const parsed = parseArgs(tool, args);
      const body = tool.handler(ctx, parsed as never);
      // Handlers may replace arrays on ctx.state (filters): the state object itself stays the same.
      const changes = before ? diffState(before, this.state, APP_COLLECTIONS[tool.app]) : [];
      entry.result = body;
      entry.mutated = changes.length > 0;
      const out: CallResult = { status: 200, body, changes, entry };
      if (fault.kind === 'slow') {
        entry.fault = 'slow';
        out.delayMs = fault.ms;
      }
      return out;
    } catch (err) {
      if (before) this.state = before;
      if (err instanceof ToolError) return fail(err.status, err.code, err.message);
      throw err;
    }
  }
}
