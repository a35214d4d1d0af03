// OpenEnv's wire protocol (meta-pytorch/OpenEnv, src/openenv/core/env_server: types.py, mcp_types.py,
// http_server.py), written here from its published shapes: the WebSocket messages and their error codes, the HTTP
// bodies, FastAPI's 422 `detail` list and JSON-RPC 2.0. Nothing Grove-specific lives here.
import { z } from 'zod';

/** WSErrorCode, as OpenEnv names them. */
export const WS_ERROR = {
  INVALID_JSON: 'INVALID_JSON',
  UNKNOWN_TYPE: 'UNKNOWN_TYPE',
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  EXECUTION_ERROR: 'EXECUTION_ERROR',
  CAPACITY_REACHED: 'CAPACITY_REACHED',
  FACTORY_ERROR: 'FACTORY_ERROR',
  SESSION_ERROR: 'SESSION_ERROR',
} as const;
export type WsErrorCode = keyof typeof WS_ERROR;

/** JsonRpcErrorCode. */
export const RPC = { PARSE_ERROR: -32700, INVALID_REQUEST: -32600, METHOD_NOT_FOUND: -32601, INVALID_PARAMS: -32602, INTERNAL_ERROR: -32603, SERVER_ERROR: -32000 } as const;

/** ResetRequest: seed and episode_id, extra fields allowed (an environment's own reset arguments). */
export const ResetArgs = z.looseObject({
  seed: z.number().int().min(0).nullish(),
  episode_id: z.string().max(255).nullish(),
});
export type ResetArgs = z.infer<typeof ResetArgs>;

/** StepRequest: the action plus optional timeout_s / request_id (extra fields allowed). */
export const StepBody = z.looseObject({
  action: z.record(z.string(), z.unknown()),
  timeout_s: z.number().gt(0).nullish(),
  request_id: z.string().max(255).nullish(),
});

// WebSocket messages (BaseMessage: extra fields forbidden).
const WsReset = z.strictObject({ type: z.literal('reset'), data: z.record(z.string(), z.unknown()).default({}) });
const WsStep = z.strictObject({ type: z.literal('step'), data: z.record(z.string(), z.unknown()) });
const WsState = z.strictObject({ type: z.literal('state') });
const WsClose = z.strictObject({ type: z.literal('close') });
const WsMcp = z.strictObject({ type: z.literal('mcp'), data: z.record(z.string(), z.unknown()) });
export const WsMessage = z.discriminatedUnion('type', [WsReset, WsStep, WsState, WsClose, WsMcp]);
export type WsMessage = z.infer<typeof WsMessage>;
export const WS_TYPES = ['reset', 'step', 'state', 'close', 'mcp'] as const;

export const JsonRpcRequest = z.strictObject({
  jsonrpc: z.literal('2.0'),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).default({}),
  id: z.union([z.string(), z.number().int()]).nullish(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequest>;
type RpcId = string | number | null | undefined;

export function rpcResult(id: RpcId, result: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, result };
}
export function rpcError(id: RpcId, code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, error: { code, message, data: data ?? null } };
}

/** The StepResponse / ResetResponse body and the WS observation's data: observation, reward, done. */
export interface StepOut {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

export function wsError(code: WsErrorCode, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'error', data: { message, code, ...extra } });
}

/** Pydantic's error list entry, as FastAPI answers it under `detail`. */
export interface DetailEntry {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
}

const PYDANTIC_TYPE: Record<string, string> = {
  invalid_type: 'type_error',
  too_small: 'too_short',
  too_big: 'too_long',
  invalid_union: 'union_error',
  unrecognized_keys: 'extra_forbidden',
  invalid_value: 'literal_error',
};

/** A zod error as pydantic's `errors()` list under the given location prefix. */
export function detailOf(err: z.ZodError, loc: (string | number)[]): DetailEntry[] {
  return err.issues.slice(0, 20).map((i) => ({
    type: i.code === 'invalid_type' && i.input === undefined ? 'missing' : (PYDANTIC_TYPE[i.code] ?? i.code),
    loc: [...loc, ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))],
    msg: i.message,
  }));
}

/** An OpenEnv answer that is not the observation: 422 with detail, or a WS error code. */
export class OpenEnvError extends Error {
  constructor(
    readonly code: WsErrorCode,
    message: string,
    readonly detail?: DetailEntry[],
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
