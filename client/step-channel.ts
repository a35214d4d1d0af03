// The step channel's client (server/step-socket.ts): browser steps over one WebSocket, pipelined. Any number of
// step() calls may be outstanding at once, for one sandbox or many; each resolves with its own answer (matched by
// seq), and steps of one sandbox run on the server in the order step() was called.
//   const ch = await StepChannel.open({ baseUrl, apiKey });
//   const { result, image } = await ch.step(id, { action: { action: 'click', space: 'css_px', x: 10, y: 20 } });
import WebSocket from 'ws';
import type { StepResult } from '../protocol/observation.ts';
import { GroveApiError, type BinaryAnswer, type StepInput } from './index.ts';

type Pending = { resolve(a: BinaryAnswer<StepResult>): void; reject(e: Error): void; wanted: boolean; sandboxId: string };

interface AnswerHead {
  seq: number | null;
  ok: boolean;
  result?: StepResult;
  status?: number;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  retry_after?: number;
}

export class StepChannel {
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private closedWith: GroveApiError | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onFrame(isBinary ? data : Buffer.from(data)));
    ws.on('close', (code, reason) => this.fail(new GroveApiError(0, 'network_error', `step channel closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`)));
    ws.on('error', (err) => this.fail(new GroveApiError(0, 'network_error', `step channel: ${err.message}`, { cause: err })));
  }

  /** Connects to `${baseUrl}/steps/ws`; rejects with GroveApiError (the server's code) when the upgrade is refused. */
  static open(opts: { baseUrl: string; apiKey?: string; timeoutMs?: number }): Promise<StepChannel> {
    const url = opts.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws') + '/steps/ws';
    const ws = new WebSocket(url, { headers: opts.apiKey ? { 'x-api-key': opts.apiKey } : {}, perMessageDeflate: false, handshakeTimeout: opts.timeoutMs ?? 30_000 });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new StepChannel(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => { body += d; });
        res.on('end', () => {
          let code = 'http_error';
          let message = body.slice(0, 500);
          try {
            const e = (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
            if (e?.code) code = e.code;
            if (e?.message) message = e.message;
          } catch { /* not JSON */ }
          ws.terminate();
          reject(new GroveApiError(res.statusCode ?? 0, code, message));
        });
      });
      // `on`, not `once`: terminate() after a refused upgrade emits one more error, which must not go uncaught.
      ws.on('error', (err) => reject(new GroveApiError(0, 'network_error', `step channel: ${err.message}`, { cause: err })));
    });
  }

  /**
   * One step of sandbox `id` (the POST /sandboxes/{id}/step body). The screenshot comes as bytes in `image` (null
   * with `screenshot: "none"`). An error answer raises GroveApiError with the server's status, code and details,
   * e.g. 503 capture_timeout (the actions ran: observe again, do not resend).
   */
  step(id: string, body: Omit<StepInput, 'screenshot'> & { screenshot?: 'binary' | 'none' }): Promise<BinaryAnswer<StepResult>> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, wanted: body.screenshot !== 'none', sandboxId: id });
      this.ws.send(JSON.stringify({ seq, sandbox_id: id, step: body }), (err) => {
        if (err) this.settle(seq, (p) => p.reject(new GroveApiError(0, 'network_error', `step channel: ${err.message}`, { cause: err })));
      });
    });
  }

  /** Steps sent and not answered yet. */
  get outstanding(): number {
    return this.pending.size;
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((ok) => {
      this.ws.once('close', () => ok());
      this.ws.close(1000);
    });
  }

  private settle(seq: number, f: (p: Pending) => void): void {
    const p = this.pending.get(seq);
    if (!p) return;
    this.pending.delete(seq);
    f(p);
  }

  private onFrame(frame: Buffer): void {
    let head: AnswerHead;
    let n: number;
    try {
      n = frame.readUInt32BE(0);
      head = JSON.parse(frame.subarray(4, 4 + n).toString('utf8')) as AnswerHead;
    } catch (err) {
      this.fail(new GroveApiError(0, 'bad_response', 'step channel: unreadable answer frame', { cause: err }));
      this.ws.terminate();
      return;
    }
    if (head.seq === null) {
      // The server could not read a frame of ours and closes: every outstanding step fails with its reason.
      this.fail(new GroveApiError(head.status ?? 0, head.error?.code ?? 'bad_response', head.error?.message ?? 'step channel refused a frame'));
      return;
    }
    this.settle(head.seq, (p) => {
      if (!head.ok || !head.result) {
        p.reject(new GroveApiError(head.status ?? 0, head.error?.code ?? 'bad_response', head.error?.message ?? 'error answer', { retryAfter: head.retry_after, details: head.error?.details }));
        return;
      }
      const shot = head.result.observation.screenshot;
      const bytes = frame.subarray(4 + n);
      if (p.wanted && (!shot || bytes.length === 0)) {
        p.reject(new GroveApiError(503, 'capture_timeout', `step channel, sandbox ${p.sandboxId}: the answer has no screenshot`, { details: { executed: true, result: head.result } }));
        return;
      }
      p.resolve({ result: head.result, image: shot && bytes.length ? { mime: shot.mime, bytes } : null });
    });
  }

  private fail(err: GroveApiError): void {
    this.closedWith ??= err;
    for (const [seq] of this.pending) this.settle(seq, (p) => p.reject(err));
  }
}
