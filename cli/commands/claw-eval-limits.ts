// The limits of `grove claw run --claw-eval`'s mock services: the batch holds no server, so it makes the shell
// environment a server would make from the same settings (server/server.ts shellEnvironment: GROVE_DATA_DIR,
// GROVE_SHELL_MEMORY_MB, GROVE_SHELL_MAX_PROCESSES, GROVE_SHELL_CPU, GROVE_SHELL_DISK_MB, …) and confines each trial's
// services with it exactly as the server confines its episodes' (server/claw-eval.ts clawEvalConfine): cgroups with a
// shell sandbox's memory, process and CPU limits, and a disk of disk_mb for their writable state under the
// environment's own folder (<dataDir>/shell/<instance>/), which its watchdog removes if this process dies. Where the
// host cannot run shell sandboxes (no root, no bubblewrap) the services run without these limits, and it says so.
import type { ClawEvalConfine } from '../../claw-env/claw-eval/services.ts';
import type { GroveConfig } from '../../sandbox/config.ts';
import type { Logger } from '../../sandbox/log.ts';

export interface ClawEvalServiceLimits {
  confine?: ClawEvalConfine;
  /** Why there are none (printed by the caller). */
  missing?: string;
  /** Removes the environment's folder, cgroups and mounts (idempotent). */
  close(): Promise<void>;
}

export async function openClawEvalServiceLimits(config: GroveConfig, log: Logger): Promise<ClawEvalServiceLimits> {
  const [{ shellEnvironment }, { clawEvalConfine }, { shellAvailability }] = await Promise.all([
    import('../../server/server.ts'),
    import('../../server/claw-eval.ts'),
    import('../../shell-env/index.ts'),
  ]);
  const avail = shellAvailability();
  if (!avail.ok) return { missing: avail.reason, close: async () => {} };
  const shell = await shellEnvironment(config, log);
  const confine = clawEvalConfine(shell);
  if (!shell || !confine) {
    await shell?.shutdown();
    return { missing: `this host's shell sandboxes give no process limits (shellIsolation ${config.shellIsolation})`, close: async () => {} };
  }
  let closing: Promise<void> | undefined;
  return { confine, close: () => (closing ??= shell.shutdown()) };
}
