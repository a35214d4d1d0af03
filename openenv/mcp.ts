// MCP as JSON-RPC 2.0 (HTTP POST /mcp, and the WebSocket `mcp` message): tools/list, tools/call and OpenEnv's
// session methods openenv/session/create and openenv/session/close. A session made here is named by its random id
// and only on this environment's /mcp; a WebSocket's own session is never reachable by id. tools/call without a
// session runs in a fresh episode closed after the call, as OpenEnv's stateless HTTP calls do.
import type { OpenEnvAdapter } from './envs/types.ts';
import { openEnvErrorOf } from './envs/base.ts';
import type { OpenEnvHost, OpenEnvTransport } from './host.ts';
import { openEpisode } from './metered.ts';
import { ensureEpisode } from './actions.ts';
import { CapacityError, type Session, type Sessions } from './sessions.ts';
import { JsonRpcRequest, rpcError, rpcResult, RPC } from './wire.ts';

export interface McpContext {
  adapter: OpenEnvAdapter;
  host: OpenEnvHost;
  sessions: Sessions;
  /** The WebSocket session the message came on, if any. */
  bound?: Session;
  /** Where the request came (the metrics label): HTTP /mcp, the /ws `mcp` message or the /mcp WebSocket. */
  transport: Exclude<OpenEnvTransport, 'http'>;
}

const RPC_NAME = new Map<unknown, string>(Object.entries(RPC).map(([name, code]) => [code, name]));

/** Parses one JSON-RPC request (already JSON) and answers it; an error answer is counted by its JSON-RPC code. */
export async function handleRpc(raw: unknown, c: McpContext): Promise<Record<string, unknown>> {
  const out = await answerRpc(raw, c);
  const err = out.error as { code?: number } | undefined;
  if (err) c.host.meter?.error(c.adapter.name, c.transport, RPC_NAME.get(err.code) ?? String(err.code));
  return out;
}

async function answerRpc(raw: unknown, c: McpContext): Promise<Record<string, unknown>> {
  const r = JsonRpcRequest.safeParse(raw);
  if (!r.success) return rpcError(null, RPC.INVALID_REQUEST, `Invalid request: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  const { id, method, params } = r.data;
  try {
    switch (method) {
      case 'openenv/session/create': {
        if (c.bound) return rpcResult(id, { session_id: c.bound.id });
        try {
          return rpcResult(id, { session_id: c.sessions.open(c.adapter, c.host, 'mcp').id });
        } catch (err) {
          if (err instanceof CapacityError) return rpcError(id, RPC.SERVER_ERROR, err.message, { active_sessions: err.active, max_sessions: err.max });
          throw err;
        }
      }
      case 'openenv/session/close': {
        const sid = params.session_id;
        if (typeof sid !== 'string' || !sid) return rpcError(id, RPC.INVALID_PARAMS, "Invalid params - 'session_id' is required");
        if (c.bound && sid === c.bound.id) return rpcError(id, RPC.INVALID_REQUEST, 'Cannot close active WebSocket-managed session via MCP method');
        const s = c.sessions.find(sid, c.adapter.name);
        if (!s) return rpcError(id, RPC.INVALID_PARAMS, `Unknown session_id: ${sid.slice(0, 100)}`);
        await c.sessions.close(s);
        return rpcResult(id, { session_id: sid, closed: true });
      }
      case 'tools/list':
      case 'tools/call':
        return await tools(id, method, params, c);
      default:
        return rpcError(id, RPC.METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 200)}`);
    }
  } catch (err) {
    const e = openEnvErrorOf(err);
    if (e.message === 'Internal Server Error') c.host.log.error({ err }, 'openenv mcp call failed');
    return rpcError(id, RPC.INTERNAL_ERROR, e.message);
  }
}

async function tools(id: string | number | null | undefined, method: string, params: Record<string, unknown>, c: McpContext): Promise<Record<string, unknown>> {
  let session = c.bound;
  const sid = params.session_id;
  if (!session && typeof sid === 'string' && sid) {
    session = c.sessions.find(sid, c.adapter.name);
    if (!session) return rpcError(id, RPC.INVALID_PARAMS, `Unknown session_id: ${sid.slice(0, 100)}`);
  }
  if (method === 'tools/list') {
    const list = session ? session.episode.listTools() : c.adapter.tools();
    return rpcResult(id, { tools: list });
  }
  const name = params.name;
  if (typeof name !== 'string' || !name) return rpcError(id, RPC.INVALID_PARAMS, "Missing 'name' in params");
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return rpcError(id, RPC.INVALID_PARAMS, "'arguments' must be an object");
  if (session) {
    const s = session;
    const call = async () => {
      await ensureEpisode(s.episode);
      return s.episode.callTool(name, args as Record<string, unknown>);
    };
    // A WebSocket's own message already runs in its session's turn.
    return rpcResult(id, s === c.bound ? await call() : await c.sessions.run(s, call));
  }
  // Stateless: a fresh episode for this one call.
  const episode = openEpisode(c.adapter, c.host, 60, c.transport);
  try {
    await ensureEpisode(episode);
    return rpcResult(id, await episode.callTool(name, args as Record<string, unknown>));
  } finally {
    await episode.close();
  }
}
