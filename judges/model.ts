// The judge's model endpoint: a ChatClient (vlm-client) with its own concurrency limit, judge-level retries,
// a timeout, a cache of usable replies, and a transcript of every call for the judge record.
import { APITimeoutError, ChatClient, type ChatMessage, type ContentPart } from '../vlm-client/client.ts';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import { hashOf, sha256, type JudgeCache } from './cache.ts';
import { JudgeError, JudgeModelConfig, type JudgeModelConfigInput } from './types.ts';

/** One model call as recorded beside the episode (images replaced by their hash and size). */
export interface CallRecord {
  purpose: string;
  request: { model: string; temperature: number; max_tokens: number; extra?: Record<string, unknown>; messages: unknown[] };
  /** Raw reply text of the accepted attempt (or of the last failed one). */
  response?: string;
  /** Every attempt's raw reply or error, in order. */
  attempts: { response?: string; error?: string; latency_ms: number }[];
  cached: boolean;
  usage?: unknown;
  error?: string;
}

export interface CallOptions<T> {
  /** What this call is for, e.g. "verdict", "key_points", "image 3". */
  purpose: string;
  messages: ChatMessage[];
  /** Extract the wanted value; null means the reply has no usable verdict (retried, then missing_verdict). */
  parse: (text: string) => T | null;
  /** Where to append the call record. */
  transcript?: CallRecord[];
  /** Overrides config.maxTokens for this call (WebJudge's key-point and image stages allow 2048). */
  maxTokens?: number;
  /** Extra body fields (e.g. the seed the WebVoyager evaluation fixes). */
  extra?: Record<string, unknown>;
}

class Semaphore {
  private active = 0;
  private readonly waiters: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((ok) => this.waiters.push(ok));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiters.shift()?.();
    }
  }
}

/** Replace data-URL images by {sha256, bytes, mime} so records stay small and comparable. */
export function redactImages(messages: ChatMessage[]): unknown[] {
  return messages.map((m) => {
    if (!Array.isArray(m.content)) return m;
    return {
      ...m,
      content: (m.content as ContentPart[]).map((p) => {
        if (p.type !== 'image_url') return p;
        const match = /^data:([^;]+);base64,(.*)$/s.exec(p.image_url.url);
        if (!match) return p;
        const bytes = Buffer.from(match[2], 'base64');
        return { type: 'image_url', image: { mime: match[1], bytes: bytes.length, sha256: sha256(bytes) } };
      }),
    };
  });
}

export class JudgeModel {
  readonly config: JudgeModelConfig;
  private readonly client: ChatClient;
  private readonly sem: Semaphore;
  private readonly cache?: JudgeCache;
  private readonly log: Logger;

  constructor(config: JudgeModelConfigInput, opts: { cache?: JudgeCache; fetch?: typeof fetch; log?: Logger } = {}) {
    this.config = JudgeModelConfig.parse(config);
    this.log = opts.log ?? silentLogger;
    this.client = new ChatClient({
      baseURL: this.config.baseURL,
      apiKey: this.config.apiKey,
      model: this.config.model,
      timeoutMs: this.config.timeoutMs,
      maxRetries: this.config.httpRetries,
      fetch: opts.fetch,
      log: this.log,
      retryBaseDelayMs: 200,
    });
    this.sem = new Semaphore(this.config.concurrency);
    this.cache = opts.cache;
  }

  /** Identity of the model settings that change replies (part of every cache key). */
  identity(): Record<string, unknown> {
    return { baseURL: this.config.baseURL, model: this.config.model, temperature: this.config.temperature, max_tokens: this.config.maxTokens };
  }

  /**
   * Send one request; retry (up to config.retries more times) when the call fails or the reply has no verdict.
   * Throws JudgeError (timeout | api_error | missing_verdict) when every attempt failed.
   */
  async call<T>(opts: CallOptions<T>): Promise<{ value: T; text: string }> {
    const { model, temperature } = this.config;
    const maxTokens = opts.maxTokens ?? this.config.maxTokens;
    const record: CallRecord = {
      purpose: opts.purpose,
      request: { model, temperature, max_tokens: maxTokens, ...(opts.extra ? { extra: opts.extra } : {}), messages: redactImages(opts.messages) },
      attempts: [],
      cached: false,
    };
    opts.transcript?.push(record);
    const key = this.cache
      ? hashOf({ kind: 'call', ...this.identity(), max_tokens: maxTokens, extra: opts.extra ?? null, messages: opts.messages })
      : '';
    if (this.cache) {
      const hit = (await this.cache.get(key)) as { text?: unknown } | undefined;
      if (hit && typeof hit.text === 'string') {
        const value = opts.parse(hit.text);
        if (value !== null) {
          record.cached = true;
          record.response = hit.text;
          return { value, text: hit.text };
        }
      }
    }
    let last: JudgeError | undefined;
    for (let attempt = 0; attempt <= this.config.retries; attempt++) {
      const t0 = performance.now();
      try {
        const res = await this.sem.run(() =>
          this.client.complete({ messages: opts.messages, temperature, max_tokens: maxTokens, extra: opts.extra }),
        );
        record.attempts.push({ response: res.text, latency_ms: Math.round(performance.now() - t0) });
        record.response = res.text;
        record.usage = res.usage ?? undefined;
        const value = opts.parse(res.text);
        if (value !== null) {
          if (this.cache) await this.cache.set(key, { text: res.text });
          delete record.error;
          return { value, text: res.text };
        }
        last = new JudgeError('missing_verdict', `${opts.purpose}: the reply holds no verdict`, { raw: res.text });
      } catch (err) {
        const kind = err instanceof APITimeoutError ? 'timeout' : 'api_error';
        const msg = err instanceof Error ? err.message : String(err);
        record.attempts.push({ error: `${kind}: ${msg}`, latency_ms: Math.round(performance.now() - t0) });
        last = new JudgeError(kind, `${opts.purpose}: ${msg}`, { cause: err });
      }
      record.error = last.message;
      this.log.warn({ purpose: opts.purpose, attempt, kind: last.kind }, 'judge call failed');
    }
    throw last ?? new JudgeError('api_error', `${opts.purpose}: no attempt made`);
  }
}
