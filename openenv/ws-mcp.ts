// OpenEnv's MCP WebSocket route, /openenv/<key>/<env>/mcp (and /openenv/<env>/mcp with X-API-Key or ?api_key=),
// as OpenEnv's server has it (`@app.websocket("/mcp")` in http_server.py): the connection is one session with its
// own environment, opened on accept and closed with the socket; each text frame is one JSON-RPC 2.0 request
// (tools/list, tools/call, openenv/session/create answering this session's id) and gets one JSON-RPC response, in
// order. A frame that is not JSON answers -32700 (id null), one that is not a request -32600; the socket stays
// open. Over capacity the client is sent -32000 with active_sessions/max_sessions and the socket closes; an idle
// session is sent -32000 and closed. Frames over the body limit close the connection (1009), as on /ws.
import type { RawData, WebSocket } from 'ws';
import type { OpenEnvAdapter } from './envs/types.ts';
import { handleRpc } from './mcp.ts';
import { CapacityError, type Session } from './sessions.ts';
import { closeAfterNext, textOf } from './ws-frames.ts';
import type { WsDeps } from './ws.ts';
import { RPC, rpcError } from './wire.ts';

export function serveMcpSocket(ws: WebSocket, adapter: OpenEnvAdapter, d: WsDeps): void {
  const send = (answer: Record<string, unknown>) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(answer));
  };
  let session: Session;
  try {
    session = d.sessions.open(adapter, d.host, 'ws_mcp');
  } catch (err) {
    if (err instanceof CapacityError) send(rpcError(null, RPC.SERVER_ERROR, err.message, { active_sessions: err.active, max_sessions: err.max }));
    else send(rpcError(null, RPC.SERVER_ERROR, 'The session could not be opened.'));
    closeAfterNext(ws);
    return;
  }
  session.onClosed = (reason) => {
    d.host.meter?.error(adapter.name, 'ws_mcp', 'SERVER_ERROR');
    send(rpcError(null, RPC.SERVER_ERROR, `Session closed: ${reason}.`));
    closeAfterNext(ws, 30_000);
  };
  const end = () => void d.sessions.close(session);
  ws.on('close', end);
  ws.on('error', end);
  ws.on('message', (raw: RawData) => {
    const text = textOf(raw);
    d.sessions.run(session, () => answer(text)).then(send, () => undefined);
  });

  async function answer(text: string): Promise<Record<string, unknown>> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      d.host.meter?.error(adapter.name, 'ws_mcp', 'PARSE_ERROR');
      return rpcError(null, RPC.PARSE_ERROR, `Parse error: ${(err as Error).message}`);
    }
    return handleRpc(json, { adapter, host: d.host, sessions: d.sessions, bound: session, transport: 'ws_mcp' });
  }
}
