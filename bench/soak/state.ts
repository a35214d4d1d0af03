// What the soak's parts share while it runs: the current Grove server and its epoch (one per restart), the run's
// flags, and the statistics and memory samples the summary is made of.
import type { ChildProcess } from 'node:child_process';
import type { GroveClient } from '../../client/index.ts';

export interface Server {
  proc: ChildProcess;
  client: GroveClient;
  url: string;
}

export const run = {
  /** The Grove server now running (replaced by each restart). */
  server: undefined as unknown as Server,
  /** Incremented by each server restart: an episode begun in an older epoch lost its server. */
  epoch: 0,
  /** A server restart in progress. */
  restarting: null as Promise<void> | null,
  /** When each heap snapshot (--heap-snapshots) stopped the server: [start, end] in ms since the epoch. */
  snapshotWindows: [] as [number, number][],
  stopping: false,
  /** When the last browser kill was injected (a creation it overlapped may fail: its browser died under it). */
  lastBrowserKillAt: 0,
  sitesUrl: '',
  faultUrl: '',
};

export const stats = {
  episodes: 0,
  episodes_ok: 0,
  episodes_attributed: {} as Record<string, number>,
  episodes_lost_unattributed: 0,
  lost_reasons: [] as string[],
  steps: 0,
  steps_over_deadline: 0,
  /** The first steps that ran over (when they ended, how long they took, their budget, their actions). */
  /** (With the CPU time the host stole from the machine while each ran, machine.ts.) */
  over_deadline_steps: [] as { at: number; ms: number; budget_ms: number; actions: string; stolen_ms: number }[],
  worst_step_over_budget_ms: -Infinity,
  /** Steps over their deadline that overlapped a heap snapshot (it stops the server): counted apart, not above. */
  steps_over_deadline_in_snapshot: 0,
  action_errors: {} as Record<string, number>,
  injected: {} as Record<string, number>,
  limit_events: {} as Record<string, number>,
};
export const inc = (o: Record<string, number>, k: string, n = 1) => {
  o[k] = (o[k] ?? 0) + n;
};

export interface MemorySample {
  t: number;
  rss: number;
  heap: number;
  live: number;
  /** The live heap by V8 space (old_space, code_space, …; server/heap-live.ts). */
  spaces: Record<string, number>;
  external: number;
  load1: number;
  /** The server's event-loop stalls of ≥ 1 s so far, and its longest lateness (s) (server/loop-stalls.ts). */
  stalls: number;
  /** Of them, those during which the server's loop thread ran (its own synchronous work). */
  busyStalls: number;
  loopMaxS: number;
  /** The machine's /proc/pressure/io `full` total (µs): time every non-idle task waited on the disk. */
  ioFullUs: number;
  /** Wall-clock ms the host kept this machine's CPUs from running, so far (machine.ts `stolenMs`). */
  stolenMs: number;
}
export const memory: MemorySample[] = [];
