// Shared setup of the runner's slow tests: the real Grove server in-process, the offline sites, a client.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroveClient } from '../../client/index.ts';
import { startEmbeddedGrove, type EmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { startSites, type SitesServer } from '../../sites/server.ts';
import type { Task } from '../../protocol/task.ts';

export interface Harness {
  grove: EmbeddedGrove;
  sites: SitesServer;
  client: GroveClient;
  /** host:port of the sites, for the sandbox network allow-list. */
  sitesHost: string;
  tmp: string;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const tmp = await mkdtemp(join(tmpdir(), 'grove-runner-test-'));
  const grove = await startEmbeddedGrove({ browserProcesses: 1, dataDir: join(tmp, 'server'), env: {} });
  const sites = await startSites({ apiDelayMs: [0, 0] });
  const client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey });
  return {
    grove,
    sites,
    client,
    sitesHost: new URL(sites.url).host,
    tmp,
    async close() {
      await sites.close();
      await grove.close();
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

export function siteTask(h: Harness, id: string, path = '/shop/'): Task {
  return { id, suite: 'offline', site: 'shop', question: `open ${path}`, start_url: `${h.sites.url}${path}`, extra: {}, flags: [] };
}
