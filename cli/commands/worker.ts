// `grove worker`: what a worker pod runs — the same REST service, bound to every interface, sandboxes of the pod's
// template only, and never without its token (GROVE_API_KEY, set by the orchestrator in the pod spec).
import { ConfigError } from '../../sandbox/config.ts';
import type { Command } from '../command.ts';
import { writeFileSync } from 'node:fs';
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
        oomFirst(process.env.GROVE_OOM_SCORE_ADJ);
        if (config.apiKeySource === 'generated' || config.authDisabled) {
          throw new ConfigError('a worker needs its token: set GROVE_API_KEY (the orchestrator puts it in the pod spec)');
        }
        if (config.backend !== 'local') throw new ConfigError('a worker runs its sandboxes itself (backend local)');
      },
    }),
};

/**
 * GROVE_OOM_SCORE_ADJ (a paired shell's worker, k8s/paired-shell.ts: 1000): this worker and everything it starts are
 * the first the kernel kills when their cgroup (the pod's) runs out of memory. Raising one's own score needs no
 * privilege; a value that cannot be set refuses to start.
 */
function oomFirst(value: string | undefined): void {
  if (value === undefined || value === '') return;
  const n = /^-?[0-9]{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(n >= -1000 && n <= 1000)) throw new ConfigError(`GROVE_OOM_SCORE_ADJ must be an integer from -1000 to 1000 (got ${JSON.stringify(value.slice(0, 40))})`);
  try {
    writeFileSync('/proc/self/oom_score_adj', String(n));
  } catch (err) {
    throw new ConfigError(`GROVE_OOM_SCORE_ADJ=${n} could not be set: ${(err as Error).message}`);
  }
}
