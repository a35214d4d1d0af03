// One OpenEnv environment over one Grove sandbox type: its action schema, reset arguments, observation, rewards
// and MCP tools. The session manager (sessions.ts) and the transports (http.ts, ws.ts, mcp.ts) know only this.
import type { z } from 'zod';
import type { StepOutcome, StepType } from '../../sandbox/step-count.ts';
import type { OpenEnvHost } from '../host.ts';
import type { ResetArgs, StepOut } from '../wire.ts';

/** An MCP tool as tools/list answers it. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tools/call result in the shape FastMCP's CallToolResult serialises to (OpenEnv's clients read `data`). */
export interface ToolResult {
  content: ({ type: 'text'; text: string } | { type: string; [k: string]: unknown })[];
  structured_content: Record<string, unknown> | null;
  data: unknown;
  is_error: boolean;
}

export function toolResult(data: unknown, isError = false): ToolResult {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const structured = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : { result: data };
  return { content: [{ type: 'text', text }], structured_content: structured, data, is_error: isError };
}

/** A listed task: what reset({task}) takes, and what the agent is told. */
export interface TaskEntry {
  task: string | { suite: string; id: string };
  suite: string;
  id: string;
  question: string;
}

/** How a step that ran in a sandbox went, as Grove's own steps are counted (grove_steps_total's `outcome`). */
export type { StepOutcome };

/** Reports a step (an environment step or a tool call) that ran in the episode's sandbox: its sandbox type, its
 * seconds (a terminal step's grading not included) and outcome. The transport's meter (metered.ts) gives it. */
export type StepReport = (type: StepType, seconds: number, outcome: StepOutcome) => void;

export interface EnvSession {
  /** A new episode: the previous sandbox (if any) is closed and a new one created. */
  reset(args: ResetArgs): Promise<StepOut>;
  /** One action (already stripped of OpenEnv's `metadata`); `timeoutS` bounds it where the action has a timeout. */
  step(action: Record<string, unknown>, timeoutS?: number): Promise<StepOut>;
  state(): Record<string, unknown>;
  listTools(): McpTool[];
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** The live sandbox, if an episode is running. */
  readonly sandboxId: string | undefined;
  close(): Promise<void>;
}

export interface OpenEnvAdapter {
  readonly name: 'browser' | 'shell' | 'claw' | 'swe';
  readonly description: string;
  /** The action an environment step takes (validated with it; its JSON Schema is /schema's `action`). */
  readonly action: z.ZodType;
  readonly observation: z.ZodType;
  /** Tools a client can list before any reset (tool discovery needs no episode). */
  tools(): McpTool[];
  tasks(host: OpenEnvHost): Promise<TaskEntry[]>;
  open(host: OpenEnvHost, idleTimeoutS: number, report?: StepReport): EnvSession;
}
