// The step pipeline: health check → each action (actions.ts) → settle by causality (settle.ts) → observation
// (observer.ts). One Progress is made per step (step-budget.ts) and handed down; each stage takes its slice, and
// recovery keeps its own reserve so a step that needed one still ends in time.
import type { Action } from '../protocol/action.ts';
import type { ActionError, Observation, ResolvedAction, SettleReport, StepResult } from '../protocol/observation.ts';
import { Progress } from '../sandbox/progress.ts';
import { ActionFailure, type ActionHost, type ActionRecord, actionDef, NO_SETTLE } from './actions.ts';
import { resolvePoint, type PointInput } from './coords.ts';
import type { Observer } from './observer.ts';
import type { Recovery } from './recovery.ts';
import { imageSize } from './resize.ts';
import { PROBE_MS, type SandboxState } from './sandbox-state.ts';
import { settle, type SettleHost } from './settle.ts';
import { actionMs as actionBudgetMs, OBSERVE_MS, observeBudgetMs, recoveryMs, stepBudgetMs } from './step-budget.ts';
import type { Tabs } from './tabs.ts';
import type { StepOptions } from './types.ts';
import { onFreshStack, TimeoutError } from './util.ts';

export class StepPipeline {
  constructor(
    private readonly s: SandboxState,
    private readonly tabs: Tabs,
    private readonly recovery: Recovery,
    private readonly observer: Observer,
  ) {}

  async step(actions: Action[], opts: StepOptions): Promise<StepResult> {
    const s = this.s;
    const t0 = Date.now();
    s.episode.steps++;
    const useSettle = opts.settle ?? s.options.settle;
    // The one deadline of this step: every wait below is bounded by a slice of it (step-budget.ts).
    // It carries the sandbox's life too: a close aborts it, and each stage stops (sandbox.ts answers sandbox_closed).
    const deadline = Progress.after(stepBudgetMs(s.options, actions, useSettle), 'step', { signal: s.lifeSignal });
    // Ended, it lets go of the sandbox's life signal and its timer at once (not at its deadline: back-to-back steps
    // would pile their listeners on the one signal for as long as a step may last).
    try {
      return await this.run(actions, opts, useSettle, t0, deadline);
    } finally {
      deadline.done();
    }
  }

  private async run(actions: Action[], opts: StepOptions, useSettle: boolean, t0: number, deadline: Progress): Promise<StepResult> {
    const s = this.s;
    // Actions and settles leave the observation and two recoveries their time.
    const work = deadline.reserve(OBSERVE_MS + 2 * recoveryMs(s.options));
    const recovery = deadline.reserve(OBSERVE_MS);
    const resolved: ResolvedAction[] = [];
    // Recovery between steps never fails the request: what it cannot repair is this step's error.
    let error: ActionError | null = await this.recovery.ensureHealthy(recovery).catch((e: unknown) => this.recovery.classifyFailure(e, recovery));
    let done = false;
    let answer: string | undefined;
    let actionMs = 0;
    let settleMs = 0;
    let settled: SettleReport | undefined;
    for (const a of error ? [] : actions) {
      const rec: ActionRecord = {};
      const ta = Date.now();
      const wantSettle = useSettle && !NO_SETTLE.has(a.action);
      // An action may change what the next capture shows: none before it is answered again (frame-cache.ts).
      if (a.action !== 'wait') this.observer.frames.invalidate();
      // A title read by an earlier action's settle is out of date once this action runs.
      s.episode.settledTitle = null;
      if (wantSettle) s.net.begin();
      let err: ActionError | null = null;
      // The action plus the responsiveness probe stay within its budget (action_timeout_ms, or a wait's length).
      const budget = actionBudgetMs(s.options, a);
      const ad = work.within(a.action === 'wait' ? budget : Math.max(budget - Math.min(PROBE_MS, budget / 4), budget * 0.75), `action ${a.action}`);
      try {
        // Out of time, the action is cancelled (ad's signal aborts: its cleanups stop a navigation, typing stops
        // between keys), not left running into the settle and the next step.
        // On a fresh stack: the Playwright calls inside capture 2 frames each, not this step's whole chain.
        const r = await ad.race(onFreshStack(() => actionDef(a.action).run(this.host(ad), a, rec)), `action ${a.action}`);
        if (r?.done) {
          done = true;
          answer = r.answer;
        }
      } catch (e) {
        err = await this.recovery.classifyFailure(e, recovery);
      } finally {
        ad.done();
      }
      const ms = Date.now() - ta;
      actionMs += ms;
      s.throwIfClosed();
      if (wantSettle && !err) {
        // Settle's own cap (settle_max_ms from the action's end), never past the step's work.
        const { report: st, title } = await settle(this.settleHost(), s.net, ta, work.within(s.options.settle_max_ms, `settle after ${a.action}`), s.options.settle_quiet_ms);
        s.episode.settledTitle = title;
        settleMs += st.ms;
        settled = mergeSettle(settled, st);
        // Settling to the cap may mean a busy page (the input was acknowledged before the script spun): one that
        // fails a second probe too is reopened (page_unresponsive). One that answers the second was only slow (a
        // loaded machine): the action was delivered, so it is no error. Reported as `timeout`, it made a policy
        // take a click again whose effect had landed (the demo's "Add to cart" twice at load ~40).
        if (st.stopped === 'cap' && !(await this.recovery.responsive(s.page, recovery))) {
          const e = await this.recovery.classifyFailure(new TimeoutError(`settle after ${a.action}`, s.options.settle_max_ms), recovery);
          err = e.code === 'timeout' ? null : e;
        }
      } else s.net.end();
      resolved.push({ action: a, ...rec, error: err, ms });
      if (!err && rec.css) s.episode.pointer = rec.to_css ?? rec.css;
      if (err) {
        error = err;
        break;
      }
      if (done) break;
    }
    s.throwIfClosed();
    const observation = await this.observer.observe(opts, error, actionMs, settleMs, t0, deadline);
    if (settled) observation.settle = settled;
    const result: StepResult = { observation, actions: resolved, done };
    if (answer !== undefined) result.answer = answer;
    return result;
  }

  async observe(opts: StepOptions): Promise<Observation> {
    const t0 = Date.now();
    const deadline = Progress.after(observeBudgetMs(this.s.options), 'observation', { signal: this.s.lifeSignal });
    try {
      const recovery = deadline.reserve(OBSERVE_MS);
      const error = await this.recovery.ensureHealthy(recovery).catch((e: unknown) => this.recovery.classifyFailure(e, recovery));
      return await this.observer.observe(opts, error, 0, 0, t0, deadline);
    } finally {
      deadline.done();
    }
  }

  private host(deadline: Progress): ActionHost {
    const s = this.s;
    const o = s.options;
    const coords = { viewport: o.viewport, image: imageSize(o.viewport, o.device_scale_factor ?? 1, o.resize), defaultSpace: o.coordinate_space, defaultDivisor: o.rel_divisor };
    return {
      get page() {
        return s.page;
      },
      viewport: o.viewport,
      progress: deadline,
      resolve: (p: PointInput) => {
        const r = resolvePoint(p, coords);
        if (!r.ok) throw new ActionFailure('invalid_coordinates', r.message);
        return r;
      },
      somElement: (label: number) => {
        if (s.episode.lastSom === null) return null;
        // Labels are boxes on the page they were made on: never click them on another page or document.
        const stale = s.episode.somPage !== s.page ? 'another tab is active now' : s.episode.somStale;
        if (stale) {
          throw new ActionFailure('labels_stale', `The Set-of-Mark labels are out of date (${stale}); observe again with som enabled and use the new labels.`);
        }
        return s.episode.lastSom.find((e) => e.label === label);
      },
      navigate: (kind, url) => this.tabs.navigate(kind, url, deadline),
      newTab: (url) => this.tabs.newTab(url, deadline),
      switchTab: (i) => this.tabs.switchTab(i, deadline),
      closeTab: (i) => this.tabs.closeTab(i, deadline),
    };
  }

  private settleHost(): SettleHost {
    const s = this.s;
    return {
      get page() {
        return s.page;
      },
      evaluate: async (expression, p) => {
        const run = async () => {
          const session = await s.session(s.page);
          const r = (await session.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })) as {
            result?: { value?: unknown };
            exceptionDetails?: unknown;
          };
          return r.exceptionDetails ? null : (r.result?.value ?? null);
        };
        return p.race(run(), 'settle probe');
      },
      waitPageChange: (from, p) => s.waitPageChange(from, p),
    };
  }
}

/** One report for a step of several actions: times and counts add up, the worst stop reason wins. */
function mergeSettle(a: SettleReport | undefined, b: SettleReport): SettleReport {
  if (!a) return b;
  const rank = { caused_done: 0, navigation: 1, cap: 2 } as const;
  const waited_for = { ...a.waited_for };
  for (const [k, n] of Object.entries(b.waited_for)) waited_for[k] = (waited_for[k] ?? 0) + n;
  return { ms: a.ms + b.ms, stopped: rank[b.stopped] >= rank[a.stopped] ? b.stopped : a.stopped, waited_for };
}
