// The sandbox core's contracts. Knows nothing of HTTP.
import type { CreateSandboxBody, SandboxInfo, SandboxStatus } from '../protocol/sandbox.ts';

/** Type-specific parts of SandboxInfo a sandbox reports itself (e.g. `shell`). */
export type SandboxDetails = Partial<Pick<SandboxInfo, 'shell' | 'claw' | 'claw_eval'>>;

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

/** Why a sandbox was closed. */
export type CloseReason = 'deleted' | 'expired_ttl' | 'expired_idle' | 'shutdown';

/** A sandbox another server (an orchestrator replica) created, as the shared state describes it. */
export interface AdoptedSandbox {
  sandbox: Sandbox;
  type: Sandbox['type'];
  labels: Record<string, string>;
  createdAt: number;
  lastUsedAt: number;
  ttlMs: number;
  idleMs: number;
  /** Still being created by its replica: sandbox.ready() settles when it is ready or failed. */
  creating: boolean;
  /** Created with `record: true`: the steps this server serves go into the same episode (a recordings directory the
   * servers share). */
  recorded?: boolean;
}

/** A sandbox no server held here, closed by the shared state's leader. */
export interface ClosedUnheld {
  reason: CloseReason;
  /** Created with `record: true`: its episode (on a recordings directory the servers share) is still to be ended. */
  recorded: boolean;
}

/**
 * State several servers share (the kubernetes backend's pod annotations): a sandbox created on one replica is
 * served by any other. Lookups are synchronous (a watched cache), never a remote call per request.
 */
export interface SharedSandboxes {
  /** A live sandbox this server does not hold, from the shared state; null when unknown there too. */
  adopt(id: string): AdoptedSandbox | null;
  /**
   * Catches up with the shared state for one id (another server may have written it a moment ago). Returns once
   * what it read has reached a sandbox adopted from it: one its replica recorded ready (or closed) has settled
   * ready().
   */
  refresh(id: string): Promise<void>;
  /** Resolves true once the id appears in the shared state (a sandbox another server just accepted), false
   * after at most `ms` (capped by the backend). */
  appear(id: string, ms: number): Promise<boolean>;
  /** Ids of the live sandboxes in the shared state (for listing). */
  ids(): string[];
  /** A heartbeat here: recorded in the shared state (coalesced writes). */
  heartbeat(id: string, at: number): void;
  /** The last use any server recorded (ms), when known. */
  lastUsed(id: string): number | undefined;
  /** The registry is closing a sandbox, and why (written for the other servers to see). */
  closing(id: string, reason: CloseReason): void;
  /** Sandboxes closed elsewhere (another server, or expiry by the shared state's leader). */
  onClosed(fn: (id: string, reason: CloseReason) => void): void;
  /** Sandboxes no server held here, closed by this server as the shared state's leader (expired, their pod gone, or
   * left `creating` by a server that is gone): what they leave unfinished, e.g. a recording whose creator died. */
  onClosedUnheld?(fn: (id: string, closed: ClosedUnheld) => void): void;
  /** At shutdown: true when other servers are alive to serve the sandboxes on (they are then not closed). */
  handOver(): Promise<boolean>;
  /** This server's name in the shared state (a kubernetes replica id): what it records names it, so the others can
   * tell once it is gone. */
  readonly serverId?: string;
  /** As the shared state's leader, after each pass over the servers' liveness: which are alive, and the ids of the
   * live sandboxes created with `record: true` (a recording whose writer is gone is marked so, recording/writer.ts). */
  onServersChecked?(fn: (alive: (server: string) => boolean, recorded: string[]) => Promise<void>): void;
  /** Where a recorded HAR goes when this server, as the leader, closes a `record_har` sandbox (its expiry): a path in
   * the recordings directory the servers share, or undefined. */
  harDestination?(fn: (id: string) => string | undefined): void;
}

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
  /** Present when several servers share the sandboxes (expiry is then decided by the shared state's leader). */
  readonly shared?: SharedSandboxes;
}
