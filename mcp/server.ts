// An MCP server (the SDK's own Server: initialize, tools/list, tools/call, ping, every protocol version it knows)
// over one ToolSource. A protocol-level problem (a malformed request, an unknown method) is the SDK's JSON-RPC
// error; everything that happens inside a tool is a tool result (isError), as MCP asks.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../sandbox/log.ts';
import { errorResult, type ToolSource } from './types.ts';

export const SERVER_VERSION = '1';

export function mcpServerFor(source: ToolSource, opts: { version?: string; log?: Logger } = {}): Server {
  const server = new Server({ name: source.kind, version: opts.version ?? SERVER_VERSION }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: source.tools() }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    try {
      return await source.call(req.params.name, req.params.arguments ?? {}, extra.signal);
    } catch (err) {
      // Sources answer failures as results; anything left is Grove's own fault: logged, never shown.
      opts.log?.error({ err, tool: req.params.name }, 'MCP tool call failed');
      return errorResult('internal_error', 'The tool failed inside Grove; see the server log.');
    }
  });
  server.onerror = (err) => opts.log?.debug({ err: err.message }, 'MCP protocol error');
  return server;
}
