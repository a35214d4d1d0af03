// A claw sandbox on a worker pod: the worker runs the Claw apps (its own claw sandbox, on the pod's loopback) and
// the orchestrator's claw routes are answered by the worker's same routes (server/routes/claw.ts relays them):
// tools, calls, state, the audit log and reset. The grader runs here, on the task's audit log and final state read back
// from the worker.
// A browser paired with it (claw_sandbox) is placed on the same pod (backend.ts), the only place its origin is
// reachable; no other pod and nothing outside the pod reaches it (the worker NetworkPolicy admits the orchestrator).
import { RemoteSandbox } from './remote-sandbox.ts';

export class RemoteClawSandbox extends RemoteSandbox {
  /** One claw route of the worker's sandbox (`path` after /sandboxes/{id}/claw/), its JSON answer as given. */
  async relayClaw(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    return this.remote(async (c, wid) => {
      const res = await c.request(method, `/sandboxes/${encodeURIComponent(wid)}/claw/${path}`, method === 'POST' ? (body ?? {}) : undefined);
      return JSON.parse(await res.text()) as unknown;
    });
  }

  /** The worker's claw details now (after a reset to another task its task_id is that task's). */
  async clawInfo(): Promise<{ task_id: string | null } | null> {
    return this.remote(async (c, wid) => {
      const info = JSON.parse(await (await c.request('GET', `/sandboxes/${encodeURIComponent(wid)}`)).text()) as { claw?: { task_id: string | null } };
      return info.claw ?? null;
    });
  }
}
