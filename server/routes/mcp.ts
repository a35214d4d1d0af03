// The MCP endpoint's operator door: Grove's key gets a sandbox's MCP address and token. The endpoint itself
// (/sandboxes/{id}/mcp, MCP Streamable HTTP, opened by that token) is mcp/plugin.ts: another protocol, not here.
import { McpAccess } from '../../protocol/mcp.ts';
import { SandboxIdParams } from '../../protocol/api.ts';
import { kindOf } from '../../mcp/sandbox-tools.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';

const mcpToken = defineRoute({
  id: 'mcpToken',
  method: 'GET',
  url: '/sandboxes/:id/mcp/token',
  summary: 'The sandbox\'s MCP endpoint and its own bearer token',
  description:
    'The sandbox serves MCP tools over Streamable HTTP at `path` (browser: computer-use tools; shell: exec, files, apply_patch; claw: the apps\' tools). ' +
    'Connect with `Authorization: Bearer <token>`: the token opens only this sandbox\'s MCP endpoint and none of Grove\'s API, so it can go into the sandbox or a harness; Grove\'s key stays with the operator.',
  tags: ['mcp'],
  params: SandboxIdParams,
  responses: { 200: { description: 'The MCP address and token', schema: McpAccess }, ...errorResponses(401, 403, 404, 409, 410) },
  async handler({ params, ctx }) {
    const sb = ctx.registry.use(params.id);
    return {
      sandbox_id: params.id,
      server: kindOf(sb.type),
      path: `/sandboxes/${encodeURIComponent(params.id)}/mcp`,
      token: ctx.mcpTokens.tokenFor(params.id),
      transport: 'streamable-http',
    } satisfies McpAccess;
  },
});

export const mcpRoutes = [mcpToken];
