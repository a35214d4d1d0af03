// What the OpenEnv room needs from the server that mounts it (server/app.ts passes its route context, which fits):
// the registry, the episode service, the configuration and the server's own authentication check. Owned here, so
// openenv/ never imports server/.
import type { IncomingHttpHeaders } from 'node:http';
import type { GroveError } from '../protocol/errors.ts';
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
}
