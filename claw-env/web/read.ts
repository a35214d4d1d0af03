// Pages read through the same tools (actor "web"), so page views are audited and see injected faults too.
import type { ClawApp } from '../app.ts';

export class WebError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export function read(app: ClawApp, tool: string, args: Record<string, unknown>): any {
  const r = app.call(tool, args, 'web');
  if (r.status !== 200) throw new WebError(r.status, (r.body as { error: { message: string } }).error.message, r.retryAfter);
  return r.body;
}
