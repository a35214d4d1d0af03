// The offline sites on a worker pod (kubernetes backend): the worker serves them itself, on its loopback (its task
// catalog's sites server), for the browsers of its own sandboxes; nothing of the orchestrator is reachable from a
// pod, nor the sites from outside it. The orchestrator (with the pod's token) asks for them before creating a
// sandbox of an offline task, and reads a session's state back for the rule judge:
//   POST /worker/sites                       start them (once) → {url}: the base URL the task's start URL is put on
//   GET  /worker/sites/sessions/{session}    the session's state (what the sites' /__grove/state/{session} answers)
import type { FastifyInstance } from 'fastify';
import { GroveError } from '../protocol/errors.ts';

export function registerWorkerSites(scope: FastifyInstance, app: FastifyInstance): void {
  scope.post('/worker/sites', async () => app.grove.episodes.catalog.localSites());

  scope.get<{ Params: { session: string } }>('/worker/sites/sessions/:session', async (request) => {
    const state = await app.grove.episodes.catalog.siteSession(request.params.session);
    if (state === undefined) throw new GroveError('not_found', `No sites session ${request.params.session} on this worker.`);
    return state;
  });
}
