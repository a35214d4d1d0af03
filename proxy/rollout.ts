// Which rollout a call belongs to, and whether the caller may record into it. A call names its rollout by a path
// prefix (`/r/<id>/v1/...`), a header (`x-grove-rollout`) or a per-rollout key (`gk-…`, issued by the proxy);
// one proxy serves thousands of concurrent rollouts this way.
//
// Keys required (the default): every call carries the key of its rollout (bearer token or `x-api-key`); a path or
// header may name the same rollout, never another. Keys off (an explicit mode, for trusted networks): a path or
// header alone names the rollout, except a rollout that has a key, which only its key records into.
import type { ProxyErrorCode } from './errors.ts';
import type { RolloutKeys } from './keys.ts';
import type { RolloutKeyMode, RolloutSource } from './types.ts';

export const ROLLOUT_HEADER = 'x-grove-rollout';
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** What a per-rollout key looks like (also how any header carrying one is told, so it is never forwarded). */
export const GROVE_KEY = /gk-[A-Za-z0-9_-]{16,}/;

export function validRolloutId(id: string): boolean {
  return ID.test(id) && !id.includes('..');
}

export interface ResolvedCall {
  rollout: string;
  source: RolloutSource;
  /** The upstream path after the API prefix, with the query string (e.g. `/chat/completions`). */
  endpoint: string;
  /** The call carried a per-rollout key (its auth headers are the proxy's, never the upstream's). */
  keyed: boolean;
}

export type Resolution = ResolvedCall | { error: ProxyErrorCode; message: string };

export { RolloutKeys } from './keys.ts';

/** A call's URL and headers read, before anyone's key is checked. */
export interface ParsedCall {
  named?: string;
  source?: RolloutSource;
  endpoint: string;
  /** The `gk-…` keys the call carries. */
  keys: string[];
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The per-rollout keys a request presents: OpenAI clients send a bearer token, Anthropic clients `x-api-key`. */
export function presentedKeys(headers: Record<string, string | string[] | undefined>): string[] {
  const out: string[] = [];
  const auth = first(headers.authorization)?.trim().replace(/^Bearer\s+/i, '');
  const apiKey = first(headers['x-api-key'])?.trim();
  for (const t of [auth, apiKey]) if (t?.startsWith('gk-')) out.push(t);
  return out;
}

/** An endpoint without query parameters that hold a per-rollout key (`?key=gk-…`): never forwarded or recorded. */
function withoutKeyParams(endpoint: string): string {
  const q = endpoint.indexOf('?');
  if (q < 0) return endpoint;
  const kept = endpoint
    .slice(q + 1)
    .split('&')
    .filter((p) => !GROVE_KEY.test(p) && !GROVE_KEY.test(decode(p) ?? ''));
  return kept.length ? `${endpoint.slice(0, q)}?${kept.join('&')}` : endpoint.slice(0, q);
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * Resolves a request URL (`/r/<id>/v1/chat/completions`, `/v1/chat/completions`) and its headers to a rollout the
 * caller may record into. The API prefix is the upstream's (`/v1`): the part after it is forwarded.
 */
export function resolveCall(url: string, headers: Record<string, string | string[] | undefined>, keys: RolloutKeys, mode: RolloutKeyMode = 'required'): Resolution {
  const parsed = parseCall(url, headers);
  return 'error' in parsed ? parsed : authorizeCall(parsed, keys, mode);
}

/** Reads the rollout a call names (path or header), its endpoint and the keys it carries. */
export function parseCall(url: string, headers: Record<string, string | string[] | undefined>): ParsedCall | { error: ProxyErrorCode; message: string } {
  let rest = url;
  let named: string | undefined;
  let source: RolloutSource | undefined;
  const prefixed = rest.match(/^\/r\/([^/?]+)(\/.*)$/);
  if (prefixed) {
    named = decode(prefixed[1]);
    if (named === undefined) return { error: 'invalid_path', message: `the rollout in the path is not valid percent-encoding: "${prefixed[1].slice(0, 64)}"` };
    source = 'path';
    rest = prefixed[2];
  }
  const v1 = rest.match(/^\/v1(\/.*)$/);
  if (!v1) return { error: 'not_found', message: `no route ${url.split('?')[0].slice(0, 200)}: model calls go to /v1/... or /r/<rollout>/v1/...` };
  if (named === undefined) {
    const fromHeader = first(headers[ROLLOUT_HEADER]);
    if (fromHeader) {
      named = fromHeader;
      source = 'header';
    }
  }
  if (named !== undefined && !validRolloutId(named)) return { error: 'invalid_rollout', message: `rollout id "${named.slice(0, 64)}" must match ${ID}` };
  return { named, source, endpoint: withoutKeyParams(v1[1]), keys: presentedKeys(headers) };
}

/** Whether the caller may record into the rollout it names: only with that rollout's key, but for keys off. */
export function authorizeCall(parsed: ParsedCall, keys: RolloutKeys, mode: RolloutKeyMode): Resolution {
  const { named, source, endpoint } = parsed;
  const byKey = new Set<string>();
  for (const key of parsed.keys) {
    const rollout = keys.lookup(key);
    if (!rollout) return { error: 'invalid_rollout_key', message: 'this per-rollout key was not issued by this proxy' };
    byKey.add(rollout);
  }
  if (byKey.size > 1) return { error: 'rollout_key_mismatch', message: 'the call carries the keys of two rollouts' };
  const [keyRollout] = byKey;
  if (keyRollout !== undefined) {
    if (named !== undefined && named !== keyRollout) return { error: 'rollout_key_mismatch', message: `this key records into its own rollout only, not "${named}"` };
    return { rollout: keyRollout, source: source ?? 'key', endpoint, keyed: true };
  }
  if (mode === 'required') {
    return { error: 'rollout_key_required', message: 'this proxy records a call only with its rollout\'s key (POST /rollouts): as a bearer token or x-api-key' };
  }
  if (named === undefined || !source) {
    return {
      error: 'rollout_required',
      message: `name the rollout: a /r/<rollout>/v1 base URL, an ${ROLLOUT_HEADER} header, or a per-rollout key from POST /rollouts`,
    };
  }
  if (keys.has(named)) return { error: 'rollout_key_required', message: `rollout "${named}" has a key: only calls with it record into it` };
  return { rollout: named, source, endpoint, keyed: false };
}
