// The runner's view of a Grove server: the five calls an episode needs. GroveClient (client/index.ts)
// satisfies it structurally, so tests and the CLI pass a real client over a real (possibly in-process) server.
import type { Action } from '../protocol/action.ts';
import type { Observation, StepResult } from '../protocol/observation.ts';
import type { BrowserCreateInput } from '../protocol/sandbox.ts';

interface StepCommon {
  screenshot?: 'base64' | 'none';
  som?: boolean;
  accessibility?: boolean;
}

/** Either canonical actions, or raw model text that the server parses with a policy format. */
export type EnvStepBody =
  | (StepCommon & { actions: Action[] })
  | (StepCommon & { model_output: string; format: string });

export interface EnvClient {
  createSandbox(body: BrowserCreateInput): Promise<{ sandbox_id: string }>;
  /** Resolves once the sandbox is ready; rejects when creation failed or the wait timed out. */
  waitSandbox(id: string, timeoutSec?: number): Promise<unknown>;
  /** May raise 503 capture_timeout: the actions ran (error details) but no screenshot came; observe again. */
  step(id: string, body: EnvStepBody): Promise<StepResult>;
  /** May raise 503 capture_timeout (no screenshot within the deadline): observe again after its Retry-After. */
  observation(id: string, opts?: { som?: boolean; accessibility?: boolean }): Promise<Observation>;
  deleteSandbox(id: string): Promise<unknown>;
}

/** What the runner can read from an error thrown by the client (GroveClient's errors carry these). */
export interface ClientErrorInfo {
  status?: number;
  code?: string;
  message: string;
}

export function clientErrorInfo(err: unknown): ClientErrorInfo {
  if (err && typeof err === 'object') {
    const e = err as { status?: unknown; statusCode?: unknown; code?: unknown; message?: unknown };
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
    return {
      status,
      code: typeof e.code === 'string' ? e.code : undefined,
      message: typeof e.message === 'string' ? e.message : String(err),
    };
  }
  return { message: String(err) };
}

export function describeClientError(err: unknown): string {
  const i = clientErrorInfo(err);
  return [i.status !== undefined ? `HTTP ${i.status}` : '', i.code ?? '', i.message].filter(Boolean).join(' ');
}
