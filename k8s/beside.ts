// The apps a worker pod serves beside its sandboxes, on its own loopback (docs/kubernetes.md, "What runs where"):
// the offline sites of `offline` tasks (server/worker-sites.ts) and the Claw apps of claw sandboxes. A pod's browser
// reaches them at 127.0.0.1 inside the pod; nothing of the orchestrator is exposed to a pod, and no pod reaches
// another's apps (the worker NetworkPolicy admits the orchestrator only). The orchestrator hands a task's start to
// the worker and reads back what a judge needs, through the worker's authenticated API.
import type { GroveClient } from '../client/index.ts';
import { GroveApiError } from '../client/index.ts';
import { GroveError } from '../protocol/errors.ts';

/** The host offline task files name the sites by (sites/tasks.ts PLACEHOLDER_BASE; test/k8s checks they agree). */
export const SITES_PLACEHOLDER = 'http://sites.grove.test';

/** Whether a browser create body starts on the offline sites (a task of the `offline` suite). */
export function startsOnSites(body: Record<string, unknown>): boolean {
  const url = body.start_url;
  return typeof url === 'string' && (url === SITES_PLACEHOLDER || url.startsWith(`${SITES_PLACEHOLDER}/`));
}

/**
 * Starts the worker's sites (once per pod) and puts the body's start URL on them: the placeholder host becomes the
 * worker's loopback base, and exactly that host:port is opened in the sandbox's network policy.
 */
export async function startOnWorkerSites(client: GroveClient, body: Record<string, unknown>): Promise<void> {
  const res = await client.request('POST', '/worker/sites');
  const { url } = JSON.parse(await res.text()) as { url: string };
  const base = new URL(url);
  if (base.hostname !== '127.0.0.1') throw new GroveError('internal_error', `The worker's sites are not on its loopback (${base.host}).`);
  body.start_url = url + (body.start_url as string).slice(SITES_PLACEHOLDER.length);
  const network = (body.network ?? {}) as { allow?: string[] };
  body.network = { ...network, allow: [...(network.allow ?? []), base.host] };
}

/** The state of a sites session on the worker; undefined when its sites never saw the session. */
export async function workerSiteState(client: GroveClient, session: string): Promise<unknown> {
  try {
    const res = await client.request('GET', `/worker/sites/sessions/${encodeURIComponent(session)}`);
    return JSON.parse(await res.text()) as unknown;
  } catch (err) {
    if (err instanceof GroveApiError && err.status === 404) return undefined;
    throw err;
  }
}
