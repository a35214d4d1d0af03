// The interactive terminal of a shell sandbox on a worker pod: a WebSocket from the orchestrator to the worker's
// own /sandboxes/{id}/pty, speaking the same frames (server/pty-socket.ts), wrapped as the PtySession
// (sandbox/pty.ts) the orchestrator's pty socket drives. Bytes flow both ways as they come; a close on either side
// closes the other (the client's close ends the worker's terminal, the worker's exit frame or a lost connection
// ends the client's).
import { WebSocket, type RawData } from 'ws';
import { z } from 'zod';
import { GroveError } from '../protocol/errors.ts';
import type { PtyInit, PtySession } from '../sandbox/pty.ts';
import { reachFailure, type WorkerEndpoint } from './worker-http.ts';

/** Exit code reported when the worker's terminal ends without an exit frame (the connection was lost). */
export const PTY_LOST_EXIT = -1;

const ServerFrame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }).loose(),
  z.object({ type: z.literal('stdout'), data: z.string() }),
  z.object({ type: z.literal('exit'), code: z.number().int() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);

export function openRemotePty(w: WorkerEndpoint, workerSandboxId: string, init: PtyInit, handshakeMs = 15_000): Promise<PtySession> {
  const url = new URL(`/sandboxes/${encodeURIComponent(workerSandboxId)}/pty`, w.url);
  url.protocol = 'ws:';
  const ws = new WebSocket(url, { headers: { 'x-api-key': w.token }, handshakeTimeout: handshakeMs, maxPayload: 4 * 1024 * 1024 });
  let dataFn: ((b: Buffer) => void) | null = null;
  const pending: Buffer[] = [];
  const exitFns: Array<(code: number) => void> = [];
  let exitCode: number | null = null;
  const exited = (code: number) => {
    if (exitCode !== null) return;
    exitCode = code;
    for (const fn of exitFns) fn(code);
  };
  const send = (frame: Record<string, unknown>) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  };
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));

  const session: PtySession = {
    write: (data) => send({ type: 'stdin', data: Buffer.from(data).toString('base64') }),
    resize: (rows, cols) => send({ type: 'resize', rows, cols }),
    signal: (sig) => send({ type: 'signal', sig }),
    onData(fn) {
      dataFn = fn;
      for (const b of pending.splice(0)) fn(b);
    },
    onExit(fn) {
      if (exitCode !== null) fn(exitCode);
      else exitFns.push(fn);
    },
    async kill() {
      // The worker kills its terminal on `close` (and on the socket closing); a worker that does not answer the
      // closing handshake is cut off.
      send({ type: 'close' });
      if (ws.readyState === ws.CONNECTING || ws.readyState === ws.OPEN) ws.close(1000);
      const timer = setTimeout(() => ws.terminate(), 5000);
      await closed;
      clearTimeout(timer);
    },
  };

  return new Promise<PtySession>((resolve, reject) => {
    let ready = false;
    const fail = (err: GroveError) => {
      if (ready) return;
      ws.terminate();
      reject(err);
    };
    ws.on('unexpected-response', (_req, res) => {
      // The worker refused the upgrade: its answer is the one error shape.
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8').slice(0, 4096)));
      res.on('end', () => {
        let message = `the worker refused the terminal (HTTP ${res.statusCode})`;
        try {
          message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
        } catch {
          // keep the status line
        }
        fail(new GroveError(res.statusCode === 410 ? 'sandbox_closed' : 'exec_failed', message));
      });
    });
    ws.on('error', (err) => fail(new GroveError('worker_lost', `Worker pod ${w.pod} cannot be reached for the terminal (${reachFailure(err)}).`, { cause: err })));
    ws.on('open', () =>
      send({ type: 'init', cmd: init.argv, env: init.env ?? null, cwd: init.cwd ?? null, rows: init.rows, cols: init.cols, login_shell: false }),
    );
    ws.on('message', (raw: RawData) => {
      let frame: z.infer<typeof ServerFrame>;
      try {
        frame = ServerFrame.parse(JSON.parse(raw.toString()));
      } catch {
        return;
      }
      switch (frame.type) {
        case 'ready':
          ready = true;
          resolve(session);
          break;
        case 'stdout': {
          const b = Buffer.from(frame.data, 'base64');
          if (dataFn) dataFn(b);
          else pending.push(b);
          break;
        }
        case 'exit':
          exited(frame.code);
          break;
        case 'error':
          if (!ready) fail(new GroveError('exec_failed', frame.message));
          break;
      }
    });
    ws.on('close', () => {
      fail(new GroveError('worker_lost', `Worker pod ${w.pod} closed the terminal before it started.`));
      exited(PTY_LOST_EXIT);
    });
  });
}
