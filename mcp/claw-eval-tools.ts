// A Claw-Eval trial's services over MCP: the task yaml's own tools (name, description, input_schema) and each call
// through the trial's tool bridge (claw-env/claw-eval/services.ts: the yaml's tool_endpoints, the checkout's FastAPI
// services on Unix sockets in their no-network sandbox). Every dispatch is handed to `onDispatch`, so the trial's
// trace (what Claw-Eval's grader reads) holds the calls an MCP client made exactly as it holds the loop's own.
import { randomUUID } from 'node:crypto';
import type { ClawEvalTask } from '../claw-env/claw-eval/checkout.ts';
import type { ClawEvalServiceSet, DispatchRecord } from '../claw-env/claw-eval/services.ts';
import { objectSchema } from './claw-tools.ts';
import { errorResult, textResult, type McpTool, type ToolResult, type ToolSource } from './types.ts';

export class ClawEvalTools implements ToolSource {
  readonly kind = 'grove-claw-eval';
  private readonly endpoints: Map<string, ClawEvalTask['endpoints'][number]>;

  constructor(
    private readonly task: ClawEvalTask,
    private readonly services: Pick<ClawEvalServiceSet, 'callTool'>,
    private readonly onDispatch: (d: DispatchRecord) => void = () => undefined,
  ) {
    this.endpoints = new Map(task.endpoints.map((e) => [e.tool_name, e]));
  }

  tools(): McpTool[] {
    return this.task.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: objectSchema(t.input_schema) }));
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    if (!this.task.tools.some((t) => t.name === name)) return errorResult('unknown_tool', `No tool "${name.slice(0, 100)}" in task ${this.task.id}.`);
    const d = await this.services.callTool(this.endpoints, `mcp_${randomUUID()}`, name, args);
    this.onDispatch(d);
    return textResult(JSON.stringify(d.response_body), d.response_status >= 400, { status: d.response_status, body: d.response_body });
  }
}
