// One definition object per tool (name, description, zod input, handler), as claw-env's tools and Playwright's
// MCP tools are written; the JSON Schema MCP lists comes from the same zod schema.
import { z } from 'zod';
import { GroveError } from '../protocol/errors.ts';
import type { Logger } from '../sandbox/log.ts';
import { errorResult, type McpTool, type ToolResult } from './types.ts';

export interface ToolDef<S extends z.ZodType, C> {
  name: string;
  description: string;
  input: S;
  /** MCP annotations: hints for clients (read-only, destructive, …). */
  annotations?: McpTool['annotations'];
  handler(ctx: C, args: z.output<S>, signal?: AbortSignal): Promise<ToolResult>;
}

export function defineTool<S extends z.ZodType, C>(def: ToolDef<S, C>): ToolDef<S, C> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDef<C> = ToolDef<any, C>;

const schemas = new WeakMap<object, McpTool['inputSchema']>();

/** The MCP listing of a definition (JSON Schema of the input, draft 2020-12, without $schema; built once). */
export function listing<C>(t: AnyToolDef<C>): McpTool {
  let inputSchema = schemas.get(t);
  if (!inputSchema) {
    const { $schema: _s, ...schema } = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    schemas.set(t, (inputSchema = schema as McpTool['inputSchema']));
  }
  return { name: t.name, description: t.description, inputSchema, ...(t.annotations ? { annotations: t.annotations } : {}) };
}

/** Readable zod issues (the first five, each with its path). */
export function issuesText(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`)
    .join('; ');
}

/** Validates and runs one call; every failure is a tool result with a stable code (GroveError's), never a throw. */
export async function runTool<C>(defs: readonly AnyToolDef<C>[], ctx: C, name: string, args: unknown, signal?: AbortSignal, log?: Logger): Promise<ToolResult> {
  const def = defs.find((d) => d.name === name);
  if (!def) return errorResult('unknown_tool', `No tool "${String(name).slice(0, 100)}" here; known: ${defs.map((d) => d.name).join(', ')}.`);
  const parsed = (def.input as z.ZodType).safeParse(args ?? {});
  if (!parsed.success) return errorResult('invalid_arguments', `Invalid arguments for ${def.name}: ${issuesText(parsed.error)}`);
  try {
    return await def.handler(ctx, parsed.data, signal);
  } catch (err) {
    if (err instanceof GroveError && err.status < 500) return errorResult(err.code, err.message);
    // A 5xx is the service's failure: its code and the catalog's client-facing message, as the REST routes answer.
    log?.error({ err, tool: def.name }, 'MCP tool failed');
    if (err instanceof GroveError && err.status === 503) return errorResult(err.code, err.message);
    return errorResult(err instanceof GroveError ? err.code : 'internal_error', 'The tool failed inside Grove; see the server log.');
  }
}
