// What every environment's session shares: one sandbox per episode (created on reset from the reset arguments,
// the previous one closed first; closed with the session), OpenEnv's State (episode_id, step_count) and the
// mapping of Grove's own failures onto OpenEnv's error codes.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { GroveError } from '../../protocol/errors.ts';
import type { CreateSandboxBody } from '../../protocol/sandbox.ts';
import type { Sandbox } from '../../sandbox/types.ts';
import type { OpenEnvHost } from '../host.ts';
import { detailOf, OpenEnvError, type ResetArgs, type StepOut } from '../wire.ts';
import type { EnvSession, McpTool, StepOutcome, StepReport, ToolResult } from './types.ts';

/** How long a reset waits for its sandbox to be ready (a browser start on a loaded machine takes seconds). */
const READY_TIMEOUT_MS = 120_000;

/** Parses with `schema`; a failure is OpenEnv's VALIDATION_ERROR with pydantic-shaped `errors` under `loc`. */
export function parseOr<S extends z.ZodType>(schema: S, value: unknown, loc: (string | number)[], what: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const detail = detailOf(r.error, loc);
  throw new OpenEnvError('VALIDATION_ERROR', `Invalid ${what}: ${detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; ')}`, detail);
}

/** Only the reset arguments an environment knows (OpenEnv passes only those its reset() accepts, dropping others). */
export function pick(args: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (args[k] !== undefined && args[k] !== null) out[k] = args[k];
  return out;
}

export abstract class SandboxSession implements EnvSession {
  protected id: string | undefined;
  protected episodeId: string | null = null;
  protected steps = 0;
  protected ended = false;

  constructor(
    protected readonly host: OpenEnvHost,
    protected readonly idleTimeoutS: number,
    private readonly report?: StepReport,
  ) {}

  get sandboxId(): string | undefined {
    return this.id;
  }

  abstract reset(args: ResetArgs): Promise<StepOut>;
  abstract step(action: Record<string, unknown>, timeoutS?: number): Promise<StepOut>;
  abstract listTools(): McpTool[];
  abstract callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;

  /** Extra fields of this environment's state. */
  protected stateExtra(): Record<string, unknown> {
    return {};
  }

  state(): Record<string, unknown> {
    return { episode_id: this.episodeId, step_count: this.steps, sandbox_id: this.id ?? null, done: this.ended, ...this.stateExtra() };
  }

  /** Creates the episode's sandbox (closing the previous one) and waits until it is ready. */
  protected async start(spec: CreateSandboxBody, args: ResetArgs, attach?: (id: string) => void): Promise<string> {
    await this.close();
    this.steps = 0;
    this.ended = false;
    this.episodeId = args.episode_id ?? randomUUID();
    const info = this.host.registry.create(spec);
    this.id = info.sandbox_id;
    attach?.(info.sandbox_id);
    const ready = await this.host.registry.wait(info.sandbox_id, READY_TIMEOUT_MS);
    if (ready.status !== 'ready') {
      await this.close();
      const why = ready.error ? `${ready.error.code}: ${ready.error.message}` : `still ${ready.status} after ${READY_TIMEOUT_MS / 1000} s`;
      throw new OpenEnvError('FACTORY_ERROR', `The ${spec.type} sandbox did not start (${why}).`, undefined, { factory_name: `grove-${spec.type}` });
    }
    return info.sandbox_id;
  }

  /** The live sandbox of the episode (marks it used), or EXECUTION_ERROR before the first reset. */
  protected sandbox<T extends Sandbox>(): T {
    if (!this.id) throw new OpenEnvError('EXECUTION_ERROR', 'No episode is running in this session: send a reset first.');
    return this.host.registry.use(this.id) as T;
  }

  /** Counts a step that ran in the sandbox since `started` (performance.now()) with Grove's own steps. */
  protected ran(type: Parameters<StepReport>[0], started: number, outcome: StepOutcome): void {
    this.report?.(type, (performance.now() - started) / 1000, outcome);
  }

  /** This session's report of a step of `type` (seconds, outcome), for a step that counts itself; null: not counted. */
  protected reporter(type: Parameters<StepReport>[0]): ((seconds: number, outcome: StepOutcome) => void) | null {
    const report = this.report;
    return report ? (seconds, outcome) => report(type, seconds, outcome) : null;
  }

  /** A tool call, counted as a step of `type` when it ran (an error result: outcome error). */
  protected async countedCall(type: Parameters<StepReport>[0], call: () => Promise<ToolResult>): Promise<ToolResult> {
    const started = performance.now();
    const r = await call();
    this.ran(type, started, r.is_error ? 'error' : 'ok');
    return r;
  }

  protected touch(): void {
    if (this.id) this.host.registry.touch(this.id);
  }

  async close(): Promise<void> {
    const id = this.id;
    this.id = undefined;
    if (id) await this.host.registry.delete(id).catch(() => undefined);
  }
}

/** A Grove failure as OpenEnv's error: capacity answers CAPACITY_REACHED, bad input VALIDATION_ERROR. */
export function openEnvErrorOf(err: unknown): OpenEnvError {
  if (err instanceof OpenEnvError) return err;
  if (err instanceof GroveError) {
    const extra = { grove_code: err.code };
    if (err.code === 'capacity_exhausted' || err.code === 'overloaded') return new OpenEnvError('CAPACITY_REACHED', err.message, undefined, extra);
    if (err.status === 400 || err.status === 404 || err.status === 413) return new OpenEnvError('VALIDATION_ERROR', err.message, undefined, extra);
    return new OpenEnvError('EXECUTION_ERROR', err.status >= 500 && err.code === 'internal_error' ? 'Internal Server Error' : err.message, undefined, extra);
  }
  return new OpenEnvError('EXECUTION_ERROR', 'Internal Server Error');
}
