// Streamed requests to a worker pod, for the bodies the buffered GroveClient must not hold whole: download bytes
// and HAR files flow through the orchestrator chunk by chunk (backpressure included), never as one Buffer.
import http from 'node:http';
import type { Readable } from 'node:stream';
import { ERROR_CATALOG, GroveError, type ErrorCode } from '../protocol/errors.ts';

export interface WorkerEndpoint {
  pod: string;
  /** http://podIP:port */
  url: string;
  token: string;
}

export interface WorkerStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The answer's body, unread: pipe it on (destroying it aborts the request to the worker). */
  body: http.IncomingMessage;
}

export interface WorkerRequest {
  method: 'GET' | 'PUT' | 'DELETE';
  path: string;
  /** Sent as application/octet-stream, streamed. */
  body?: Readable;
  /** The request gives up when the worker has not answered (status and headers) after this long idle (ms). */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

const ERROR_BODY_BYTES = 64 * 1024;

/** Sends one request to the worker; resolves once its status line and headers came (2xx only). */
export function workerRequest(w: WorkerEndpoint, r: WorkerRequest): Promise<WorkerStream> {
  return new Promise<WorkerStream>((resolve, reject) => {
    const headers: Record<string, string> = { 'x-api-key': w.token };
    if (r.body) headers['content-type'] = 'application/octet-stream';
    const req = http.request(new URL(r.path, w.url), { method: r.method, headers, signal: r.signal }, (res) => {
      const status = res.statusCode ?? 0;
      // The idle bound covers the worker's answer, not a body the client drains slowly (backpressure pauses the
      // socket; a client that gives up destroys the stream, and with it this request).
      req.setTimeout(0);
      if (status >= 200 && status < 300) return resolve({ status, headers: res.headers, body: res });
      // An error answer is small JSON in the one error shape: read it (bounded) and map it onto the catalog.
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (n <= ERROR_BODY_BYTES) chunks.push(c);
      });
      res.on('error', (err) => reject(lost(w, err)));
      res.on('end', () => reject(answerError(status, Buffer.concat(chunks).toString('utf8'), res.headers['retry-after'])));
    });
    req.setTimeout(r.idleTimeoutMs ?? 120_000, () => req.destroy(new Error(`no answer for ${r.idleTimeoutMs ?? 120_000} ms`)));
    req.on('error', (err) => reject(r.signal?.aborted ? new GroveError('sandbox_closed', 'The sandbox was closed during the transfer.') : lost(w, err)));
    if (r.body) {
      r.body.on('error', (err) => req.destroy(err));
      r.body.pipe(req);
    } else req.end();
  });
}

function lost(w: WorkerEndpoint, err: Error): GroveError {
  return new GroveError('worker_lost', `Worker pod ${w.pod} cannot be reached (${reachFailure(err)}).`, { cause: err });
}

/**
 * What went wrong reaching a worker, for a client: the system error code (ECONNREFUSED, ETIMEDOUT, ...) without its
 * message, which names the pod's cluster-internal address (the full error stays in the log through `cause`).
 */
export function reachFailure(err: unknown): string {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return 'network error';
}

function answerError(status: number, text: string, retryAfter: string | string[] | undefined): GroveError {
  let code: string = status === 404 ? 'not_found' : 'internal_error';
  let message: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (parsed.error?.code) code = parsed.error.code;
    if (parsed.error?.message) message = parsed.error.message;
  } catch {
    // not the error shape: keep the status's code
  }
  const known = code in ERROR_CATALOG ? (code as ErrorCode) : 'internal_error';
  const ra = typeof retryAfter === 'string' && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  return new GroveError(known, known === 'internal_error' ? undefined : message, { retryAfter: ra });
}
