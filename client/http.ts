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

/** A fetch-shaped function over node:http with its own keep-alive agents; `close()` frees their sockets. */
export function nodeFetch(): FetchLike & { close(): void } {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const f = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }, retried = false): Promise<HttpAnswer> =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const u = new URL(url);
      const secure = u.protocol === 'https:';
      if (!secure && u.protocol !== 'http:') return reject(new TypeError(`unsupported protocol ${u.protocol}`));
      const headers: Record<string, string | number> = { ...init.headers };
      if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
      const req = (secure ? https : http).request(
        u,
        { method: init.method, headers, agent: secure ? agents.https : agents.http, signal: init.signal },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => resolve(new BufferedAnswer(res.statusCode ?? 0, res.statusMessage ?? '', res.headers, Buffer.concat(chunks))));
        },
      );
      req.on('error', (err) => {
        // The server closed an idle kept-alive socket just as it was reused: the request never reached it,
        // so sending it once more on a fresh socket is safe (what browsers do too).
        if (!retried && req.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET' && !init.signal?.aborted) {
          return resolve(f(url, init, true));
        }
        // Same shape as fetch on abort: the caller tells timeouts apart by name.
        if (init.signal?.aborted) {
          const reason = init.signal.reason as Error | undefined;
          const e = new Error(reason?.message ?? 'aborted', { cause: err });
          e.name = reason?.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError';
          return reject(e);
        }
        reject(err);
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
