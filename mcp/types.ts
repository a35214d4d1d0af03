// The contract of this room: a sandbox's tools as MCP sees them (name, description, JSON Schema input) and one
// call answered as an MCP CallToolResult. The MCP server (server.ts), the HTTP mount (plugin.ts) and other
// protocols carrying tool calls (OpenEnv's list_tools / call_tool) all go through a ToolSource.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

export type McpTool = Pick<Tool, 'name' | 'description' | 'inputSchema' | 'annotations'>;
export type ToolResult = CallToolResult;

/** The tools of one sandbox (or one Claw-Eval trial's services). */
export interface ToolSource {
  /** What kind of server this is (the MCP server's name: grove-browser, grove-shell, grove-claw, grove-claw-eval). */
  readonly kind: string;
  tools(): McpTool[];
  /** One call. Invalid arguments, unknown tools and failures of the sandbox answer `isError: true` with a readable
   * text, never a throw: a model reads them and adjusts (MCP: tool errors are results, protocol errors are not). */
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult>;
}

/** A text result (isError when `error`). */
export function textResult(text: string, error = false, structured?: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text }], ...(error ? { isError: true } : {}), ...(structured ? { structuredContent: structured } : {}) };
}

/** A failure as a tool result: a stable code and the message (GroveError, ToolError, zod), never a stack. */
export function errorResult(code: string, message: string): ToolResult {
  return textResult(JSON.stringify({ error: { code, message } }), true);
}
