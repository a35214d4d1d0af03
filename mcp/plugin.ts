// The MCP endpoints on Grove's fastify server: one Streamable HTTP MCP server per sandbox at /sandboxes/{id}/mcp
// (POST messages, GET the server's event stream, DELETE a session), authenticated with that sandbox's own token
// (Authorization: Bearer; tokens.ts), never with Grove's API key, which stays with the operator. The operator gets
// a sandbox's token with Grove's key at GET /sandboxes/{id}/mcp/token (server/routes/mcp.ts, in the OpenAPI document).
//
// Everything a client sends is checked before the SDK sees it: the token first (a wrong or missing one learns
// nothing about the sandbox), the body (JSON of at most MAX_BODY bytes; else 413, or JSON-RPC's parse error), the
// sandbox (the registry's codes), the session (only this sandbox's sessions). Errors answer JSON-RPC's error shape
// with Grove's stable code in `error.data.code`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { GroveError } from '../protocol/errors.ts';
import type { Logger } from '../sandbox/log.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { mcpServerFor } from './server.ts';
import { McpSessions } from './sessions.ts';
import { kindOf, SandboxTools, type ToolHost } from './sandbox-tools.ts';
import { bearer, SandboxTokens } from './tokens.ts';

export const MAX_BODY = 8 * 1024 * 1024 + 64 * 1024;
const ID_MAX = 100;

export interface McpPluginOptions {
  host: ToolHost & { registry: ToolHost['registry'] & { onEvent(fn: (e: { type: string; id: string }) => void): void } };
  /** The sandbox tokens (derived from the server's API key, or a random secret without a key); the server's
   * GET /sandboxes/{id}/mcp/token route (server/routes/mcp.ts) gives them out with the same object. */
  tokens: Pick<SandboxTokens, 'verify'>;
  version: string;
  log: Logger;
  perSandbox?: number;
  idleMs?: number;
}

/** A JSON-RPC error answer (id null: the request was not read as a message), Grove's code in data.code. */
function rpcError(reply: FastifyReply, status: number, code: string, message: string, rpcCode = -32000): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ jsonrpc: '2.0', error: { code: rpcCode, message, data: { code } }, id: null });
}

function fromGroveError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof GroveError && err.status < 500) return rpcError(reply, err.status, err.code, err.message);
  throw err;
}

/** The sandbox's own app token (Claw sandboxes), when it has one: from its details, which a claw sandbox on a worker
 * pod (k8s/remote-claw.ts) reports as the worker gave them, as an in-process one does. */
function appToken(sb: Sandbox): string | undefined {
  if (sb.type !== 'claw') return undefined;
  return sb.details?.().claw?.token ?? (sb as Sandbox & { token?: string }).token;
}

export function mcpPlugin(o: McpPluginOptions) {
  const { tokens } = o;
  const sessions = new McpSessions({ perSandbox: o.perSandbox ?? 16, idleMs: o.idleMs ?? 30 * 60_000 });
  const { registry } = o.host;

  /** Checks the token, then finds the sandbox; answers and returns null when either fails. */
  const admit = (request: FastifyRequest, reply: FastifyReply, id: string): Sandbox | null => {
    const given = bearer(request.headers.authorization);
    if (given === undefined) {
      void rpcError(reply.header('www-authenticate', 'Bearer'), 401, 'unauthorized', 'Send the sandbox\'s MCP token: Authorization: Bearer <token> (GET /sandboxes/{id}/mcp/token with Grove\'s key gives it).');
      return null;
    }
    let sb: Sandbox | undefined;
    if (!tokens.verify(id, given)) {
      try {
        sb = registry.use(id);
      } catch {
        sb = undefined;
      }
      const own = sb && appToken(sb);
      if (!own || !tokens.verify(id, given, own)) {
        void rpcError(reply, 403, 'forbidden', 'This token does not open this sandbox\'s MCP server.');
        return null;
      }
    }
    try {
      return sb ?? registry.use(id);
    } catch (err) {
      void fromGroveError(reply, err);
      return null;
    }
  };

  return async function plugin(app: FastifyInstance): Promise<void> {
    sessions.start();
    registry.onEvent((e) => {
      if (e.type === 'closed') void sessions.closeSandbox(e.id);
    });
    // SSE streams stay open until their session ends: ended before the server waits for its connections.
    app.addHook('preClose', async () => sessions.closeAll());
    // Bodies are read as text (bounded) and parsed here: malformed JSON is JSON-RPC's parse error, not a Grove 400.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MAX_BODY }, (_req, body, done) => done(null, body));

    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      const { id } = request.params as { id: string };
      if (id.length > ID_MAX) return rpcError(reply, 400, 'invalid_request', 'The sandbox id is too long.');
      const sb = admit(request, reply, id);
      if (!sb) return reply;
      let body: unknown;
      if (request.method === 'POST') {
        const text = typeof request.body === 'string' ? request.body : '';
        try {
          body = JSON.parse(text);
        } catch {
          return rpcError(reply, 400, 'invalid_request', 'Parse error: the body is not JSON.', -32700);
        }
      }
      const sid = request.headers['mcp-session-id'];
      let transport;
      if (typeof sid === 'string' && sid !== '') {
        transport = sessions.get(id, sid);
        if (!transport) return rpcError(reply, 404, 'session_not_found', 'Session not found', -32001);
      } else if (request.method === 'POST' && isInitializeRequest(body)) {
        let source;
        try {
          source = new SandboxTools(o.host, id, kindOf(sb.type));
          source.tools();
        } catch (err) {
          return fromGroveError(reply, err);
        }
        transport = await sessions.open(id, mcpServerFor(source, { version: o.version, log: o.log }));
      } else {
        return rpcError(reply, 400, 'invalid_request', 'Bad Request: no valid session id (start with an initialize request).');
      }
      reply.hijack();
      await transport.handleRequest(request.raw, reply.raw, body);
      return reply;
    };
    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      app.route({ method, url: '/sandboxes/:id/mcp', config: { auth: false }, bodyLimit: MAX_BODY, handler: handle });
    }
  };
}

export { SandboxTokens };
