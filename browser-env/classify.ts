// Classifies navigation failures into the action error codes of protocol/errors.ts. Pure: unit-tested.
import type { ActionErrorCode } from '../protocol/errors.ts';

export interface ClassifiedError {
  code: ActionErrorCode;
  message: string;
}

/** Codes the network gate puts in `x-grove-error` for upstream failures. */
const GATE_CODES = new Set<ActionErrorCode>(['dns_error', 'connection_refused', 'connection_reset', 'timeout', 'tls_error']);

/** Maps a Playwright/Chromium error message (net::ERR_*) to a code. */
export function classifyNavError(message: string): ActionErrorCode {
  const m = /net::(ERR_[A-Z0-9_]+)/.exec(message);
  const err = m?.[1] ?? '';
  if (err) {
    if (err === 'ERR_NAME_NOT_RESOLVED' || err === 'ERR_NAME_RESOLUTION_FAILED' || err === 'ERR_ADDRESS_UNREACHABLE') {
      return 'dns_error';
    }
    if (err === 'ERR_CONNECTION_REFUSED') return 'connection_refused';
    if (err === 'ERR_CONNECTION_RESET' || err === 'ERR_CONNECTION_CLOSED' || err === 'ERR_EMPTY_RESPONSE' || err === 'ERR_CONNECTION_ABORTED') {
      return 'connection_reset';
    }
    if (err.startsWith('ERR_CERT_') || err.startsWith('ERR_SSL_') || err === 'ERR_BAD_SSL_CLIENT_AUTH_CERT') return 'tls_error';
    if (err === 'ERR_TIMED_OUT' || err === 'ERR_CONNECTION_TIMED_OUT') return 'timeout';
    if (err === 'ERR_BLOCKED_BY_CLIENT' || err === 'ERR_BLOCKED_BY_ADMINISTRATOR') return 'network_blocked';
    if (err === 'ERR_ABORTED') return 'navigation_failed';
    return 'navigation_failed';
  }
  if (/Timeout \d+ms exceeded|timed out/i.test(message)) return 'timeout';
  return 'navigation_failed';
}

/** Classifies a navigation response (status + gate headers); null when it is a success. */
export function classifyResponse(status: number, headers: Record<string, string>, url: string): ClassifiedError | null {
  const blocked = headers['x-grove-blocked'];
  if (blocked !== undefined) return { code: 'network_blocked', message: `network policy blocked ${url}: ${blocked}` };
  const gateErr = headers['x-grove-error'] as ActionErrorCode | undefined;
  if (gateErr !== undefined && GATE_CODES.has(gateErr)) return { code: gateErr, message: `${gateErr} for ${url} (HTTP ${status} from the network gate)` };
  if (status >= 400) return { code: 'http_error', message: `HTTP ${status} for ${url}` };
  return null;
}

/** Whether a start-URL failure is worth retrying (transient network conditions, 5xx). */
export function isRetryable(e: ClassifiedError): boolean {
  if (e.code === 'http_error') return /HTTP 5\d\d/.test(e.message);
  return e.code === 'connection_refused' || e.code === 'connection_reset' || e.code === 'timeout' || e.code === 'dns_error' || e.code === 'navigation_failed';
}

/** Adds a scheme when a model typed a bare host ("example.com/path", "127.0.0.1:8080"). */
export function normalizeUrl(url: string): string {
  const u = url.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(u) && !/^(localhost|[\d.]+):\d+/i.test(u)) return u;
  if (/^(localhost|127\.|\[::1\]|\d+\.\d+\.\d+\.\d+)/i.test(u)) return `http://${u}`;
  return `https://${u}`;
}
