// Edge validation: zod parse with a readable, field-naming message mapped to a stable error code.
import type { z } from 'zod';
import { GroveError, type ErrorCode } from '../protocol/errors.ts';

/** "body.viewport.width: Too small: expected number to be >=200; body.type: ..." (at most 5 issues). */
function formatZodError(error: z.ZodError, where: string): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const path = [where, ...issue.path.map(String)].join('.');
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    // zod's default wording for a missing field is "expected X, received undefined": say it plainly.
    if (issue.code === 'invalid_type' && /received undefined$/.test(message)) message = `required (${issue.expected})`;
    return `${path}: ${message}`;
  });
  if (error.issues.length > 5) parts.push(`(${error.issues.length - 5} more)`);
  return parts.join('; ');
}

export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'params' | 'query' | 'body',
  code: ErrorCode | ((path: PropertyKey[]) => ErrorCode) = 'invalid_request',
): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const c = typeof code === 'function' ? code(r.error.issues[0]?.path ?? []) : code;
  throw new GroveError(c, `Invalid ${where}: ${formatZodError(r.error, where)}`, { details: r.error.issues });
}
