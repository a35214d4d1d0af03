// Public entry of the browser environment: compose the Chromium pool, the network gate and the warm pool.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import { LocalBrowserEnvironment } from './environment.ts';
import { startNetworkGate } from './network-gate.ts';
import { ChromiumPool } from './pool.ts';
import { DEFAULT_LIMITS } from './limits.ts';
import type { BrowserEnvironmentConfig } from './types.ts';

export type { BrowserEnvironment, BrowserEnvironmentConfig } from './types.ts';
export { LocalBrowserEnvironment } from './environment.ts';

/**
 * Starts the pool (Chromium processes) and the network gate, and begins filling the warm pool.
 * The returned environment owns both: `shutdown()` closes every sandbox, the pool and the gate.
 */
export async function createBrowserEnvironment(cfg: BrowserEnvironmentConfig & { log?: Logger }): Promise<LocalBrowserEnvironment> {
  const log = cfg.log ?? silentLogger;
  const pool = new ChromiumPool({
    executablePath: cfg.executablePath,
    processes: cfg.processes,
    recycleAfter: cfg.recycleAfter,
    dataDir: cfg.dataDir,
    headless: cfg.headless,
    extraArgs: cfg.extraArgs,
    log,
  });
  await pool.start();
  // Downloads of sandboxes a SIGKILLed server held: nothing survives a restart, so they are garbage now.
  if (pool.soleOwner()) await rm(join(cfg.dataDir, 'downloads'), { recursive: true, force: true });
  let gate;
  try {
    gate = await startNetworkGate({ log });
  } catch (e) {
    await pool.shutdown();
    throw e;
  }
  const limits = { ...DEFAULT_LIMITS, ...cfg.limits };
  const env = new LocalBrowserEnvironment({ source: pool, gate, dataDir: cfg.dataDir, warmPool: cfg.warmPool, warmPoolMaxMb: cfg.warmPoolMaxMb, log, limits, frameCache: cfg.frameCache });
  env.startWarm();
  return env;
}
