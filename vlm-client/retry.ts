// Retry policy of the clients, after openai-node's: which statuses are retried, the delay a server asks for,
// and an abortable sleep.
import { APIUserAbortError } from './errors.ts';

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

/** Resolves after `ms`, or rejects with APIUserAbortError when `signal` fires first. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
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
