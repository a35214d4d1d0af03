// Shared pieces of route definitions.
import { ErrorBody } from '../../protocol/api.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { BrowserSandbox } from '../../browser-env/types.ts';
import type { SandboxInfo } from '../../protocol/sandbox.ts';
import type { RouteContext, RouteResponse } from '../route.ts';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (code invalid_request, invalid_action, unknown_format, unsupported_sandbox_type, navigation_blocked)',
  401: 'Missing API key (unauthorized)',
  403: 'Wrong API key (forbidden)',
  404: 'Unknown sandbox or resource',
  409: 'Sandbox not ready, busy, or of the wrong type',
  410: 'Sandbox closed',
  413: 'Body too large',
  503: 'Capacity exhausted, overloaded (admission control), capture_timeout (no screenshot within the deadline) or shutting down; Retry-After header',
};

export function errorResponses(...statuses: number[]): Record<number, RouteResponse> {
  return Object.fromEntries(statuses.map((s) => [s, { description: DESCRIPTIONS[s] ?? 'Error', schema: ErrorBody }]));
}

/** The ready browser sandbox with this id (marks it used). */
export function browserSandbox(ctx: RouteContext, id: string): BrowserSandbox {
  const sb = ctx.registry.use(id);
  if (sb.type !== 'browser') {
    throw new GroveError('wrong_sandbox_type', `Sandbox ${id} is a ${sb.type} sandbox; this operation needs a browser sandbox.`);
  }
  return sb as BrowserSandbox;
}

/** A predicate over sandbox infos for `key=value` label filters (all must match; none = everything). */
export function labelFilter(filters: string[]): (info: SandboxInfo) => boolean {
  const pairs = filters.map((f) => {
    const at = f.indexOf('=');
    return [f.slice(0, at), f.slice(at + 1)] as const;
  });
  return (info) => pairs.every(([k, v]) => info.labels[k] === v);
}
