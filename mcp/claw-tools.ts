// A Claw sandbox's tools over MCP: exactly the tool definitions its REST route offers (GET /sandboxes/{id}/claw/tools:
// the built-in apps' tools, or a Claw-Eval task's own yaml tools), each call run by the sandbox's apps and recorded
// in its audit log under the actor "mcp", as POST /sandboxes/{id}/claw/call runs it.
import type { ClawSandbox } from '../claw-env/sandbox.ts';
import { errorResult, textResult, type McpTool, type ToolResult, type ToolSource } from './types.ts';

/** MCP wants an object schema at the top; OpenAI-shape parameters nearly always are one. */
export function objectSchema(parameters: Record<string, unknown> | undefined): McpTool['inputSchema'] {
  const p = parameters ?? {};
  return (p.type === 'object' ? p : { type: 'object', properties: {}, ...p, ...(p.type === undefined ? {} : { type: 'object' }) }) as McpTool['inputSchema'];
}

export class ClawTools implements ToolSource {
  readonly kind = 'grove-claw';
  constructor(
    private readonly sandbox: ClawSandbox,
    /** Called after every call (the registry's touch: a call counts as use). */
    private readonly touched: () => void = () => undefined,
  ) {}

  tools(): McpTool[] {
    return this.sandbox.toolDefs().map((t) => ({ name: t.function.name, description: t.function.description, inputSchema: objectSchema(t.function.parameters) }));
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    // The tool list is the contract: a tool the sandbox does not offer is unknown here, whatever the apps hold.
    if (!this.tools().some((t) => t.name === name)) return errorResult('unknown_tool', `No tool "${name.slice(0, 100)}" in this Claw sandbox; list them with tools/list.`);
    try {
      const r = await this.sandbox.call(name, args, 'mcp');
      const structured = r.status === 200 ? { status: r.status, result: r.body } : { status: r.status, ...(r.body as object), ...(r.retryAfter !== undefined ? { retry_after: r.retryAfter } : {}) };
      return textResult(JSON.stringify(r.status === 200 ? r.body : structured), r.status !== 200, structured as Record<string, unknown>);
    } finally {
      this.touched();
    }
  }
}
