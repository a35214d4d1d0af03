// One soak episode: create a browser sandbox on an offline site, take STEPS_PER_EPISODE random steps (every other
// episode meets one page fault), delete it; a failure is attributed to a known cause (a restart, a browser kill,
// capacity) or counted as lost.
import { stepBudgetMs } from '../../browser-env/step-budget.ts';
import { GroveApiError } from '../../client/index.ts';
import type { Action } from '../../protocol/action.ts';
import { BrowserCreateOptions } from '../../protocol/sandbox.ts';
import { DEADLINE_SLACK_MS, PAGE_FAULTS, SB_OPTIONS, STEPS_PER_EPISODE, type PageFault } from './config.ts';
import { faultActions } from './fault-pages.ts';
import { stolenMs } from './machine.ts';
import { inc, run, stats } from './state.ts';

let pageFaultTurn = 0;

class Attributed extends Error {
  constructor(
    cause: string,
    /** Seconds the server asked to wait before the next create. */
    readonly retryAfter?: number,
  ) {
    super(cause);
  }
}

function siteActions(rnd: () => number): Action[] {
  const x = Math.round(50 + rnd() * 1100);
  const y = Math.round(50 + rnd() * 800);
  const r = rnd();
  if (r < 0.45) return [{ action: 'click', x, y }];
  if (r < 0.65) return [{ action: 'scroll', direction: rnd() < 0.5 ? 'down' : 'up', amount: 3 }];
  if (r < 0.8) return [{ action: 'type', text: 'soak test', x, y }];
  if (r < 0.9) return [{ action: 'key', keys: 'Tab' }];
  return [{ action: 'back' }];
}

async function step(id: string, actions: Action[]): Promise<void> {
  const budget = stepBudgetMs(BrowserCreateOptions.parse({ type: 'browser', ...SB_OPTIONS }), actions);
  const t0 = Date.now();
  const stolen0 = stolenMs();
  const r = await run.server.client.step(id, { actions, screenshot: 'none' });
  const ms = Date.now() - t0;
  stats.steps++;
  // The diagnostic run's own heap snapshot stopped the server under this step (bench/soak.ts --heap-snapshots).
  const inSnapshot = run.snapshotWindows.some(([a, b]) => t0 < b && a < t0 + ms);
  if (!inSnapshot) stats.worst_step_over_budget_ms = Math.max(stats.worst_step_over_budget_ms, ms - budget);
  if (ms > budget + DEADLINE_SLACK_MS && inSnapshot) {
    stats.steps_over_deadline_in_snapshot++;
  } else if (ms > budget + DEADLINE_SLACK_MS) {
    stats.steps_over_deadline++;
    if (stats.over_deadline_steps.length < 30) {
      stats.over_deadline_steps.push({ at: Date.now(), ms, budget_ms: budget, actions: actions.map((a) => a.action).join(','), stolen_ms: Math.round(stolenMs() - stolen0) });
    }
  }
  const e = r.observation.last_action_error;
  if (e) inc(stats.action_errors, e.code);
  for (const ev of r.observation.events) if (ev.type === 'limit') inc(stats.limit_events, ev.limit);
}

/** Turns a failed call into an attribution (a known cause) or rethrows it as lost. */
function attribute(e: unknown, startEpoch: number, creatingSince?: number): never {
  if (run.epoch !== startEpoch || run.restarting) throw new Attributed('server_restart');
  // A sandbox whose creation overlapped a browser kill may fail to start (its replacement browser could not be
  // launched within the creation's budget on a loaded machine): the kill is the cause. Steps get no such pass.
  if (creatingSince !== undefined && run.lastBrowserKillAt >= creatingSince && e instanceof GroveApiError && ['internal_error', 'browser_crashed'].includes(e.code)) {
    throw new Attributed('browser_kill_during_create');
  }
  if (e instanceof GroveApiError) {
    if (e.status === 503 && e.code === 'capacity_exhausted') throw new Attributed('capacity');
    // Admission control refused the create (a 503 with Retry-After, sandbox/admission.ts): the server said it cannot
    // carry one more now. Counted apart; the worker waits Retry-After before its next create, as a client does.
    if ((e.status === 503 || e.status === 0) && e.code === 'overloaded' && creatingSince !== undefined) throw new Attributed('overloaded', e.retryAfter);
    // The server said it is too busy to open a browser in time, with a stable retryable code (a create after a
    // browser kill on a machine at load 30); counted apart, so a run shows how often it happens.
    // Status 503 when the create call says so, 0 when the creation failed later and the wait for it reports it.
    if ((e.status === 503 || e.status === 0) && e.code === 'browser_start_timeout') throw new Attributed('browser_start_timeout');
    if (e.code === 'sandbox_closed' || e.code === 'sandbox_not_found') throw new Attributed('server_restart');
  }
  throw e;
}

export async function episode(worker: number, n: number): Promise<void> {
  let seed = worker * 100_003 + n * 7919;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const startEpoch = run.epoch;
  stats.episodes++;
  let id: string | undefined;
  try {
    const sitesHost = new URL(run.sitesUrl).host;
    const faultHost = new URL(run.faultUrl).host;
    const site = ['shop', 'recipes', 'forms'][Math.floor(rnd() * 3)];
    const createdAt = Date.now();
    try {
      const info = await run.server.client.createAndWait(
        { type: 'browser', start_url: `${run.sitesUrl}/${site}/?grove_session=soak${worker}x${n}`, network: { allow: [sitesHost, faultHost] }, ...SB_OPTIONS },
        120,
      );
      id = info.sandbox_id;
    } catch (e) {
      attribute(e, startEpoch, createdAt);
    }
    // Every other episode meets one page fault, in rotation, at a random step.
    const fault: PageFault | null = n % 2 === 0 ? PAGE_FAULTS[pageFaultTurn++ % PAGE_FAULTS.length] : null;
    const faultAt = Math.floor(rnd() * STEPS_PER_EPISODE);
    for (let s = 0; s < STEPS_PER_EPISODE && !run.stopping; s++) {
      const actions = fault && s === faultAt ? faultActions(fault, run.faultUrl) : siteActions(rnd);
      if (fault && s === faultAt) inc(stats.injected, fault);
      try {
        await step(id!, actions);
      } catch (e) {
        attribute(e, startEpoch);
      }
    }
    stats.episodes_ok++;
  } catch (e) {
    if (e instanceof Attributed) {
      inc(stats.episodes_attributed, e.message);
      if (e.retryAfter) await new Promise((r) => setTimeout(r, e.retryAfter! * 1000));
    }
    else {
      stats.episodes_lost_unattributed++;
      const msg = e instanceof GroveApiError ? `${e.status} ${e.code}: ${e.message}` : e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      if (stats.lost_reasons.length < 20) stats.lost_reasons.push(msg.slice(0, 300));
    }
  } finally {
    if (id && run.epoch === startEpoch) await run.server.client.deleteSandbox(id).catch(() => undefined);
  }
}
