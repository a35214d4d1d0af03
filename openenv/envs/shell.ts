// The shell environment (exec-style): one shell sandbox per episode (bubblewrap, no network unless the reset asks);
// a step runs one command and observes its exit code and output. MCP tools: the mcp/ room's shell tools. No task defines a reward here: reward is null and an episode ends only by its step limit.
import { z } from 'zod';
import { ExecRequest, ExecResult } from '../../protocol/shell.ts';
import { ShellCreateOptions as ShellCreate } from '../../protocol/sandbox.ts';
import type { ShellSandbox } from '../../shell-env/types.ts';
import type { OpenEnvHost } from '../host.ts';
import type { ResetArgs, StepOut } from '../wire.ts';
import { parseOr, pick, SandboxSession } from './base.ts';
import { sandboxCall, sandboxTools, staticShellTools, toolHost } from '../tools.ts';
import { type EnvSession, type McpTool, type OpenEnvAdapter, type StepReport, type ToolResult } from './types.ts';

const RESET_KEYS = ['image', 'block_network', 'allow', 'cpu', 'memory_mb', 'max_processes', 'disk_mb', 'env'] as const;

/** A step: Grove's exec request (a `bash -c` string or an argv), without background jobs. */
export const ShellAction = ExecRequest.omit({ background: true });
export const ShellObservation = ExecResult.extend({ step: z.number().int() });

export function shellTools(): McpTool[] {
  return staticShellTools();
}

export class ShellSession extends SandboxSession {
  protected env: Record<string, string> = {};

  protected shellSpec(args: ResetArgs): z.output<typeof ShellCreate> {
    return parseOr(ShellCreate, { type: 'shell', ...pick(args, RESET_KEYS), idle_timeout_seconds: this.idleTimeoutS }, [], 'reset arguments');
  }

  async reset(args: ResetArgs): Promise<StepOut> {
    await this.start(this.shellSpec(args), args);
    return { observation: { exit_code: 0, timed_out: false, signal: null, stdout: '', stderr: '', step: 0 }, reward: null, done: false };
  }

  /** Runs one exec in the episode's sandbox (the environment's own variables first). */
  protected async exec(req: z.output<typeof ShellAction>, timeoutS?: number): Promise<z.output<typeof ExecResult>> {
    const sb = this.sandbox<ShellSandbox>();
    try {
      return await sb.exec({ ...req, env: { ...this.env, ...req.env }, timeout_s: req.timeout_s ?? timeoutS, background: false });
    } finally {
      this.touch();
    }
  }

  async step(action: Record<string, unknown>, timeoutS?: number): Promise<StepOut> {
    const req = parseOr(ShellAction, action, ['body', 'action'], 'action');
    const started = performance.now();
    const r = await this.exec(req, timeoutS);
    this.ran('shell', started, r.timed_out ? 'error' : 'ok');
    this.steps++;
    return { observation: { ...r, step: this.steps }, reward: null, done: false };
  }

  listTools(): McpTool[] {
    return this.id ? sandboxTools(toolHost(this.host), this.id) : shellTools();
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    this.sandbox<ShellSandbox>();
    this.steps++;
    return this.countedCall('shell', () => sandboxCall(toolHost(this.host), this.id as string, name, args));
  }
}

export const shellAdapter: OpenEnvAdapter = {
  name: 'shell',
  description: "Grove's shell environment: a bubblewrap sandbox per episode (no network by default); a step runs one command.",
  action: ShellAction,
  observation: ShellObservation,
  tools: shellTools,
  async tasks(): Promise<[]> {
    return [];
  },
  open(host: OpenEnvHost, idleTimeoutS: number, report?: StepReport): EnvSession {
    return new ShellSession(host, idleTimeoutS, report);
  },
};
