// The environments served under /openenv/<env>: one adapter each.
import { browserAdapter } from './envs/browser.ts';
import { clawAdapter } from './envs/claw.ts';
import { shellAdapter } from './envs/shell.ts';
import { sweAdapter } from './envs/swe.ts';
import type { OpenEnvAdapter } from './envs/types.ts';

export const ENV_NAMES = ['browser', 'shell', 'claw', 'swe'] as const;

/** A fresh set of adapters (the SWE one holds the fixture repository of this server until close). */
export function adapters(): { byName: Map<string, OpenEnvAdapter>; close(): Promise<void> } {
  const swe = sweAdapter();
  const list: OpenEnvAdapter[] = [browserAdapter, shellAdapter, clawAdapter, swe];
  return { byName: new Map(list.map((a) => [a.name, a])), close: () => swe.close() };
}
