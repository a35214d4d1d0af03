// What the OpenEnv room needs from the server that mounts it (server/app.ts passes its route context, which fits):
// the registry, the episode service, the configuration, the server's own authentication check and its browser step.
// Owned here, so openenv/ never imports server/.
import type { IncomingHttpHeaders } from 'node:http';
import type { StepRequest } from '../protocol/api.ts';
import type { GroveError } from '../protocol/errors.ts';
import type { StepResult } from '../protocol/observation.ts';
import type { StepOutcome, StepType } from '../sandbox/step-count.ts';
import type { GroveConfig } from '../sandbox/config.ts';
import type { Logger } from '../sandbox/log.ts';
import type { SandboxRegistry } from '../sandbox/registry.ts';
import type { EpisodeService } from '../episodes/service.ts';

export interface OpenEnvHost {
  config: GroveConfig;
  registry: SandboxRegistry;
  episodes: EpisodeService;
  log: Logger;
  version: string;
  /** The server's header check (X-API-Key; with auth off, the Host and Origin guards), null when it passes. */
  denied(headers: IncomingHttpHeaders): GroveError | null;
  /** Where the room's counts go (the server's /metrics); absent, nothing is counted. */
  meter?: OpenEnvMeter;
  /** The server's browser step, the one POST /sandboxes/{id}/step runs (format parsing on the sandbox's parse
   * context, step hooks, admission, episode state, the capture contract: GroveError capture_timeout). `count`
   * reports the step (seconds, outcome) for grove_steps_total, or null: not counted. */
  browserStep(id: string, body: StepRequest, capture: 'base64' | 'none', count: ((seconds: number, outcome: StepOutcome) => void) | null): Promise<StepResult>;
}

/** The transport a session or call came on: HTTP /reset, /step; the /ws session; HTTP /mcp; the /mcp WebSocket. */
export type OpenEnvTransport = 'http' | 'ws' | 'mcp' | 'ws_mcp';

/** What the room reports for /metrics (server/metrics.ts counts it). `env` is an environment name or `unknown`. */
export interface OpenEnvMeter {
  sessionOpened(env: string, transport: OpenEnvTransport): void;
  sessionClosed(env: string, transport: OpenEnvTransport): void;
  /** An episode started (ok) or failed to (an error answered). */
  reset(env: string, transport: OpenEnvTransport, ok: boolean): void;
  /** An environment step or an MCP tool call on an episode. */
  step(env: string, transport: OpenEnvTransport, kind: 'step' | 'tool', ok: boolean): void;
  /** A step or tool call that ran in a sandbox, counted with Grove's own steps (grove_steps_total, the step latency
   * histogram) under its sandbox type: `swe` episodes are shell sandboxes. */
  ran(type: StepType, transport: OpenEnvTransport, seconds: number, outcome: StepOutcome): void;
  /** An error answered: OpenEnv's code (VALIDATION_ERROR, ...), JSON-RPC's (PARSE_ERROR, ...) or Grove's (forbidden). */
  error(env: string, transport: OpenEnvTransport, code: string): void;
}
