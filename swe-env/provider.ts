// Sandboxes for SWE evaluation straight from the local shell environment (no HTTP in between).
import { randomBytes } from 'node:crypto';
import type { ShellEnvironment, ShellSandbox } from '../shell-env/index.ts';
import type { SandboxProvider } from './evaluate.ts';

export function localProvider(env: ShellEnvironment, opts: { memoryMb?: number; cpu?: number } = {}): SandboxProvider {
  return {
    async acquire(): Promise<ShellSandbox> {
      const sb = await env.create(`swe_${randomBytes(6).toString('hex')}`, {
        type: 'shell',
        block_network: true,
        labels: {},
        ...(opts.memoryMb ? { memory_mb: opts.memoryMb } : {}),
        ...(opts.cpu ? { cpu: opts.cpu } : {}),
      });
      try {
        await sb.ready();
      } catch (err) {
        await sb.close();
        throw err;
      }
      return sb;
    },
    release: (sb) => sb.close(),
  };
}
