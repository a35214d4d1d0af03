// The client error family in openai/openai-node's shape (our own code): one class per HTTP status family, the
// connection, timeout and user-abort errors that carry no status, and the message built from the error body.

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

/** The first `n` characters of `s`, with an ellipsis when cut. */
export function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
