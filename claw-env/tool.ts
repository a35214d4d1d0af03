// One definition object per tool: name, app, description, zod input schema, whether it writes, handler.
// Tools throw ToolError for what a real API answers with a 4xx (validation, not found, conflict).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { SandboxClock } from './clock.ts';
import type { AppName, ClawState } from './state.ts';

const TOOL_ERROR_STATUS = {
  invalid_argument: 400,
  invalid_page_token: 400,
  failed_precondition: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  unknown_tool: 404,
  already_exists: 409,
  conflict: 409,
  rate_limited: 429,
  internal: 500,
} as const;
export type ToolErrorCode = keyof typeof TOOL_ERROR_STATUS;

export class ToolError extends Error {
  readonly status: number;
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
    this.status = TOOL_ERROR_STATUS[code];
  }
}

export interface ToolContext {
  state: ClawState;
  clock: SandboxClock;
  newId(prefix: string): string;
}

export interface ToolDef<S extends z.ZodType = z.ZodType> {
  name: string;
  app: AppName;
  description: string;
  input: S;
  /** Changes state (used by diffs, web forms and the trap checks). */
  mutates: boolean;
  handler(ctx: ToolContext, args: z.output<S>): unknown;
}

export function defineTool<S extends z.ZodType>(def: ToolDef<S>): ToolDef<S> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any>;

/** Validates arguments; a readable invalid_argument naming each bad field, like a real API's 400. */
export function parseArgs(tool: AnyTool, args: unknown): unknown {
  const r = (tool.input as z.ZodType).safeParse(args ?? {});
  if (r.success) return r.data;
  const msg = r.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`)
    .join('; ');
  throw new ToolError('invalid_argument', `Invalid arguments for ${tool.name}: ${msg}`);
}

/** JSON Schema of a tool's input (draft 2020-12 from zod, without $schema). */
export function inputJsonSchema(tool: AnyTool): Record<string, unknown> {
  const { $schema: _s, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

// --- pagination: an opaque token bound to the query it came from (a token reused with another query is rejected).

export const PageArgs = {
  page_size: z.number().int().min(1).max(100).default(20).describe('Results per page (1-100, default 20).'),
  page_token: z.string().max(500).optional().describe('next_page_token from the previous page.'),
};

function queryKey(query: unknown): string {
  return createHash('sha256').update(JSON.stringify(query ?? null)).digest('base64url').slice(0, 12);
}

export interface Page<T> {
  items: T[];
  next_page_token: string | null;
  total: number;
}

export function paginate<T>(all: T[], args: { page_size: number; page_token?: string }, query: unknown): Page<T> {
  let offset = 0;
  const key = queryKey(query);
  if (args.page_token !== undefined) {
    let parsed: { o?: unknown; k?: unknown } | null = null;
    try {
      parsed = JSON.parse(Buffer.from(args.page_token, 'base64url').toString('utf8'));
    } catch {
      parsed = null;
    }
    if (!parsed || typeof parsed.o !== 'number' || !Number.isInteger(parsed.o) || parsed.o < 0 || parsed.k !== key) {
      throw new ToolError('invalid_page_token', 'page_token is not valid for this query; start again without page_token.');
    }
    offset = parsed.o;
  }
  const items = all.slice(offset, offset + args.page_size);
  const next = offset + args.page_size < all.length ? Buffer.from(JSON.stringify({ o: offset + args.page_size, k: key })).toString('base64url') : null;
  return { items, next_page_token: next, total: all.length };
}

export function findById<T extends { id: string }>(list: T[], id: string, what: string): T {
  const found = list.find((x) => x.id === id);
  if (!found) throw new ToolError('not_found', `${what} ${JSON.stringify(id)} not found.`);
  return found;
}

const EMAIL_RE = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[A-Za-z]{2,}$/;
export const Email = z.string().trim().regex(EMAIL_RE, 'must be an email address like name@example.com');

export function includesText(haystack: (string | undefined)[], q: string): boolean {
  const needle = q.toLowerCase();
  return haystack.some((h) => h !== undefined && h.toLowerCase().includes(needle));
}
