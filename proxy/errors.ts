// The recording proxy's own error codes and their statuses. Its errors use the OpenAI error shape
// (`{"error": {"message", "type", "code"}}`, type = code) so a harness's SDK reports them; an upstream's own error
// answers pass through unchanged. Every code the proxy answers is here (the proxy fuzzer checks it).
import type http from 'node:http';

export const PROXY_ERRORS = {
  /** The call names no rollout (keys off: no /r/<id>/v1 path, x-grove-rollout header or key). */
  rollout_required: 400,
  /** The rollout id is not letters, digits, `.`, `_`, `-` (at most 128). */
  invalid_rollout: 400,
  /** A percent-encoding in the path that does not decode (e.g. `%ZZ`), or a path that leaves the API prefix. */
  invalid_path: 400,
  /** Keys required and the call carries no per-rollout key, or keys off and the named rollout has one. */
  rollout_key_required: 401,
  /** A `gk-…` key this proxy did not issue. */
  invalid_rollout_key: 401,
  /** A per-rollout key used for another rollout (by path or header), or keys of two rollouts at once. */
  rollout_key_mismatch: 403,
  /** Admin routes: missing or wrong admin key; no admin key configured. */
  unauthorized: 401,
  admin_disabled: 403,
  invalid_json: 400,
  /** A request the HTTP layer could not read (e.g. a bad Content-Length). */
  invalid_request: 400,
  invalid_reward: 400,
  not_found: 404,
  body_too_large: 413,
  /** The upstream could not be reached / did not answer within the call's deadline. */
  upstream_unreachable: 502,
  upstream_timeout: 504,
  /** A failure of the proxy itself (a bug): the call was not recorded. */
  proxy_error: 500,
} as const;

export type ProxyErrorCode = keyof typeof PROXY_ERRORS;

/** Answers one of the proxy's own errors (a started answer can only be cut). */
export function proxyError(res: http.ServerResponse, code: ProxyErrorCode, message: string): void {
  sendError(res, PROXY_ERRORS[code], code, message);
}

export function sendError(res: http.ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, code: type } }));
}
