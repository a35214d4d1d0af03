// Interactive terminals over WebSocket: GET /sandboxes/{id}/pty (and Orchard's /orchard/sandboxes/{id}/exec/pty).
// The frames follow Orchard Env's published PTY protocol (microsoft/Orchard, orchard_env/client/process.py), so one
// implementation serves both: JSON text frames, data base64.
//   client → server: {type:"init", cmd:[...], env, cwd, rows, cols, login_shell}, {type:"stdin", data},
//                    {type:"resize", rows, cols}, {type:"signal", sig}, {type:"close"}
//   server → client: {type:"ready", pid}, {type:"stdout", data}, {type:"exit", code}, {type:"error", message}
// The API key comes as X-API-Key or, for WebSocket clients that cannot set headers, as ?api_key=.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { GroveError } from '../protocol/errors.ts';
import type { PtySession } from '../shell-env/index.ts';
import type { RouteContext } from './route.ts';
import { shellSandbox } from './routes/shell.ts';

const PATHS = [/^\/sandboxes\/([^/]+)\/pty$/, /^\/orchard\/sandboxes\/([^/]+)\/exec\/pty$/];

const InitFrame = z.object({
  type: z.literal('init'),
  cmd: z.array(z.string()).min(1).max(10_000).default(['/bin/bash']),
  env: z.record(z.string(), z.string()).nullish(),
  cwd: z.string().min(1).max(4096).nullish(),
  rows: z.number().int().min(1).max(1000).default(24),
  cols: z.number().int().min(1).max(1000).default(80),
  login_shell: z.boolean().default(false),
});

const Frame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdin'), data: z.string() }),
  z.object({ type: z.literal('resize'), rows: z.number().int().min(1).max(1000), cols: z.number().int().min(1).max(1000) }),
  z.object({ type: z.literal('signal'), sig: z.string().max(12).default('TERM') }),
  z.object({ type: z.literal('close') }),
]);

/** The HTTP routes' own check (key; with auth off, Host and Origin), with `?api_key=` when no header came. */
export type UpgradeCheck = (headers: IncomingMessage['headers'], queryKey: string | undefined) => GroveError | null;

export function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message }, detail: message });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Error'}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Another WebSocket route on the same upgrade listener (e.g. the step channel), reached after the same check. */
export interface UpgradeRoute {
  path: RegExp;
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** The route checks the caller itself (OpenEnv's key in the URL path): it is reached before the header check. */
  checksItself?: boolean;
}

export function attachPtySockets(app: FastifyInstance, ctx: RouteContext, check: UpgradeCheck, others: UpgradeRoute[] = []): void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  const sessions = new Set<WebSocket>();
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A client that hangs up mid-handshake must not raise an unhandled 'error'.
    socket.on('error', () => socket.destroy());
    // Every upgrade, known route or not, is checked first: a foreign Host or Origin learns nothing.
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://x');
    } catch {
      url = new URL('http://x/');
    }
    const own = others.find((o) => o.checksItself && o.path.test(url.pathname));
    if (own) return own.handle(req, socket, head);
    const denied = check(req.headers, url.searchParams.get('api_key') ?? undefined);
    if (denied) return refuse(socket, denied.status, denied.code, denied.message);
    const other = others.find((o) => !o.checksItself && o.path.test(url.pathname));
    if (other) return other.handle(req, socket, head);
    const id = PATHS.map((re) => re.exec(url.pathname)?.[1]).find((m) => m !== undefined);
    if (!id) return refuse(socket, 404, 'not_found', `No WebSocket route ${url.pathname}.`);
    let sandboxId: string;
    try {
      sandboxId = decodeURIComponent(id);
      shellSandbox(ctx, sandboxId);
    } catch (err) {
      const e = err instanceof GroveError ? err : err instanceof URIError ? new GroveError('invalid_request', 'The sandbox id in the URL could not be decoded.') : new GroveError('internal_error');
      return refuse(socket, e.status, e.code, e.message);
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sessions.add(ws);
      ws.once('close', () => sessions.delete(ws));
      serve(ws, ctx, sandboxId);
    });
  });
  app.addHook('onClose', async () => {
    for (const ws of sessions) ws.terminate();
    wss.close();
  });
}

function send(ws: WebSocket, frame: Record<string, unknown>): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
}

function serve(ws: WebSocket, ctx: RouteContext, id: string): void {
  let pty: PtySession | null = null;
  let starting = false;
  // Once the command exited, its session is not killed again: the exec's cgroup goes back to the sandbox's pool
  // at exit, and a late kill would hit the next command that got it (an exec run right after the terminal).
  let exited = false;
  const kill = () => {
    if (pty && !exited) void pty.kill();
  };
  const fail = (message: string) => {
    send(ws, { type: 'error', message });
    ws.close(1011);
  };
  ws.on('message', (raw: RawData, isBinary: boolean) => {
    let json: unknown;
    try {
      json = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : raw.toString());
    } catch {
      return fail('frames are JSON text');
    }
    if (!pty) {
      if (starting) return;
      const init = InitFrame.safeParse(json);
      if (!init.success) return fail('the first frame must be {"type":"init","cmd":[...]}');
      starting = true;
      let argv = init.data.cmd;
      // Orchard sends ["bash","-c",cmd] with login_shell as a flag of its own.
      if (init.data.login_shell && /(^|\/)bash$/.test(argv[0]) && argv[1] === '-c') argv = [argv[0], '-lc', ...argv.slice(2)];
      let sb;
      try {
        sb = shellSandbox(ctx, id);
      } catch (err) {
        return fail(err instanceof Error ? err.message : String(err));
      }
      sb.openPty({ argv, cwd: init.data.cwd ?? undefined, env: init.data.env ?? undefined, rows: init.data.rows, cols: init.data.cols }).then(
        (session) => {
          pty = session;
          if (ws.readyState !== ws.OPEN) return void session.kill();
          send(ws, { type: 'ready', pid: null });
          session.onData((b) => send(ws, { type: 'stdout', data: b.toString('base64') }));
          session.onExit((code) => {
            exited = true;
            ctx.registry.touch(id);
            send(ws, { type: 'exit', code });
            ws.close(1000);
          });
        },
        (err: unknown) => fail(err instanceof Error ? err.message : String(err)),
      );
      return;
    }
    const f = Frame.safeParse(json);
    if (!f.success) return;
    ctx.registry.touch(id);
    switch (f.data.type) {
      case 'stdin':
        pty.write(Buffer.from(f.data.data, 'base64'));
        break;
      case 'resize':
        pty.resize(f.data.rows, f.data.cols);
        break;
      case 'signal':
        pty.signal(f.data.sig);
        break;
      case 'close':
        kill();
        break;
    }
  });
  ws.on('close', kill);
  ws.on('error', kill);
}
