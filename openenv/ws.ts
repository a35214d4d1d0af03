// OpenEnv's WebSocket session protocol on /openenv/<key>/<env>/ws (and /openenv/<env>/ws with X-API-Key or
// ?api_key=): one session per connection, its environment's episodes in one Grove sandbox at a time, closed with
// the connection. Client frames are JSON text: {type:"reset",data}, {type:"step",data}, {type:"state"},
// {type:"close"}, {type:"mcp",data:<JSON-RPC>}; answers {type:"observation",data:{observation,reward,done}},
// {type:"state",data}, {type:"mcp",data}, or {type:"error",data:{message,code,...}}. Over capacity the connection
// is accepted, told CAPACITY_REACHED and closed, as OpenEnv's server does; an idle session is told SESSION_ERROR and
// closed. Frames larger than the server's body limit close the connection (1009). OpenEnv's other WebSocket route,
// /mcp (JSON-RPC frames on their own socket and session), is upgraded here too and served by ws-mcp.ts.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { closeAfterNext, textOf } from './ws-frames.ts';
import { serveMcpSocket } from './ws-mcp.ts';
import type { OpenEnvAdapter } from './envs/types.ts';
import { openEnvErrorOf, parseOr } from './envs/base.ts';
import type { Authorize } from './auth.ts';
import type { OpenEnvHost } from './host.ts';
import { handleRpc } from './mcp.ts';
import { runStep } from './actions.ts';
import { CapacityError, type Session, type Sessions } from './sessions.ts';
import { ResetArgs, WS_TYPES, wsError, WsMessage, type StepOut, type WsErrorCode } from './wire.ts';

const PATH = /^\/openenv\/(?:([^/]+)\/)?([^/]+)\/(ws|mcp)$/;

export interface WsDeps {
  host: OpenEnvHost;
  adapters: Map<string, OpenEnvAdapter>;
  sessions: Sessions;
  authorize: Authorize;
}

function refuse(socket: Duplex, status: number, detail: string): void {
  const body = JSON.stringify({ detail });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Error'}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Stands in for the screenshot's base64 while the rest of an answer is stringified; random per process, so no
 * page text can forge it. */
const PLACEHOLDER = `grove-openenv-b64-${randomBytes(16).toString('hex')}`;

/**
 * An observation answer as the step route sends its JSON (server/screenshot-answer.ts): the screenshot's base64
 * (which never needs escaping) is copied into one buffer after the rest is stringified, instead of JSON.stringify
 * scanning its ~300 KB and the socket encoding the joined string again. The bytes are the same JSON text; the frame
 * goes out as a text frame.
 */
function observationFrame(out: StepOut): string | Buffer {
  const shot = out.observation.screenshot as { base64?: unknown } | null | undefined;
  if (!shot || typeof shot.base64 !== 'string' || shot.base64.length < 4096) return JSON.stringify({ type: 'observation', data: out });
  const b64 = shot.base64;
  const text = JSON.stringify({ type: 'observation', data: { ...out, observation: { ...out.observation, screenshot: { ...shot, base64: PLACEHOLDER } } } });
  const at = text.indexOf(`"${PLACEHOLDER}"`);
  if (at < 0) return JSON.stringify({ type: 'observation', data: out });
  const pre = text.slice(0, at + 1);
  const post = text.slice(at + 1 + PLACEHOLDER.length);
  const preLen = Buffer.byteLength(pre);
  const frame = Buffer.allocUnsafe(preLen + b64.length + Buffer.byteLength(post));
  frame.write(pre, 0, 'utf8');
  frame.write(b64, preLen, 'latin1');
  frame.write(post, preLen + b64.length, 'utf8');
  return frame;
}

export class OpenEnvSockets {
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();

  constructor(private readonly d: WsDeps) {
    // No per-message compression (as the step channel): a JPEG's base64 barely shrinks, and deflating ~300 KB per
    // answer costs the server more than the bytes it saves on a trainer's network.
    this.wss = new WebSocketServer({ noServer: true, maxPayload: d.host.config.bodyLimit, perMessageDeflate: false });
  }

  /** Handles an upgrade if its path is an OpenEnv one (answers true), else leaves it to the next handler. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://x');
    } catch {
      return false;
    }
    const m = PATH.exec(url.pathname);
    if (!m) return false;
    socket.on('error', () => socket.destroy());
    let key: string | undefined;
    try {
      key = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    } catch {
      refuse(socket, 404, 'Not Found');
      return true;
    }
    const adapter = this.d.adapters.get(m[2]);
    const transport = m[3] === 'mcp' ? 'ws_mcp' : 'ws';
    const denied = this.d.authorize(req.headers, key, url.searchParams.get('api_key') ?? undefined);
    if (denied) {
      this.d.host.meter?.error(adapter?.name ?? 'unknown', transport, denied.code);
      refuse(socket, denied.status, denied.message);
      return true;
    }
    if (!adapter) {
      this.d.host.meter?.error('unknown', transport, 'not_found');
      refuse(socket, 404, 'Not Found');
      return true;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.once('close', () => this.sockets.delete(ws));
      if (m[3] === 'mcp') serveMcpSocket(ws, adapter, this.d);
      else this.serve(ws, adapter);
    });
    return true;
  }

  private serve(ws: WebSocket, adapter: OpenEnvAdapter): void {
    // Every answer is a text frame (an observation's is built as bytes: observationFrame).
    const send = (frame: string | Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(frame, { binary: false });
    };
    let session: Session;
    try {
      session = this.d.sessions.open(adapter, this.d.host, 'ws');
    } catch (err) {
      if (err instanceof CapacityError) send(wsError('CAPACITY_REACHED', err.message, { active_sessions: err.active, max_sessions: err.max }));
      else send(wsError('SESSION_ERROR', 'The session could not be opened.'));
      closeAfterNext(ws);
      return;
    }
    session.onClosed = (reason) => {
      send(this.fail(adapter, 'SESSION_ERROR', `Session closed: ${reason}.`));
      closeAfterNext(ws, 30_000);
    };
    const end = () => void this.d.sessions.close(session);
    ws.on('close', end);
    ws.on('error', end);
    ws.on('message', (raw: RawData) => {
      const text = textOf(raw);
      // Answers go out in the order the frames came (one at a time per session).
      this.d.sessions.run(session, () => this.answer(session, adapter, text)).then(
        (reply) => {
          if (reply === null) {
            ws.close(1000);
            void this.d.sessions.close(session);
          } else send(reply);
        },
        () => undefined,
      );
    });
  }

  /** An error frame for the client, counted by its code. */
  private fail(adapter: OpenEnvAdapter, code: WsErrorCode, message: string, extra?: Record<string, unknown>): string {
    this.d.host.meter?.error(adapter.name, 'ws', code);
    return wsError(code, message, extra);
  }

  /** One client frame's answer (JSON text, or its UTF-8 bytes), or null for `close`. */
  private async answer(session: Session, adapter: OpenEnvAdapter, text: string): Promise<string | Buffer | null> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      return this.fail(adapter, 'INVALID_JSON', `Invalid JSON: ${(err as Error).message}`);
    }
    const type = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as { type?: unknown }).type : undefined;
    if (!WS_TYPES.includes(type as never)) return this.fail(adapter, 'UNKNOWN_TYPE', `Unknown message type: ${String(type ?? '').slice(0, 100)}`);
    try {
      const msg = parseOr(WsMessage, json, [], 'message');
      switch (msg.type) {
        case 'reset': {
          const args = parseOr(ResetArgs, msg.data, ['data'], 'reset arguments');
          return observationFrame(await session.episode.reset(args));
        }
        case 'step':
          return observationFrame(await runStep(session.episode, msg.data));
        case 'state':
          return JSON.stringify({ type: 'state', data: session.episode.state() });
        case 'close':
          return null;
        case 'mcp':
          return JSON.stringify({ type: 'mcp', data: await handleRpc(msg.data, { adapter, host: this.d.host, sessions: this.d.sessions, bound: session, transport: 'ws' }) });
      }
    } catch (err) {
      const e = openEnvErrorOf(err);
      if (e.message === 'Internal Server Error') this.d.host.log.error({ err, env: adapter.name }, 'openenv step failed');
      if (e.code === 'VALIDATION_ERROR') return this.fail(adapter, 'VALIDATION_ERROR', e.detail ? 'Invalid message' : e.message, { errors: e.detail ?? [], ...e.extra, ...(e.detail ? { detail: e.message } : {}) });
      return this.fail(adapter, e.code, e.message, e.extra);
    }
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}
