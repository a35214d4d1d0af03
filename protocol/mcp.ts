// The MCP endpoint's address card: what GET /sandboxes/{id}/mcp/token answers to Grove's key (mcp/ serves the
// endpoint; clients read this to connect with the sandbox's own bearer token).
import { z } from 'zod';

export const McpAccess = z.object({
  sandbox_id: z.string(),
  /** The MCP server's name: `grove-browser`, `grove-shell`, `grove-claw`, ... (the sandbox's type). */
  server: z.string().describe('the MCP server name the sandbox answers initialize with (grove-<sandbox type>)'),
  path: z.string().describe('the MCP endpoint on this server, /sandboxes/{id}/mcp'),
  token: z.string().describe('the sandbox\'s own bearer token (Authorization: Bearer <token>); it opens only this sandbox\'s MCP endpoint'),
  transport: z.literal('streamable-http'),
});
export type McpAccess = z.infer<typeof McpAccess>;
