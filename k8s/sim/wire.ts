// The simulated API server's wire pieces: v1 Status failures as the real server answers them (thrown as a
// StatusError, turned into the Status body by the server's one error handler), timestamps at the API's one-second
// precision, and the contract the resource handlers (pods, leases) answer through.

export type Obj = Record<string, any>;

/** A handler's answer: the HTTP status and the object the server sends (validated against the schema on the way). */
export interface Answer {
  code: number;
  body: Obj;
}

/** What a resource handler needs of the server around it. */
export interface SimWire {
  /** Counts a request by "VERB kind". */
  note(key: string): void;
  /** Validates an object the server stores or sends, collecting violations. */
  check(obj: Obj, what: string): void;
  /** Advances the server's resourceVersion and returns it. */
  nextRv(): string;
  /** The server's current resourceVersion (for lists). */
  currentRv(): string;
}

/** A v1 Status failure, as the real server sends with every error code. */
export function failure(code: number, reason: string, message: string, details?: Obj): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** A failure a handler throws; the server answers it as a v1 Status (with `headers`, e.g. Retry-After). */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Obj,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get body(): Obj {
    return failure(this.code, this.reason, this.message, this.details);
  }
}

/** The Status reason the real server gives for a code (what a failure without its own reason reads as). */
export function reasonOf(code: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict',
    410: 'Expired', 413: 'RequestEntityTooLarge', 415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests',
  };
  return reasons[code] ?? 'InternalError';
}

/** An RFC 3339 time without fractional seconds, as Kubernetes writes its timestamps. */
export function k8sTime(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}
