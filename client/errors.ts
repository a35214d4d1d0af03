// The client's errors: GroveApiError carries the server's stable error code (protocol/errors.ts), its HTTP status,
// Retry-After and details.
import { ERROR_CATALOG } from '../protocol/errors.ts';

export class GroveApiError extends Error {
  /** HTTP status (0 when the request never got an answer). */
  readonly status: number;
  /** Server error code (protocol/errors.ts), or `network_error` / `bad_response` / creation error codes. */
  readonly code: string;
  /** Seconds, from a 503's Retry-After header. */
  readonly retryAfter?: number;
  /**
   * The server's `error.details`. For 503 capture_timeout of a step: `executed` (its actions ran), `actions` (what
   * they did, as a step result's), `done`, `answer`, `step`, `url`. Observe again after retryAfter; never resend.
   */
  readonly details?: Record<string, unknown>;
  constructor(status: number, code: string, message: string, opts: { retryAfter?: number; cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'GroveApiError';
    this.status = status;
    this.code = code;
    this.retryAfter = opts.retryAfter;
    this.details = opts.details;
  }
}

/** The answer of a step or observation that asked for a screenshot carries one: else it raises capture_timeout. */
export function withScreenshot<T extends { screenshot?: unknown }>(o: T, wanted: boolean, what: string): T {
  if (wanted && !o.screenshot) throw new GroveApiError(503, 'capture_timeout', `${what}: the answer has no screenshot`, { details: { executed: what.includes('/step') } });
  return o;
}

/** The HTTP status of a creation error's code as the server's catalog has it (500 for a code it does not know). */
export function creationErrorStatus(code: string): number {
  return (ERROR_CATALOG as Record<string, { status: number } | undefined>)[code]?.status ?? 500;
}
