// The tools of a sandbox in the registry, by its type: browser (computer-use tools), shell (exec, files, patch) or
// claw (its apps' tools). The sandbox is looked up on every list and call, so a closed or expired sandbox answers
// its registry error (sandbox_closed, sandbox_not_found) and every call counts as use (idle expiry), as a REST call.
// This is the interface other protocols use to carry tool calls (OpenEnv's list_tools / call_tool): listTools /
// callTool, or a ToolSource for the MCP server.
import type { Action } from '../protocol/action.ts';
import { GroveError } from '../protocol/errors.ts';
import type { StepResult } from '../protocol/observation.ts';
import type { Logger } from '../sandbox/log.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { countedStep, type StepCounter, type StepTransport } from '../sandbox/step-count.ts';
import type { BrowserSandbox } from '../browser-env/types.ts';
import type { ClawSandbox } from '../claw-env/sandbox.ts';
import { isShellSandbox } from '../shell-env/types.ts';
import { BrowserTools } from './browser-tools.ts';
import { ClawTools } from './claw-tools.ts';
import { ClawEvalTools } from './claw-eval-tools.ts';
import { isClawEvalEpisode } from '../claw-env/claw-eval/episode.ts';
import { ShellTools } from './shell-tools.ts';
import { errorResult, type McpTool, type ToolResult, type ToolSource } from './types.ts';

/** What the tools need of the process serving them (the server gives its registry and step path). */
export interface ToolHost {
  registry: { use(id: string): Sandbox; touch(id: string): void };
  log?: Logger;
  /** The server's browser step (step hooks, recording, admission, episode state); default: the sandbox's own. It
   * does not count the step: the call is counted (`steps`). */
  browserStep?(id: string, actions: Action[]): Promise<StepResult>;
  /** Where calls are counted as steps (grove_steps_total) and under which transport; absent, the caller counts. */
  steps?: { count: StepCounter; transport: StepTransport };
}

/** The ToolSource of one sandbox as it is now (throws the registry's GroveError for an unusable one). */
export function sourceOf(host: ToolHost, id: string): ToolSource {
  return resolve(host, id).source;
}

function resolve(host: ToolHost, id: string): { source: ToolSource; type: Sandbox['type'] } {
  const sb = host.registry.use(id);
  return { source: sourceFor(host, id, sb), type: sb.type };
}

function sourceFor(host: ToolHost, id: string, sb: Sandbox): ToolSource {
  const touched = () => host.registry.touch(id);
  if (sb.type === 'claw' && isClawEvalEpisode(sb)) return new ClawEvalTools(sb.task, sb, touched);
  if (sb.type === 'claw') return new ClawTools(sb as ClawSandbox, touched);
  if (isShellSandbox(sb)) return new ShellTools(sb, touched, host.log);
  if (sb.type === 'browser') {
    const step = host.browserStep ? (actions: Action[]) => host.browserStep!(id, actions) : undefined;
    return new BrowserTools(sb as BrowserSandbox, { step, log: host.log });
  }
  throw new GroveError('wrong_sandbox_type', `Sandbox ${id} is a ${sb.type} sandbox, which has no MCP tools.`);
}

/** The tool definitions of a sandbox. */
export function listTools(host: ToolHost, id: string): McpTool[] {
  return sourceOf(host, id).tools();
}

/** One tool call in a sandbox; a sandbox that cannot be used is an error result (its registry code), not a throw.
 * A call that reached the sandbox's tools is a step of the sandbox's type, its error result (or a timed-out command)
 * the outcome `error`. */
export async function callTool(host: ToolHost, id: string, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
  let found: ReturnType<typeof resolve>;
  try {
    found = resolve(host, id);
  } catch (err) {
    if (err instanceof GroveError) return errorResult(err.code, err.message);
    throw err;
  }
  const { source, type } = found;
  const call = () => source.call(name, args, signal);
  if (!host.steps) return call();
  // A command that ran out of its time is a result (its partial output), but the step's outcome is an error, as a
  // timed-out REST exec or OpenEnv shell step counts.
  return countedStep(host.steps.count, type, host.steps.transport, call, (r) => (r.isError || r.structuredContent?.timed_out === true ? 'error' : 'ok'));
}

/** A ToolSource following the sandbox `id` through the registry (one MCP session's view of its sandbox). */
export class SandboxTools implements ToolSource {
  constructor(
    private readonly host: ToolHost,
    private readonly id: string,
    readonly kind: string,
  ) {}
  tools(): McpTool[] {
    return listTools(this.host, this.id);
  }
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
    return callTool(this.host, this.id, name, args, signal);
  }
}

/** The MCP server name of a sandbox type. */
export function kindOf(type: Sandbox['type']): string {
  return `grove-${type}`;
}
