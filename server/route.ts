// One definition object per route: method, url, zod schemas, handler. The same objects drive
// registration (server/app.ts), validation and the OpenAPI document (server/openapi.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode } from '../protocol/errors.ts';
import type { GroveConfig } from '../sandbox/config.ts';
import type { Logger } from '../sandbox/log.ts';
import type { SandboxRegistry } from '../sandbox/registry.ts';
import type { EpisodeService } from '../episodes/service.ts';
import type { Metrics } from './metrics.ts';

export interface RouteContext {
  config: GroveConfig;
  registry: SandboxRegistry;
  metrics: Metrics;
  log: Logger;
  /** Task-backed sandboxes: episode state, terminated/truncated, evaluate. */
  episodes: EpisodeService;
  version: string;
  startedAt: number;
  /** The OpenAPI document of this server (built once). */
  openapi: () => unknown;
  /** Sandbox tokens of the MCP endpoints (mcp/tokens.ts): GET /sandboxes/{id}/mcp/token gives them out. */
  mcpTokens: { tokenFor(sandboxId: string): string };
}

export interface RouteResponse {
  description: string;
  /** JSON body schema; absent for empty or binary responses. */
  schema?: z.ZodType;
  /** Non-JSON content types (image/*, application/octet-stream, text/plain). */
  contentType?: string;
  /** Other content types the same status may answer with (content type → what it holds). */
  alternatives?: Record<string, string>;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDef<P = undefined, Q = undefined, B = undefined> {
  /** Stable operation id (OpenAPI operationId, metrics label). */
  id: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** fastify-style path: /sandboxes/:id */
  url: string;
  summary: string;
  description?: string;
  tags: string[];
  /** false only for /health. */
  auth?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Code for an invalid body, given the path of the first issue (default invalid_request). */
  bodyErrorCode?: (path: PropertyKey[]) => ErrorCode;
  responses: Record<number, RouteResponse>;
  handler(input: {
    params: Out<P>;
    query: Out<Q>;
    body: Out<B>;
    request: FastifyRequest;
    reply: FastifyReply;
    ctx: RouteContext;
  }): Promise<unknown>;
}

/** Identity helper that infers the handler's input types from the schemas. */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, any, any>;
