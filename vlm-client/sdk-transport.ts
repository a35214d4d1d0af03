// What the clients share around the official SDKs (`openai`, `@anthropic-ai/sdk`), which do the HTTP: requests,
// per-attempt timeouts, retries (408/409/429/5xx, x-should-retry, retry-after-ms / Retry-After, backoff with
// jitter) and SSE. Kept here: the count of attempts of one call (the SDKs retry inside one promise; a fetch wrapper
// counts them, per call through AsyncLocalStorage), the raw body of an error answer (vLLM/SGLang put their error
// at the top level, which the SDKs' error classes drop), and the mapping of either SDK's errors onto Grove's one
// error family (errors.ts), so callers catch the same classes whichever API a model speaks.
import { AsyncLocalStorage } from 'node:async_hooks';
import Anthropic, { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import OpenAI, { APIError as OpenAIAPIError } from 'openai';
import type { Logger } from '../sandbox/log.ts';
import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError, truncate } from './errors.ts';

/** What one `complete()` call saw of its HTTP attempts. */
export interface CallTrace {
  attempts: number;
  /** Text of the last error answer (for the error's body and message). */
  errorText?: string;
}

const calls = new AsyncLocalStorage<CallTrace>();

/** Runs one call, tracing its attempts (the SDK's retries included). */
export function traced<T>(trace: CallTrace, fn: () => Promise<T>): Promise<T> {
  return calls.run(trace, fn);
}

/**
 * The fetch handed to an SDK: the caller's (or the global one), counting attempts and keeping error bodies. A wait
 * the server asks for beyond `maxRetryAfterMs` is dropped from the answer, so the SDK backs off on its own instead:
 * openai 6.x honours any Retry-After (an hour, if a gateway says so), which would stall an episode that long.
 */
export function tracingFetch(inner: typeof fetch, log: Logger, api: string, maxRetryAfterMs: number): typeof fetch {
  return async (input, init) => {
    const trace = calls.getStore();
    if (trace) {
      trace.attempts++;
      if (trace.attempts > 1) log.warn({ api, attempt: trace.attempts }, 'model API call failed; retrying');
    }
    const res = await inner(input, init);
    if (res.ok) return res;
    if (trace) trace.errorText = await res.clone().text().catch(() => undefined);
    const asked = askedWaitMs(res.headers);
    if (asked === undefined || asked <= maxRetryAfterMs) return res;
    const headers = new Headers(res.headers);
    headers.delete('retry-after');
    headers.delete('retry-after-ms');
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  };
}

/** The wait a server asks for, in ms (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date). */
function askedWaitMs(h: Headers): number | undefined {
  const ms = Number.parseFloat(h.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms)) return ms;
  const ra = h.get('retry-after');
  if (!ra) return undefined;
  const secs = Number.parseFloat(ra);
  if (Number.isFinite(secs)) return secs * 1000;
  const at = Date.parse(ra);
  return Number.isFinite(at) ? at - Date.now() : undefined;
}

/** Headers as a plain lower-case record. */
export function headerRecord(h: Headers | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  h?.forEach((v, k) => {
    out[k.toLowerCase()] = v;
  });
  return out;
}

type SdkError = OpenAIAPIError | AnthropicAPIError;

/** Either SDK's error (or a body that is no JSON) as Grove's error family; anything else passes through. */
export function toGroveError(e: unknown, trace: CallTrace, api: string): unknown {
  if (e instanceof APIError) return e;
  if (e instanceof OpenAI.APIUserAbortError || e instanceof Anthropic.APIUserAbortError) return new APIUserAbortError();
  if (e instanceof OpenAI.APIConnectionTimeoutError || e instanceof Anthropic.APIConnectionTimeoutError) {
    return new APITimeoutError('Request timed out.', { cause: e });
  }
  if (e instanceof OpenAI.APIConnectionError || e instanceof Anthropic.APIConnectionError) {
    const cause = (e as { cause?: unknown }).cause;
    return new APIConnectionError(`Connection error: ${cause instanceof Error ? cause.message : e.message}`, { cause: e });
  }
  if (e instanceof OpenAI.APIError || e instanceof Anthropic.APIError) {
    const err = e as SdkError;
    const headers = headerRecord(err.headers as Headers | undefined);
    if (err.status === undefined) return new APIError(undefined, { error: err.error }, undefined, headers, { cause: e });
    return APIError.fromResponse(err.status, errorBody(trace.errorText, err), headers);
  }
  if (e instanceof SyntaxError) return new APIError(undefined, undefined, `Malformed JSON in the ${api} response: ${e.message}`, undefined, { cause: e });
  return e;
}

/** The error answer as the server sent it: its JSON, or its text; the SDK's parsed error when no text was kept. */
function errorBody(text: string | undefined, e: SdkError): unknown {
  if (text === undefined || text === '') return e.error === undefined ? undefined : { error: e.error };
  try {
    return JSON.parse(text);
  } catch {
    return truncate(text, 2000);
  }
}
