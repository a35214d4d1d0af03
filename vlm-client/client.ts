// OpenAI-compatible chat-completions client for VLM policies and judges.
// Error family, retry policy (408/409/429/5xx, Retry-After, x-should-retry) and the injectable fetch follow
// openai/openai-node's conventions; the code here is our own.
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';

// ---------------------------------------------------------------------------------------------------------
// Wire types (the subset of the chat-completions API we use)

export type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };
export type ContentPart = TextPart | ImagePart;

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string | ContentPart[] }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface ToolDef {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it (may be invalid JSON: formats report that). */
  arguments: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatResult {
  text: string;
  tool_calls: ToolCall[];
  finish_reason: string | null;
  usage: Usage | null;
  /** Wall time of the whole call, retries and backoff included. */
  latency_ms: number;
  /** HTTP attempts made (1 = no retry). */
  attempts: number;
  /** Reasoning text some servers return apart (vLLM/DeepSeek `reasoning_content`), if any. */
  reasoning?: string;
  /** Parsed response body (non-streaming) or the list of stream chunks. */
  raw: unknown;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDef[];
  tool_choice?: unknown;
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  signal?: AbortSignal;
  /** Extra body fields merged last (top_p, seed, stop, response_format, vendor options...). */
  extra?: Record<string, unknown>;
  /**
   * The computer the model drives, for APIs with a built-in computer-use tool (Anthropic Messages, OpenAI
   * Responses): the display size the tool declares, which is the size of the screenshots sent.
   */
  computer?: { width: number; height: number };
  /** Conversation state of a stateful API (OpenAI Responses' previous_response_id): one object per episode. */
  state?: Record<string, unknown>;
}

export interface ChatClientOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  /** Per-attempt timeout (default 60 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  fetch?: typeof fetch;
  defaultHeaders?: Record<string, string>;
  log?: Logger;
  /** Backoff base delay (default 500 ms): delay = min(base * 2^retry, max) reduced by up to 25% jitter. */
  retryBaseDelayMs?: number;
  /** Cap for computed backoff (default 8 s). */
  retryMaxDelayMs?: number;
  /** Cap for server-requested Retry-After delays (default 60 s); larger values fall back to backoff. */
  maxRetryAfterMs?: number;
}

export interface ClientStats {
  calls: number;
  succeeded: number;
  failed: number;
  attempts: number;
  retries: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Sum of per-call latencies. */
  latency_ms_total: number;
  latency_ms_max: number;
}

// ---------------------------------------------------------------------------------------------------------
// Errors (openai-node style)

export class APIError extends Error {
  readonly status: number | undefined;
  readonly code: string | null;
  readonly type: string | null;
  readonly param: string | null;
  readonly body: unknown;
  readonly headers: Record<string, string> | undefined;
  constructor(
    status: number | undefined,
    body: unknown,
    message: string | undefined,
    headers?: Record<string, string>,
    opts: { cause?: unknown } = {},
  ) {
    super(APIError.makeMessage(status, body, message), { cause: opts.cause });
    this.name = new.target.name;
    this.status = status;
    this.body = body;
    this.headers = headers;
    const err = errorObject(body);
    this.code = typeof err?.code === 'string' || typeof err?.code === 'number' ? String(err.code) : null;
    this.type = typeof err?.type === 'string' ? err.type : null;
    this.param = typeof err?.param === 'string' ? err.param : null;
  }

  private static makeMessage(status: number | undefined, body: unknown, message: string | undefined): string {
    const err = errorObject(body);
    const detail =
      typeof err?.message === 'string'
        ? err.message
        : body !== undefined && body !== null
          ? truncate(typeof body === 'string' ? body : JSON.stringify(body), 300)
          : message;
    if (status && detail) return `${status} ${detail}`;
    if (status) return `${status} status code (no body)`;
    return detail ?? message ?? 'API error';
  }

  static fromResponse(status: number, body: unknown, headers: Record<string, string>): APIError {
    const Ctor = errorClassForStatus(status);
    return new Ctor(status, body, undefined, headers);
  }
}

export class BadRequestError extends APIError {}
export class AuthenticationError extends APIError {}
export class PermissionDeniedError extends APIError {}
export class NotFoundError extends APIError {}
export class ConflictError extends APIError {}
export class UnprocessableEntityError extends APIError {}
export class RateLimitError extends APIError {}
export class InternalServerError extends APIError {}

/** The server could not be reached or the connection broke (no HTTP status). */
export class APIConnectionError extends APIError {
  constructor(message = 'Connection error.', opts: { cause?: unknown } = {}) {
    super(undefined, undefined, message, undefined, opts);
  }
}
/** An attempt exceeded `timeoutMs`. */
export class APITimeoutError extends APIConnectionError {
  constructor(message = 'Request timed out.', opts: { cause?: unknown } = {}) {
    super(message, opts);
  }
}
/** The caller's AbortSignal fired; never retried. */
export class APIUserAbortError extends APIError {
  constructor(message = 'Request was aborted.') {
    super(undefined, undefined, message);
  }
}

function errorClassForStatus(status: number): new (...a: ConstructorParameters<typeof APIError>) => APIError {
  if (status === 400) return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 422) return UnprocessableEntityError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return InternalServerError;
  return APIError;
}

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const e = (body as Record<string, unknown>).error;
  if (e && typeof e === 'object') return e as Record<string, unknown>;
  // Some servers (vLLM, TGI) put message/code at the top level.
  return body as Record<string, unknown>;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** An image content part carrying the bytes as a data URL (the form every OpenAI-compatible VLM server accepts). */
export function imageContent(bytes: Buffer, mime: string, detail?: 'auto' | 'low' | 'high'): ImagePart {
  return imageContentFromBase64(bytes.toString('base64'), mime, detail);
}

export function imageContentFromBase64(base64: string, mime: string, detail?: 'auto' | 'low' | 'high'): ImagePart {
  const part: ImagePart = { type: 'image_url', image_url: { url: `data:${mime};base64,${base64}` } };
  if (detail) part.image_url.detail = detail;
  return part;
}

export function textContent(text: string): TextPart {
  return { type: 'text', text };
}

/** Status codes worth retrying (openai-node's set). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Delay requested by the server, in ms, or undefined. `retry-after-ms` (OpenAI extension) wins over
 * `Retry-After`, which may be seconds (possibly fractional) or an HTTP date.
 */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined) {
    const v = Number.parseFloat(ms);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  const ra = headers['retry-after'];
  if (ra !== undefined && ra.trim() !== '') {
    const secs = Number(ra);
    if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
    const date = Date.parse(ra);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

function headersToRecord(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k.toLowerCase()] = v;
  });
  return out;
}

/** Resolves after `ms`, or rejects with APIUserAbortError when `signal` fires first. */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new APIUserAbortError());
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError());
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Client

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

// ---------------------------------------------------------------------------------------------------------
// Response decoding

function parseToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((tc: any, i: number) => ({
    id: typeof tc?.id === 'string' ? tc.id : `call_${i}`,
    name: String(tc?.function?.name ?? ''),
    arguments:
      typeof tc?.function?.arguments === 'string'
        ? tc.function.arguments
        : JSON.stringify(tc?.function?.arguments ?? {}),
  }));
}

function parseUsage(u: any): Usage | null {
  if (!u || typeof u !== 'object') return null;
  const p = Number(u.prompt_tokens ?? 0);
  const c = Number(u.completion_tokens ?? 0);
  const t = Number(u.total_tokens ?? p + c);
  return { prompt_tokens: p, completion_tokens: c, total_tokens: t };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  // Some servers answer with content parts.
  if (Array.isArray(content)) {
    return content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

async function readJson(res: Response, headers: Record<string, string>): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new APIError(
      res.status,
      undefined,
      `Malformed JSON in the chat-completions response (${text.length} bytes, starts ${JSON.stringify(truncate(text, 80))}): ${(e as Error).message}`,
      headers,
      { cause: e },
    );
  }
  if (body && typeof body === 'object' && body.error) {
    // Some gateways answer 200 with an error object.
    throw new APIError(res.status, body, undefined, headers);
  }
  const choice = body?.choices?.[0];
  if (!choice || typeof choice !== 'object') {
    throw new APIError(res.status, undefined, `The chat-completions response has no choices: ${truncate(text, 200)}`, headers);
  }
  const msg = choice.message ?? {};
  const out: Omit<ChatResult, 'latency_ms' | 'attempts'> = {
    text: contentText(msg.content),
    tool_calls: parseToolCalls(msg.tool_calls),
    finish_reason: choice.finish_reason ?? null,
    usage: parseUsage(body.usage),
    raw: body,
  };
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning) out.reasoning = reasoning;
  return out;
}

/** Reads an SSE chat-completions stream, accumulating content and tool-call argument deltas by index. */
async function readStream(res: Response, headers: Record<string, string>): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
  if (!res.body) throw new APIError(res.status, undefined, 'Streaming response has no body', headers);
  const decoder = new TextDecoder();
  const chunks: unknown[] = [];
  let text = '';
  let reasoning = '';
  let finish: string | null = null;
  let usage: Usage | null = null;
  let done = false;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  let buf = '';

  const handleEvent = (event: string) => {
    let data = '';
    let eventName = '';
    for (const line of event.split(/\r?\n/)) {
      if (line.startsWith(':')) continue; // comment / keep-alive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data += (data ? '\n' : '') + value;
      else if (field === 'event') eventName = value;
    }
    if (!data) return;
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let obj: any;
    try {
      obj = JSON.parse(data);
    } catch (e) {
      throw new APIError(res.status, undefined, `Malformed JSON in a stream event: ${truncate(data, 120)}`, headers, { cause: e });
    }
    if (eventName === 'error' || obj?.error) throw new APIError(res.status, obj, undefined, headers);
    chunks.push(obj);
    if (obj.usage) usage = parseUsage(obj.usage);
    for (const choice of obj.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const d = choice.delta ?? {};
      if (typeof d.content === 'string') text += d.content;
      const r = d.reasoning_content ?? d.reasoning;
      if (typeof r === 'string') reasoning += r;
      for (const tc of d.tool_calls ?? []) {
        const idx = typeof tc.index === 'number' ? tc.index : calls.size;
        const cur = calls.get(idx) ?? { id: '', name: '', arguments: '' };
        if (tc.id) cur.id = tc.id;
        if (tc.function?.name) cur.name += tc.function.name;
        if (typeof tc.function?.arguments === 'string') cur.arguments += tc.function.arguments;
        calls.set(idx, cur);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  };

  const reader = res.body.getReader();
  try {
    while (!done) {
      const { value, done: eof } = await reader.read();
      if (eof) break;
      buf += decoder.decode(value, { stream: true });
      let m: RegExpExecArray | null;
      const sep = /\r?\n\r?\n/g;
      let last = 0;
      while ((m = sep.exec(buf))) {
        handleEvent(buf.slice(last, m.index));
        last = m.index + m[0].length;
        if (done) break;
      }
      buf = buf.slice(last);
    }
    buf += decoder.decode();
    if (!done && buf.trim()) handleEvent(buf);
  } finally {
    await reader.cancel().catch(() => {});
  }
  const tool_calls = [...calls.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([i, c]) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments }));
  const out: Omit<ChatResult, 'latency_ms' | 'attempts'> = { text, tool_calls, finish_reason: finish, usage, raw: chunks };
  if (reasoning) out.reasoning = reasoning;
  return out;
}
