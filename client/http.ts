// The client's default transport: node:http(s) with a keep-alive agent; the answer is buffered whole and
// read from the buffer. Measured against global fetch (undici) on the step endpoint with a ~170 KB answer
// (bench/core.bench.ts's fixture, this 2-core machine): about 0.5–1 ms less per call.
import http from 'node:http';
import https from 'node:https';

/** What the client reads of an answer: a subset of the standard Response (so global fetch fits too). */
export interface HttpAnswer {
  ok: boolean;
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  /** The body's bytes without a copy, where the transport has them (the standard Response's `bytes()`). */
  bytes?(): Promise<Uint8Array>;
}

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<HttpAnswer>;

/** A fully received answer; its body is read from the buffer as it is (no stream in between). */
class BufferedAnswer implements HttpAnswer {
  constructor(
    readonly status: number,
    readonly statusText: string,
    private readonly raw: http.IncomingHttpHeaders,
    private readonly body: Buffer,
  ) {}
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  readonly headers = {
    get: (name: string): string | null => {
      const v = this.raw[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
  async text(): Promise<string> {
    return this.body.toString('utf8');
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength) as ArrayBuffer;
  }
  async bytes(): Promise<Buffer> {
    return this.body;
  }
}

/** What the default transport takes beyond fetch's init: a deadline for the whole call without an AbortSignal. */
export type TransportInit = Parameters<FetchLike>[1] & {
  /**
   * No answer (headers and whole body) within this many ms: the request is destroyed and the call rejects with a
   * TimeoutError. A cleared timer: AbortSignal.timeout's timer lives on (unref'd, weakly held) until it fires, i.e.
   * one pending timer per call made in the last 120 s.
   */
  timeoutMs?: number;
};

/** Bodies up to this size are received into one buffer of their Content-Length. */
const MAX_SIZED = 64 * 1024 * 1024;

interface Target {
  secure: boolean;
  mod: typeof http | typeof https;
  protocol: string;
  hostname: string;
  port: string;
}

/** Parsed origins (a client talks to one or two): a URL is split at its path instead of parsed whole per call. */
const targets = new Map<string, Target>();

function targetOf(url: string): { target: Target; path: string } {
  const slash = url.indexOf('/', url.indexOf('://') + 3);
  const origin = slash < 0 ? url : url.slice(0, slash);
  let path = slash < 0 ? '/' : url.slice(slash);
  let target = targets.get(origin);
  if (!target) {
    const u = new URL(origin);
    const secure = u.protocol === 'https:';
    if (!secure && u.protocol !== 'http:') throw new TypeError(`unsupported protocol ${u.protocol}`);
    target = { secure, mod: secure ? https : http, protocol: u.protocol, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port };
    // Anything but scheme://host[:port] before the path (credentials, a query without a path): parsed whole.
    if (u.pathname !== '/' || u.search || u.hash || u.username || u.password || `${u.protocol}//${u.host}` !== origin) {
      return { target, path: fullPath(url) };
    }
    if (targets.size >= 64) targets.clear();
    targets.set(origin, target);
  }
  // A path the client built is already percent-encoded; anything else is normalised as the URL parser would.
  if (/[^\x21-\x7e]/.test(path)) path = fullPath(url);
  return { target, path };
}

function fullPath(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** A fetch-shaped function over node:http with its own keep-alive agents; `close()` frees their sockets. */
export function nodeFetch(): ((url: string, init: TransportInit) => Promise<HttpAnswer>) & { close(): void } {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const f = (url: string, init: TransportInit, retried = false): Promise<HttpAnswer> =>
    new Promise<HttpAnswer>((resolve, reject) => {
      let target: Target;
      let path: string;
      try {
        ({ target, path } = targetOf(url));
      } catch (err) {
        return reject(err);
      }
      const headers: Record<string, string | number> = { ...init.headers };
      if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = (err: Error | null, answer?: HttpAnswer) => {
        if (timer) clearTimeout(timer);
        if (!err) return resolve(answer!);
        // Same shape as fetch on abort: the caller tells timeouts apart by name.
        if (timedOut || init.signal?.aborted) {
          const reason = init.signal?.reason as Error | undefined;
          const e = new Error(timedOut ? `no answer within ${init.timeoutMs} ms` : (reason?.message ?? 'aborted'), { cause: err });
          e.name = timedOut || reason?.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError';
          return reject(e);
        }
        reject(err);
      };
      const req = target.mod.request(
        {
          protocol: target.protocol, hostname: target.hostname, port: target.port, path,
          method: init.method, headers, agent: target.secure ? agents.https : agents.http, signal: init.signal,
        },
        (res) => {
          // The body goes into one buffer of the announced length (no chunk list, no concatenating copy).
          const length = Number(res.headers['content-length']);
          const sized = Number.isSafeInteger(length) && length >= 0 && length <= MAX_SIZED ? Buffer.allocUnsafe(length) : null;
          let filled = 0;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => {
            // Never more than announced (node's parser holds to Content-Length); kept whole all the same if it were.
            if (sized && chunks.length === 0 && filled + c.length <= sized.length) {
              c.copy(sized, filled);
              filled += c.length;
            } else chunks.push(c);
          });
          res.on('error', (err) => settle(err));
          // Closed before its end (the deadline destroyed it, the server went away): an error, never a short body.
          res.on('close', () => {
            if (!res.complete) settle(new Error('the connection closed before the answer was complete'));
          });
          res.on('end', () => {
            const body = sized && filled === sized.length && chunks.length === 0 ? sized : Buffer.concat(sized ? [sized.subarray(0, filled), ...chunks] : chunks);
            settle(null, new BufferedAnswer(res.statusCode ?? 0, res.statusMessage ?? '', res.headers, body));
          });
        },
      );
      if (init.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          timedOut = true;
          req.destroy(new Error('timeout'));
        }, init.timeoutMs);
      }
      req.on('error', (err) => {
        // The server closed an idle kept-alive socket just as it was reused: the request never reached it,
        // so sending it once more on a fresh socket is safe (what browsers do too).
        if (!retried && !timedOut && req.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET' && !init.signal?.aborted) {
          if (timer) clearTimeout(timer);
          return resolve(f(url, init, true));
        }
        settle(err);
      });
      req.end(init.body);
    });
  return Object.assign(f, {
    close: () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}
