// The sandbox core's contracts. Knows nothing of HTTP.
import type { CreateSandboxBody, SandboxInfo, SandboxStatus } from '../protocol/sandbox.ts';

/** Type-specific parts of SandboxInfo a sandbox reports itself (e.g. `shell`). */
export type SandboxDetails = Partial<Pick<SandboxInfo, 'shell' | 'claw'>>;

/** A live environment instance owned by a backend. Browser/shell sandboxes extend this. */
export interface Sandbox {
  readonly id: string;
  readonly type: 'browser' | 'shell' | 'claw';
  /** Becomes true once the sandbox can take a step. */
  readonly status: SandboxStatus;
  /** Resolves when ready (or rejects with a GroveError when creation failed). */
  ready(): Promise<void>;
  /** Idempotent: closes the environment and frees its resources. */
  close(): Promise<void>;
  /** Optional: a problem met while starting (e.g. the start URL failed) that left the sandbox usable. */
  readonly startError?: { code: string; message: string } | null;
  /** Optional: steps executed so far (reported in SandboxInfo). */
  readonly steps?: number;
  /** Optional: type-specific info merged into SandboxInfo (e.g. a shell sandbox's rootfs, network and limits). */
  details?(): SandboxDetails;
}

/** Time source, injectable so expiry can be tested without waiting. Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** A backend creates sandboxes of the types it supports. `local` is the embedded default. */
export interface Backend {
  readonly name: string;
  supports(type: CreateSandboxBody['type']): boolean;
  /** Starts creating a sandbox; the returned sandbox may still be `creating`. */
  create(id: string, spec: CreateSandboxBody): Promise<Sandbox>;
  /** Closes everything this backend started (graceful shutdown). */
  shutdown(): Promise<void>;
  /** Optional back-pressure check before a sandbox is accepted; throws a GroveError (e.g. 503 capacity_exhausted
   * with retryAfter) so the create request is refused at once instead of failing in the background. */
  admit?(spec: CreateSandboxBody): void;
  /** Backend-level gauges for /metrics (e.g. chromium processes, pool size). */
  stats(): Record<string, number>;
}
