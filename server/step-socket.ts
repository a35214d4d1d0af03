// The step channel: browser steps over one WebSocket, GET /steps/ws (upgrade). A trainer stepping many sandboxes
// keeps one connection open instead of an HTTP exchange per step, and may pipeline: it sends the next requests
// without waiting for answers. Steps of one sandbox run in the order they came (no 409 sandbox_busy between
// them); steps of different sandboxes run at once. Answers come as they finish, matched by `seq`.
//   client → server, text frames:  {"seq": 1, "sandbox_id": "…", "step": {…the POST /sandboxes/{id}/step body…}}
//   server → client, binary frames: 4-byte big-endian length n, n bytes of JSON, then the screenshot's bytes
//     JSON {"seq", "ok": true, "result": <step result without screenshot.base64>}: the image bytes follow, or
//     JSON {"seq", "ok": false, "status", "error": {code, message, details?}, "retry_after"?}: nothing follows.
// A step's screenshot is always raw bytes here (as `screenshot: "binary"`), or none with `screenshot: "none"`.
// Frames that are not a JSON object with an integer `seq` end the connection (close 1008) after an error answer
// with seq null; a bad `step` is that request's 400, the connection stays.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { SandboxIdParams, StepRequest } from '../protocol/api.ts';
import { GroveError } from '../protocol/errors.ts';
import type { StepResult } from '../protocol/observation.ts';
import { runBrowserStep } from './browser-step.ts';
import type { UpgradeRoute } from './pty-socket.ts';
import type { RouteContext } from './route.ts';
import { parseInput } from './validation.ts';

export const STEP_CHANNEL_PATH = '/steps/ws';

/** Requests one connection may have waiting or running; one more is answered 503 overloaded. */
export const MAX_IN_FLIGHT = 256;

const Envelope = z.object({ seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), sandbox_id: z.unknown(), step: z.unknown() }).strict();

type Answer = { seq: number | null; ok: true; result: StepResult } | { seq: number | null; ok: false; status: number; error: { code: string; message: string; details?: unknown }; retry_after?: number };

/** The frame of an answer: length-prefixed JSON, then the image bytes when the result carries a screenshot. */
export function encodeAnswer(answer: Answer): Buffer {
  const shot = answer.ok ? answer.result.observation.screenshot : undefined;
  const base64 = shot?.base64;
  // The JSON without the base64 (the bytes follow it); the image is decoded straight into the frame: no decoded
  // copy of ~100 KB to allocate, copy and collect per step (issue 35: the server's CPU per step counts in steps/s).
  const head = JSON.stringify(answer, base64 ? (key, value: unknown) => (key === 'base64' && value === base64 ? undefined : value) : undefined);
  const headBytes = Buffer.byteLength(head);
  const frame = Buffer.allocUnsafe(4 + headBytes + (base64 ? Buffer.byteLength(base64, 'base64') : 0));
  frame.writeUInt32BE(headBytes, 0);
  frame.write(head, 4, 'utf8');
  // Never more than the bytes decoded: the frame was allocated unfilled.
  const n = base64 ? frame.write(base64, 4 + headBytes, 'base64') : 0;
  return n === frame.length - 4 - headBytes ? frame : frame.subarray(0, 4 + headBytes + n);
}

function errorAnswer(seq: number | null, err: unknown, ctx: RouteContext): Answer {
  const e = err instanceof GroveError ? err : new GroveError('internal_error');
  if (!(err instanceof GroveError)) ctx.log.error({ err }, 'step channel: step failed');
  ctx.metrics.error(e.code);
  const details = e.clientDetails ?? (e.status < 500 ? e.details : undefined);
  return { seq, ok: false, status: e.status, error: { code: e.code, message: e.message, ...(details === undefined ? {} : { details }) }, ...(e.retryAfter === undefined ? {} : { retry_after: e.retryAfter }) };
}

function serve(ws: WebSocket, ctx: RouteContext): void {
  // Per sandbox, the tail of its queue: a pipelined step starts when the one before it in this connection ended.
  const tails = new Map<string, Promise<void>>();
  let inFlight = 0;
  const reply = (a: Answer) => {
    if (ws.readyState === ws.OPEN) ws.send(encodeAnswer(a));
  };
  // A protocol error (a frame over the limit: close 1009) is the client's; without a listener it would crash the server.
  ws.on('error', () => ws.terminate());
  ws.on('message', (raw: RawData, isBinary: boolean) => {
    let env: z.output<typeof Envelope>;
    try {
      let json: unknown;
      try {
        json = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : raw.toString());
      } catch {
        throw new GroveError('invalid_request', 'Step channel frames are JSON text: {"seq", "sandbox_id", "step"}.');
      }
      env = parseInput(Envelope, json, 'body');
    } catch (err) {
      reply(errorAnswer(null, err, ctx));
      ws.close(1008, 'bad frame');
      return;
    }
    const seq = env.seq;
    let sandboxId: string;
    let step: StepRequest;
    try {
      sandboxId = parseInput(SandboxIdParams, { id: env.sandbox_id }, 'params').id;
      step = parseInput(StepRequest, env.step ?? {}, 'body', (path) => (path[0] === 'action' || path[0] === 'actions' ? 'invalid_action' : 'invalid_request'));
      if (inFlight >= MAX_IN_FLIGHT) throw new GroveError('overloaded', `At most ${MAX_IN_FLIGHT} steps may wait or run on one step channel; wait for answers.`, { retryAfter: 1 });
    } catch (err) {
      return reply(errorAnswer(seq, err, ctx));
    }
    inFlight++;
    const capture = step.screenshot === 'none' ? 'none' : 'base64';
    const run: Promise<void> = (tails.get(sandboxId) ?? Promise.resolve())
      .then(async () => {
        // A client that left does not leave its queue behind: steps not started yet are dropped.
        if (ws.readyState !== ws.OPEN) return;
        try {
          reply({ seq, ok: true, result: await runBrowserStep(ctx, sandboxId, step, capture) });
        } catch (err) {
          reply(errorAnswer(seq, err, ctx));
        }
      })
      .finally(() => {
        inFlight--;
        if (tails.get(sandboxId) === run) tails.delete(sandboxId);
      });
    tails.set(sandboxId, run);
  });
}

/** The step channel as an upgrade route of the server's WebSocket listener (server/pty-socket.ts checks the key first). */
export function stepChannel(app: FastifyInstance, ctx: RouteContext): UpgradeRoute {
  const wss = new WebSocketServer({ noServer: true, maxPayload: ctx.config.bodyLimit, perMessageDeflate: false });
  const open = new Set<WebSocket>();
  app.addHook('onClose', async () => {
    for (const ws of open) ws.terminate();
    wss.close();
  });
  return {
    path: new RegExp(`^${STEP_CHANNEL_PATH.replace(/\//g, '\\/')}$`),
    handle(req: IncomingMessage, socket: Duplex, head: Buffer) {
      wss.handleUpgrade(req, socket, head, (ws) => {
        open.add(ws);
        ws.once('close', () => open.delete(ws));
        serve(ws, ctx);
      });
    },
  };
}
