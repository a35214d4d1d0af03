// The OpenEnv room mounted on Grove's server: the HTTP routes (a fastify plugin under /openenv), the WebSocket
// upgrade handler, the sessions and their closing. server/app.ts registers `routes` and offers upgrades to
// `upgrade` before its own.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { authorizer } from './auth.ts';
import type { OpenEnvHost } from './host.ts';
import { openEnvRoutes } from './http.ts';
import { adapters } from './registry.ts';
import { Sessions } from './sessions.ts';
import { OpenEnvSockets } from './ws.ts';

export const OPENENV_PREFIX = '/openenv';
/** The WebSocket paths: /openenv/<key>/<env>/ws and /openenv/<env>/ws (sessions), and the same with /mcp (JSON-RPC). */
export const OPENENV_WS_PATH = /^\/openenv\/(?:[^/]+\/)?[^/]+\/(?:ws|mcp)$/;

export interface OpenEnvServer {
  routes: (app: FastifyInstance) => Promise<void>;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  readonly sessions: Sessions;
  close(): Promise<void>;
}

export function openEnvServer(host: OpenEnvHost): OpenEnvServer {
  const envs = adapters();
  const sessions = new Sessions({ max: host.config.openenvMaxSessions ?? host.config.maxSandboxes, idleTimeoutS: host.config.openenvIdleTimeoutS, log: host.log, meter: host.meter });
  const authorize = authorizer(host);
  const sockets = new OpenEnvSockets({ host, adapters: envs.byName, sessions, authorize });
  return {
    routes: openEnvRoutes({ host, adapters: envs.byName, sessions, authorize }),
    upgrade: (req, socket, head) => sockets.upgrade(req, socket, head),
    sessions,
    async close() {
      await sockets.close();
      await sessions.closeAll('the server is shutting down');
      await envs.close();
    },
  };
}
