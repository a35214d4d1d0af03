// Overload block (issue 35): 32, then 64 episodes started at once against one server with default admission
// control. Each episode: create (a 503 overloaded / capacity_exhausted counts as refused; no retry here, the
// refusal is what is measured), wait for ready, 10 click steps, delete. Printed: accepted, refused with 503,
// completed, screenshots missing (target 0: a step answers its screenshot or 503 capture_timeout, both counted
// here as missing), the worst step past its deadline (target 0; the deadline of a 1-click step is computed as
// browser-env/step-budget.ts does) and the server's worst event-loop delay and its stalls from /metrics.
import type { Action } from '../../protocol/action.ts';
import { GroveApiError } from '../../client/index.ts';
import { BrowserCreateOptions } from '../../protocol/sandbox.ts';
import { stepBudgetMs } from '../../browser-env/step-budget.ts';
import type { Fixture } from './fixture.ts';
import { clickAction, createBody, startServer, type Server } from './server.ts';
import { now, QUICK, r2, type Report } from './stats.ts';

const STEPS = QUICK ? 3 : 10;
const WAVES = QUICK ? [8, 16] : [32, 64];

interface Tally {
  accepted: number;
  refused: number;
  /** Accepted, then refused when its start slot came (a capture missed while it waited: sandbox/admission.ts). */
  refusedQueued: number;
  failedStart: number;
  completed: number;
  stepErrors: number;
  missingShots: number;
  /** Why screenshots were missing (capture_timeout messages, their cause part), with counts. */
  why: Map<string, number>;
  worstPastDeadlineMs: number;
}

async function episode(s: Server, fixture: Fixture, deadlineMs: number, t: Tally): Promise<void> {
  let id: string;
  try {
    id = (await s.client.createSandbox(createBody(fixture) as never)).sandbox_id;
  } catch (e) {
    if (e instanceof GroveApiError && e.status === 503) t.refused++;
    else t.failedStart++;
    return;
  }
  t.accepted++;
  try {
    try {
      await s.client.waitSandbox(id, 120);
    } catch (e) {
      if (e instanceof GroveApiError && e.code === 'overloaded') t.refusedQueued++;
      else t.failedStart++;
      return;
    }
    for (let i = 0; i < STEPS; i++) {
      const t0 = now();
      try {
        const r = await s.client.step(id, { action: clickAction(i) as Action });
        if (!r.observation.screenshot?.base64) t.missingShots++;
        if (r.observation.last_action_error) t.stepErrors++;
      } catch (e) {
        if (e instanceof GroveApiError && e.code === 'capture_timeout') {
          t.missingShots++;
          // "… (observation failed: waiting for a screenshot turn …)" or "(… screenshot capture did not finish …)".
          const cause = (/\((?:observation failed: )?([^(]*?)(?: did not finish| \(|\))/.exec(e.message)?.[1] ?? e.message).slice(0, 60);
          t.why.set(cause, (t.why.get(cause) ?? 0) + 1);
        }
        else t.stepErrors++;
      }
      t.worstPastDeadlineMs = Math.max(t.worstPastDeadlineMs, now() - t0 - deadlineMs);
    }
    t.completed++;
  } finally {
    await s.client.deleteSandbox(id).catch(() => undefined);
  }
}

/**
 * From the server's /metrics: its worst event-loop lateness so far (grove_process_event_loop_max_delay_seconds, when
 * exported), the captures that waited for their turn on a browser (browser-env/capture-gate.ts) and the capture
 * capacity admission counted last (absent while no gate was full).
 */
async function serverFigures(s: Server): Promise<{ loop: number | null; stalls: number | null; queued: number | null; capacity: number | null }> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: { 'x-api-key': s.key } })).text();
  const m = /^grove_process_event_loop_\w*max\w*\s+([0-9.e+-]+)$/m.exec(text);
  const st = /^grove_process_event_loop_stalls_total\s+([0-9.e+-]+)$/m.exec(text);
  const stat = (name: string) => {
    const v = new RegExp(`^grove_backend\\{backend="local",stat="${name}"\\} ([0-9.e+-]+)$`, 'm').exec(text);
    return v ? Number(v[1]) : null;
  };
  return { loop: m ? r2(Number(m[1]) * 1000) : null, stalls: st ? Number(st[1]) : null, queued: stat('browser_captures_queued_total'), capacity: stat('browser_capture_capacity') };
}

export async function overloadBlock(fixture: Fixture, { results, say }: Report): Promise<void> {
  const defaults = BrowserCreateOptions.parse({ type: 'browser', settle: false });
  const deadlineMs = stepBudgetMs(defaults, [clickAction(0) as Action], false);
  for (const n of WAVES) {
    const s = await startServer(['--max-sandboxes', '64']);
    try {
      const t: Tally = { accepted: 0, refused: 0, refusedQueued: 0, failedStart: 0, completed: 0, stepErrors: 0, missingShots: 0, why: new Map(), worstPastDeadlineMs: -Infinity };
      const t0 = now();
      await Promise.all(Array.from({ length: n }, () => episode(s, fixture, deadlineMs, t)));
      const worst = t.worstPastDeadlineMs === -Infinity ? 0 : Math.max(0, Math.round(t.worstPastDeadlineMs));
      const { loop, stalls, queued, capacity } = await serverFigures(s);
      Object.assign(results, {
        [`overload_${n}_accepted`]: t.accepted,
        [`overload_${n}_refused_503`]: t.refused,
        [`overload_${n}_refused_after_queue`]: t.refusedQueued,
        [`overload_${n}_completed`]: t.completed,
        [`overload_${n}_screenshots_missing`]: t.missingShots,
        [`overload_${n}_worst_step_past_deadline_ms`]: worst,
      });
      say(
        `overload ${n} episodes at once: accepted ${t.accepted}, refused 503 ${t.refused}, refused after queueing ${t.refusedQueued}, failed starts ${t.failedStart}, ` +
          `completed ${t.completed}, screenshots missing ${t.missingShots} (target 0${t.why.size ? `: ${[...t.why].map(([k, v]) => `${v}× ${k}`).join('; ')}` : ''}), step errors ${t.stepErrors}, ` +
          `worst step past deadline ${worst} ms (target 0), server loop max ${loop ?? 'n/a'} ms, stalls >= 1 s ${stalls ?? 'n/a'}, captures that waited their turn ${queued ?? 'n/a'}, ` +
          `capture capacity at the end ${capacity ?? 'not measured'}, ${Math.round((now() - t0) / 1000)} s`,
      );
    } finally {
      await s.stop();
    }
  }
}
