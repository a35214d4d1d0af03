// The shell environment of a pod-isolated worker (shellIsolation "pod", see pod-sandbox.ts): one sandbox at a time
// (the pod is its boundary: a second sandbox would share its user, files and network), create options checked
// against what the pod can give (its NetworkPolicy decides the network; there is no per-sandbox proxy or image).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GroveError } from '../protocol/errors.ts';
import type { ShellCreateOptions } from '../protocol/sandbox.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { podShellRefusal } from '../sandbox/pod-isolation.ts';
import type { ShellEnvironment } from './environment.ts';
import { PodShellSandbox } from './pod-sandbox.ts';
import type { ShellLimits } from './sandbox.ts';
import type { ShellSandbox } from './types.ts';

export interface PodShellEnvironmentOptions {
  /** The directory behind /workspace (an emptyDir in the pod). */
  workspace: string;
  network: 'deny' | 'internet';
  limits: ShellLimits;
  log?: Logger;
}

export function createPodShellEnvironment(opts: PodShellEnvironmentOptions): ShellEnvironment {
  const log = opts.log ?? silentLogger;
  const insideDir = fileURLToPath(new URL('./inside/', import.meta.url));
  const workspace = path.resolve(opts.workspace);
  let live: PodShellSandbox | null = null;
  let created = 0;
  return {
    cgroups: false,
    admit(spec: ShellCreateOptions): void {
      const why = podShellRefusal(spec, opts.network);
      if (why) throw new GroveError('not_supported_on_backend', why);
      if (live) throw new GroveError('capacity_exhausted', 'A pod-isolated worker runs one shell sandbox at a time.', { retryAfter: 5 });
    },
    async create(id: string, spec: ShellCreateOptions): Promise<ShellSandbox> {
      const why = podShellRefusal(spec, opts.network);
      if (why) throw new GroveError('not_supported_on_backend', why);
      if (live) throw new GroveError('capacity_exhausted', 'A pod-isolated worker runs one shell sandbox at a time.', { retryAfter: 5 });
      created++;
      const sb: PodShellSandbox = new PodShellSandbox({
        id,
        spec,
        workspace,
        network: opts.network,
        limits: opts.limits,
        insideDir,
        log,
        release: () => {
          if (live === sb) live = null;
        },
      });
      live = sb;
      return sb;
    },
    async shutdown(): Promise<void> {
      await live?.close();
    },
    stats(): Record<string, number> {
      return { shell_sandboxes: live ? 1 : 0, shell_created_total: created };
    },
  };
}
