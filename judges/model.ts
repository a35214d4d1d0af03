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
  /** The body sent, images redacted: model, the sampling fields actually sent, extra fields, messages. */
  request: { model: string; temperature?: number; max_tokens?: number; max_completion_tokens?: number; extra?: Record<string, unknown>; messages: unknown[] };
  /** Raw reply text of the accepted attempt (or of the last failed one). */
  response?: string;
  /** Every attempt's raw reply or error, in order. */
  attempts: { response?: string; error?: string; latency_ms: number }[];
  cached: boolean;
  usage?: unknown;
  error?: string;
  /** The reply held no verdict (kept, not retried: the originals do not retry either). */
  unparsed?: boolean;
}

/** The request parameters a judge's original harness sends (used where the judge config leaves them unset). */
export interface OriginalParams {
  temperature?: number;
  maxTokens?: number;
}

export interface CallOptions<T> {
  /** What this call is for, e.g. "verdict", "key_points", "image 3". */
  purpose: string;
  messages: ChatMessage[];
  /** Extract the wanted value; null means the reply holds no verdict (returned as such, never retried). */
  parse: (text: string) => T | null;
  /** Where to append the call record. */
  transcript?: CallRecord[];
  /** The original harness's values of temperature / max tokens for this call. */
  params: OriginalParams;
  /** Extra body fields (e.g. the seed the WebVoyager evaluation fixes). */
  extra?: Record<string, unknown>;
}

/** The sampling fields of a request body: the config's value when set (null = leave the field out), else the original's. */
function requestParams(config: Pick<JudgeModelConfig, 'temperature' | 'maxTokens' | 'maxTokensField'>, original: OriginalParams): Record<string, number> {
  const temperature = config.temperature === undefined ? original.temperature : (config.temperature ?? undefined);
  const maxTokens = config.maxTokens === undefined ? original.maxTokens : (config.maxTokens ?? undefined);
  const out: Record<string, number> = {};
  if (temperature !== undefined) out.temperature = temperature;
  if (maxTokens !== undefined) out[config.maxTokensField] = maxTokens;
  return out;
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
        return { type: 'image_url', image: { mime: match[1], bytes: bytes.length, sha256: sha256(bytes), ...(p.image_url.detail ? { detail: p.image_url.detail } : {}) } };
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
    });
    this.sem = new Semaphore(this.config.concurrency);
    this.cache = opts.cache;
  }

  /** Identity of the model settings that change replies (part of every cache key). */
  identity(): Record<string, unknown> {
    const { baseURL, model, temperature, maxTokens, maxTokensField } = this.config;
    return { baseURL, model, temperature: temperature ?? null, max_tokens: maxTokens ?? null, max_tokens_field: maxTokensField };
  }

  /**
   * Send one request; retry (up to config.retries more times) when the call fails on the wire or times out.
   * A reply without a verdict is returned as `value: null` at once (the originals neither retry it).
   * Throws JudgeError (timeout | api_error) when every attempt failed.
   */
  async call<T>(opts: CallOptions<T>): Promise<{ value: T | null; text: string }> {
    const sampling = requestParams(this.config, opts.params);
    const extra = { ...sampling, ...(opts.extra ?? {}) };
    const record: CallRecord = {
      purpose: opts.purpose,
      request: { model: this.config.model, ...sampling, ...(opts.extra ? { extra: opts.extra } : {}), messages: redactImages(opts.messages) },
      attempts: [],
      cached: false,
    };
    opts.transcript?.push(record);
    const key = this.cache ? hashOf({ kind: 'call', ...this.identity(), body: extra, messages: opts.messages }) : '';
    const done = (text: string, cached: boolean) => {
      const value = opts.parse(text);
      record.response = text;
      record.cached = cached;
      if (value === null) record.unparsed = true;
      return { value, text };
    };
    if (this.cache) {
      const hit = (await this.cache.get(key)) as { text?: unknown } | undefined;
      if (hit && typeof hit.text === 'string') return done(hit.text, true);
    }
    let last: JudgeError | undefined;
    for (let attempt = 0; attempt <= this.config.retries; attempt++) {
      const t0 = performance.now();
      try {
        // temperature / max tokens travel as extra body fields: absent ones are not sent at all.
        const res = await this.sem.run(() => this.client.complete({ messages: opts.messages, extra }));
        record.attempts.push({ response: res.text, latency_ms: Math.round(performance.now() - t0) });
        record.usage = res.usage ?? undefined;
        delete record.error;
        if (this.cache) await this.cache.set(key, { text: res.text });
        return done(res.text, false);
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
