// OpenEnv's MCP actions (list_tools / call_tool) and JSON-RPC tools/* call into the mcp/ room's tool definitions
// (mcp/sandbox-tools.ts: the same tools a sandbox's own MCP server offers), answered in the shape FastMCP's
// CallToolResult takes on OpenEnv's wire (content, structured_content, data, is_error: its clients read `data`).
import type { Action } from '../protocol/action.ts';
import type { StepResult } from '../protocol/observation.ts';
import { callTool, listTools, type ToolHost } from '../mcp/sandbox-tools.ts';
import { listing } from '../mcp/define.ts';
import { SHELL_TOOLS } from '../mcp/shell-tools.ts';
import type { McpTool as SdkTool, ToolResult as SdkResult } from '../mcp/types.ts';
import type { OpenEnvHost } from './host.ts';
import type { McpTool, ToolResult } from './envs/types.ts';

export function toolHost(host: OpenEnvHost, browserStep?: (actions: Action[]) => Promise<StepResult>): ToolHost {
  return { registry: host.registry, log: host.log, ...(browserStep ? { browserStep: (_id: string, actions: Action[]) => browserStep(actions) } : {}) };
}

function fromSdk(t: SdkTool): McpTool {
  return { name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as Record<string, unknown> };
}

/** The tools of a live sandbox. */
export function sandboxTools(host: ToolHost, sandboxId: string): McpTool[] {
  return listTools(host, sandboxId).map(fromSdk);
}

/** The shell tools before any sandbox exists (tool discovery needs no episode). */
export function staticShellTools(): McpTool[] {
  return SHELL_TOOLS.map(listing).map(fromSdk);
}

/** One call in a live sandbox, in FastMCP's result shape. */
export async function sandboxCall(host: ToolHost, sandboxId: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return fastMcpShape(await callTool(host, sandboxId, name, args));
}

export function fastMcpShape(r: SdkResult): ToolResult {
  const content = (r.content ?? []) as ToolResult['content'];
  const structured = (r.structuredContent ?? null) as Record<string, unknown> | null;
  const text = content.find((c) => c.type === 'text') as { text?: string } | undefined;
  let data: unknown = structured;
  if (data === null && text?.text !== undefined) {
    try {
      data = JSON.parse(text.text);
    } catch {
      data = text.text;
    }
  }
  return { content, structured_content: structured, data, is_error: r.isError === true };
}
