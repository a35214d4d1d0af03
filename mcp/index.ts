// The MCP room's public face. Other protocols carrying tool calls (OpenEnv's list_tools / call_tool) use
// listTools / callTool with a ToolHost (the server's registry, logger and browser step), or mcpServerFor over a
// ToolSource for a JSON-RPC MCP endpoint of their own; the server mounts mcpPlugin.
export type { McpTool, ToolResult, ToolSource } from './types.ts';
export { errorResult, textResult } from './types.ts';
export { callTool, kindOf, listTools, SandboxTools, sourceOf, type ToolHost } from './sandbox-tools.ts';
export { mcpServerFor } from './server.ts';
export { McpSessions } from './sessions.ts';
export { bearer, SandboxTokens } from './tokens.ts';
export { ClawEvalTools } from './claw-eval-tools.ts';
export { mcpPlugin, type McpPluginOptions } from './plugin.ts';
