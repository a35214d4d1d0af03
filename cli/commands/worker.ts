// `grove worker`: what a worker pod runs — the same REST service, bound to every interface, sandboxes of the pod's
// template only, and never without its token (GROVE_API_KEY, set by the orchestrator in the pod spec).
import { ConfigError } from '../../sandbox/config.ts';
import type { Command } from '../command.ts';
import { runServer } from './startup.ts';

const usage = `grove worker [serve options]

Runs Grove in worker mode, as a Kubernetes worker pod does: the REST service on GROVE_HOST (0.0.0.0 in a pod)
and GROVE_PORT, with the pod's token as its API key. The token must be given (GROVE_API_KEY or --api-key);
a worker never generates one and never runs without auth. The orchestrator reaches it at podIP:port.

Takes the options of grove serve (see grove help serve).`;

export const worker: Command = {
  name: 'worker',
  summary: 'Run as a Kubernetes worker pod (the REST service with a required per-pod token)',
  usage,
  run: (argv) =>
    runServer(argv, {
      name: 'worker',
      // A paired shell's worker (k8s/paired-shell.ts) is ended by its orchestrator: a SIGTERM to itself closes it as
      // a pod's stop would.
      serverOptions: async () => ({ worker: true, ...(process.env.GROVE_WORKER_EXIT_ROUTE === '1' ? { workerExit: () => process.kill(process.pid, 'SIGTERM') } : {}) }),
      check(config) {
        if (config.apiKeySource === 'generated' || config.authDisabled) {
          throw new ConfigError('a worker needs its token: set GROVE_API_KEY (the orchestrator puts it in the pod spec)');
        }
        if (config.backend !== 'local') throw new ConfigError('a worker runs its sandboxes itself (backend local)');
      },
    }),
};
