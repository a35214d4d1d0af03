// The offline sites on a worker pod (kubernetes backend): the worker serves them itself, on its loopback, for the
// browsers of its own sandboxes; nothing of the orchestrator is reachable from a pod, nor the sites from outside it.
// The orchestrator (with the pod's token) asks for them before creating a sandbox of an offline task, and reads a
// session's state back for the rule judge:
//   POST /worker/sites                       start them (once) → {url}: the base URL the task's start URL is put on
//   GET  /worker/sites/sessions/{session}    the session's state (the sites' own /__grove/state/{session})
import type { FastifyInstance } from 'fastify';
import { GroveError } from '../protocol/errors.ts';
import type { Logger } from '../sandbox/log.ts';
import { startSites, type SitesServer } from '../sites/server.ts';
import { SESSION_ID_RE } from '../sites/state.ts';

export function registerWorkerSites(scope: FastifyInstance, log: Logger): void {
  let sites: Promise<SitesServer> | null = null;
  const running = (): Promise<SitesServer> => {
    if (!sites) {
      // Loopback only: the pod's browsers reach it there, the pod's network never does.
      sites = startSites({ host: '127.0.0.1', port: 0, log });
      sites.catch(() => (sites = null));
    }
    return sites;
  };
  scope.addHook('onClose', async () => {
    const s = sites;
    sites = null;
    if (s) await (await s.catch(() => null))?.close();
  });

  scope.post('/worker/sites', async () => ({ url: (await running()).url }));

  scope.get<{ Params: { session: string } }>('/worker/sites/sessions/:session', async (request) => {
    const id = request.params.session;
    if (!SESSION_ID_RE.test(id)) throw new GroveError('invalid_request', `"${id.slice(0, 100)}" is not a sites session id (letters, digits, _ and -, at most 64).`);
    const state = sites ? (await running()).store.get(id) : undefined;
    if (!state) throw new GroveError('not_found', `No sites session ${id} on this worker.`);
    return state;
  });
}
