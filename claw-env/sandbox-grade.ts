// Grading a Claw sandbox against the built-in task it runs, wherever its apps run: in this process (ClawSandbox), or
// on a worker pod (k8s/remote-claw.ts: the task id, audit log and final state are read back from the worker and
// graded here). POST /sandboxes/{id}/claw/grade and OpenEnv's claw environment (its terminal reward) grade through
// this one function, so a sandbox on a pod gets the same grade as one in this process.
import { ClawAuditResponse, ClawStateResponse } from '../protocol/claw.ts';
import { grade, type Grade } from './graders/grade.ts';
import { resolveClawSpec, type ClawSandbox } from './sandbox.ts';
import { parseState } from './state.ts';

/** A claw sandbox whose apps run on a worker pod (k8s/remote-claw.ts, which claw-env may not import): its routes. */
export interface RelayedClaw {
  relayClaw(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown>;
  clawInfo(): Promise<{ task_id: string | null } | null>;
  resetClaw(body: { task_id?: string }): Promise<unknown>;
}

/** The sandbox's relay to its worker, or null for a sandbox whose apps are in this process. */
export function relayedClaw(sb: ClawSandbox): RelayedClaw | null {
  const r = sb as unknown as Partial<RelayedClaw>;
  return typeof r.relayClaw === 'function' && typeof r.clawInfo === 'function' ? (r as RelayedClaw) : null;
}

/** The grade of the sandbox's episode for `answer` (no LLM judge here), or null when it runs no built-in task. */
export async function gradeClawSandbox(sb: ClawSandbox, answer: string): Promise<Grade | null> {
  const remote = relayedClaw(sb);
  if (!remote) return sb.task ? grade(sb.task, { audit: sb.app.audit, final: sb.app.state, answer }) : null;
  const [info, audit, state] = await Promise.all([remote.clawInfo(), remote.relayClaw('GET', 'audit'), remote.relayClaw('GET', 'state')]);
  if (!info?.task_id) return null;
  // The worker's current task (a reset may have switched it), resolved here (an id this server does not know: 400).
  const task = resolveClawSpec({ type: 'claw', task_id: info.task_id, labels: {} }).task;
  if (!task) return null;
  const entries = ClawAuditResponse.parse(audit).entries as unknown as ClawSandbox['app']['audit'];
  return grade(task, { audit: entries, final: parseState(ClawStateResponse.parse(state).state), answer });
}
