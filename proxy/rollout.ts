// Which rollout a call belongs to: a path prefix (`/r/<id>/v1/...`), a header (`x-grove-rollout`), or a
// per-rollout API key issued by the proxy. One proxy serves thousands of concurrent rollouts this way.
import { randomBytes } from 'node:crypto';
import type { RolloutSource } from './types.ts';

export const ROLLOUT_HEADER = 'x-grove-rollout';
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function validRolloutId(id: string): boolean {
  return ID.test(id) && !id.includes('..');
}

export interface ResolvedCall {
  rollout: string;
  source: RolloutSource;
  /** The upstream path after the API prefix, with the query string (e.g. `/chat/completions`). */
  endpoint: string;
}

export type Resolution = ResolvedCall | { error: 'rollout_required' | 'invalid_rollout' | 'not_found'; message: string };

/** Per-rollout keys: `gk-…` tokens mapped to rollout ids (in memory, also persisted by the server). */
export class RolloutKeys {
  private readonly byKey = new Map<string, string>();
  issue(rollout: string): string {
    const key = `gk-${randomBytes(18).toString('base64url')}`;
    this.byKey.set(key, rollout);
    return key;
  }
  add(key: string, rollout: string): void {
    this.byKey.set(key, rollout);
  }
  lookup(key: string): string | undefined {
    return this.byKey.get(key);
  }
}

function bearer(auth: string | undefined): string | undefined {
  const m = auth?.match(/^Bearer\s+(\S+)$/i);
  return m?.[1];
}

/**
 * Resolves a request URL (`/r/<id>/v1/chat/completions`, `/v1/chat/completions`) and its headers to a rollout.
 * The API prefix is the upstream's (`/v1`): the part after it is forwarded.
 */
export function resolveCall(url: string, headers: Record<string, string | string[] | undefined>, keys: RolloutKeys): Resolution {
  let rest = url;
  let rollout: string | undefined;
  let source: RolloutSource | undefined;
  const prefixed = rest.match(/^\/r\/([^/?]+)(\/.*)$/);
  if (prefixed) {
    rollout = decodeURIComponent(prefixed[1]);
    source = 'path';
    rest = prefixed[2];
  }
  const v1 = rest.match(/^\/v1(\/.*)$/);
  if (!v1) return { error: 'not_found', message: `no route ${url.split('?')[0]}: model calls go to /v1/... or /r/<rollout>/v1/...` };
  if (!rollout) {
    const h = headers[ROLLOUT_HEADER];
    const fromHeader = Array.isArray(h) ? h[0] : h;
    if (fromHeader) {
      rollout = fromHeader;
      source = 'header';
    } else {
      // OpenAI clients send the key as a bearer token, Anthropic clients (Claude Code) in x-api-key.
      const apiKey = headers['x-api-key'];
      const key = bearer(headers.authorization as string | undefined) ?? (Array.isArray(apiKey) ? apiKey[0] : apiKey);
      const byKey = key ? keys.lookup(key) : undefined;
      if (byKey) {
        rollout = byKey;
        source = 'key';
      }
    }
  }
  if (!rollout || !source) {
    return {
      error: 'rollout_required',
      message: `name the rollout: a /r/<rollout>/v1 base URL, an ${ROLLOUT_HEADER} header, or a per-rollout key from POST /rollouts`,
    };
  }
  if (!validRolloutId(rollout)) return { error: 'invalid_rollout', message: `rollout id "${rollout.slice(0, 64)}" must match ${ID}` };
  return { rollout, source, endpoint: v1[1] };
}
