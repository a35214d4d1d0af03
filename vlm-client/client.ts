// OpenAI-compatible chat-completions client for VLM policies and judges.
// Error family, retry policy (408/409/429/5xx, Retry-After, x-should-retry) and the injectable fetch follow
// openai/openai-node's conventions; the code here is our own. The wire types live in chat-types.ts, the errors in
// errors.ts, the retry policy in retry.ts and the answer decoding in chat-decode.ts; this module re-exports them,
// so callers import the client's whole surface from here.
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import type { ChatClientOptions, ChatRequest, ChatResult, ClientStats } from './chat-types.ts';
import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError } from './errors.ts';
import { delay, isRetryableStatus, retryAfterMs } from './retry.ts';
import { readJson, readStream } from './chat-decode.ts';

export * from './chat-types.ts';
export {
  APIError, BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, ConflictError,
  UnprocessableEntityError, RateLimitError, InternalServerError, APIConnectionError, APITimeoutError, APIUserAbortError,
} from './errors.ts';
export { retryAfterMs } from './retry.ts';

interface AttemptOutcome {
  result?: Omit<ChatResult, 'latency_ms' | 'attempts'>;
  error?: APIError;
  retryable?: boolean;
  retryAfter?: number;
}

export class ChatClient {
  readonly model: string;
  readonly baseURL: string;
  protected readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly fetchImpl: typeof fetch;
  protected readonly defaultHeaders: Record<string, string>;
  protected readonly log: Logger;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly totals: ClientStats = {
    calls: 0,
    succeeded: 0,
    failed: 0,
    attempts: 0,
    retries: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    latency_ms_total: 0,
    latency_ms_max: 0,
  };

  constructor(opts: ChatClientOptions) {
    if (!opts.baseURL) throw new TypeError('ChatClient: baseURL is required (e.g. http://127.0.0.1:8000/v1)');
    if (!opts.model) throw new TypeError('ChatClient: model is required');
    this.baseURL = opts.baseURL.replace(/\/+$/, '');
    this.model = opts.model;
    this.apiKey = opts.apiKey;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxRetries = Math.max(0, opts.maxRetries ?? 2);
    this.fetchImpl = opts.fetch ?? globalThis.fetch;
    this.defaultHeaders = opts.defaultHeaders ?? {};
    this.log = opts.log ?? silentLogger;
    this.retryBaseDelayMs = opts.retryBaseDelayMs ?? 500;
    this.retryMaxDelayMs = opts.retryMaxDelayMs ?? 8_000;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
  }

  /** Cumulative accounting over every `complete` call of this client. */
  stats(): ClientStats {
    return { ...this.totals };
  }

  async complete(req: ChatRequest): Promise<ChatResult> {
    const started = performance.now();
    this.totals.calls++;
    const body = this.buildBody(req);
    let attempts = 0;
    try {
      for (;;) {
        attempts++;
        this.totals.attempts++;
        const out = await this.attempt(body, req);
        if (out.result) {
          const latency = performance.now() - started;
          const res: ChatResult = { ...out.result, latency_ms: Math.round(latency), attempts };
          this.account(res);
          return res;
        }
        const err = out.error as APIError;
        const retriesLeft = this.maxRetries - (attempts - 1);
        if (!out.retryable || retriesLeft <= 0) throw err;
        const wait = this.backoffMs(attempts - 1, out.retryAfter);
        this.totals.retries++;
        this.log.warn(
          { attempt: attempts, status: err.status, wait_ms: Math.round(wait), error: err.message },
          'chat completion failed; retrying',
        );
        await delay(wait, req.signal);
      }
    } catch (e) {
      this.totals.failed++;
      const latency = performance.now() - started;
      this.totals.latency_ms_total += latency;
      throw e;
    }
  }

  private account(res: ChatResult): void {
    this.totals.succeeded++;
    this.totals.latency_ms_total += res.latency_ms;
    this.totals.latency_ms_max = Math.max(this.totals.latency_ms_max, res.latency_ms);
    if (res.usage) {
      this.totals.prompt_tokens += res.usage.prompt_tokens;
      this.totals.completion_tokens += res.usage.completion_tokens;
      this.totals.total_tokens += res.usage.total_tokens;
    }
  }

  /** Backoff for retry number `retry` (0-based); a server delay within the cap wins. */
  private backoffMs(retry: number, serverMs: number | undefined): number {
    if (serverMs !== undefined && serverMs <= this.maxRetryAfterMs) return serverMs;
    const base = Math.min(this.retryBaseDelayMs * 2 ** retry, this.retryMaxDelayMs);
    // Jitter spreads retries of parallel episodes that failed together.
    return base * (1 - Math.random() * 0.25);
  }

  /** Path of the API call under baseURL; other APIs (Anthropic Messages, OpenAI Responses) override it. */
  protected endpoint(): string {
    return '/chat/completions';
  }

  protected buildBody(req: ChatRequest): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.model, messages: req.messages };
    if (req.tools?.length) body.tools = req.tools;
    if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
    if (req.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return { ...body, ...(req.extra ?? {}) };
  }

  protected headers(): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.apiKey) h.authorization = `Bearer ${this.apiKey}`;
    return { ...h, ...this.defaultHeaders };
  }

  /** Reads a successful answer into a ChatResult (chat completions: JSON or an SSE stream). */
  protected async decode(res: Response, headers: Record<string, string>, body: Record<string, unknown>): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
    const ctype = headers['content-type'] ?? '';
    if (body.stream && ctype.includes('text/event-stream')) return readStream(res, headers);
    return readJson(res, headers);
  }

  private async attempt(body: Record<string, unknown>, req: ChatRequest): Promise<AttemptOutcome> {
    if (req.signal?.aborted) throw new APIUserAbortError();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onUserAbort = () => controller.abort();
    req.signal?.addEventListener('abort', onUserAbort, { once: true });
    const classifyThrown = (e: unknown): AttemptOutcome => {
      if (e instanceof APIError && !(e instanceof APIConnectionError)) throw e;
      if (req.signal?.aborted) throw new APIUserAbortError();
      if (timedOut) {
        return { error: new APITimeoutError(`Request timed out after ${this.timeoutMs} ms.`, { cause: e }), retryable: true };
      }
      if (e instanceof APIConnectionError) return { error: e, retryable: true };
      const msg = e instanceof Error ? e.message : String(e);
      return { error: new APIConnectionError(`Connection error: ${msg}`, { cause: e }), retryable: true };
    };
    try {
      let res: Response;
      try {
        res = await this.fetchImpl(`${this.baseURL}${this.endpoint()}`, {
          method: 'POST',
          headers: this.headers(),
          body: JSON.stringify(body),
          signal: controller.signal,
        });
      } catch (e) {
        return classifyThrown(e);
      }
      const headers = headersToRecord(res.headers);
      if (!res.ok) {
        let text = '';
        try {
          text = await res.text();
        } catch (e) {
          return classifyThrown(e);
        }
        let parsed: unknown = text || undefined;
        try {
          if (text) parsed = JSON.parse(text);
        } catch {
          // keep the raw text as body
        }
        const err = APIError.fromResponse(res.status, parsed, headers);
        const should = headers['x-should-retry'];
        const retryable = should === 'true' ? true : should === 'false' ? false : isRetryableStatus(res.status);
        return { error: err, retryable, retryAfter: retryAfterMs(headers) };
      }
      try {
        return { result: await this.decode(res, headers, body) };
      } catch (e) {
        return classifyThrown(e);
      }
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onUserAbort);
    }
  }
}

function headersToRecord(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k.toLowerCase()] = v;
  });
  return out;
}
