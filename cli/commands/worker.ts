// `grove worker`: what a worker pod runs — the same REST service, bound to every interface, sandboxes of the pod's
// template only, and never without its token (GROVE_API_KEY, set by the orchestrator in the pod spec).
import { ConfigError, loadConfig, type GroveConfig } from '../../sandbox/config.ts';
import type { Command } from '../command.ts';
import { parseServeArgs } from './serve.ts';

const usage = `grove worker [serve options]

Runs Grove in worker mode, as a Kubernetes worker pod does: the REST service on GROVE_HOST (0.0.0.0 in a pod)
and GROVE_PORT, with the pod's token as its API key. The token must be given (GROVE_API_KEY or --api-key);
a worker never generates one and never runs without auth. The orchestrator reaches it at podIP:port.

Takes the options of grove serve (see grove help serve).`;

export const worker: Command = {
  name: 'worker',
  summary: 'Run as a Kubernetes worker pod (the REST service with a required per-pod token)',
  usage,
  async run(argv) {
    let config: GroveConfig;
    try {
      const args = parseServeArgs(argv);
      config = loadConfig({ flags: args.flags, configFile: args.configFile });
      if (config.apiKeySource === 'generated' || config.authDisabled) {
        throw new ConfigError('a worker needs its token: set GROVE_API_KEY (the orchestrator puts it in the pod spec)');
      }
      if (config.backend !== 'local') throw new ConfigError('a worker runs its sandboxes itself (backend local)');
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`grove worker: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
    if (process.env.GROVE_SOURCE_MAPS !== '1') process.setSourceMapsEnabled(false);
    const { closeOnSignal, startServer } = await import('../../server/server.ts');
    let server;
    try {
      server = await startServer(config, { worker: true });
    } catch (err) {
      process.stderr.write(`grove worker: could not start: ${(err as Error).message}\n`);
      return err instanceof ConfigError ? 2 : 1;
    }
    process.stderr.write(`grove worker: listening on ${server.url}\n`);
    const { forced } = await closeOnSignal(server);
    return forced ? 130 : 0;
  },
};
