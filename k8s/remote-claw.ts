// A claw sandbox on a worker pod: the worker runs the Claw apps (its own claw sandbox, on the pod's loopback) and
// the orchestrator's claw routes are answered by the worker's same routes (server/routes/claw.ts relays them):
// tools, calls, state, the audit log and reset. The grader runs here, on the task's audit log and final state read back
// from the worker.
// A browser paired with it (claw_sandbox) is placed on the same pod (backend.ts), the only place its origin is
// reachable; no other pod and nothing outside the pod reaches it (the worker NetworkPolicy admits the orchestrator).
// Every replica can pair with it: one that adopted it reads its origin and token from the worker.
import type { GroveClient } from '../client/index.ts';
import type { SandboxDetails } from '../sandbox/types.ts';
import { RemoteSandbox } from './remote-sandbox.ts';

/** The shape of claw-env's CallResult (which k8s/ may not import): what an in-process caller (MCP) reads. */
export interface RemoteCallResult {
  status: number;
  body: unknown;
  retryAfter?: number;
  changes: unknown[];
  entry: { seq: number };
}

export class RemoteClawSandbox extends RemoteSandbox {
  /** The tool definitions the worker's sandbox offers (read at start and after a reset to another task). */
  private tools: unknown[] = [];

  protected override async started(client: GroveClient, wid: string): Promise<void> {
    const res = await client.request('GET', `/sandboxes/${encodeURIComponent(wid)}/claw/tools`);
    this.tools = (JSON.parse(await res.text()) as { tools: unknown[] }).tools;
    // Adopted from another replica: the origin, login URL and token a paired browser needs are the worker's own
    // sandbox details (the pod token reads them), so any replica pairs with it (no secret in the pod's records).
    if (!this.details().claw) {
      const info = JSON.parse(await (await client.request('GET', `/sandboxes/${encodeURIComponent(wid)}`)).text()) as { claw?: SandboxDetails['claw'] };
      if (info.claw) this.setDetails({ ...this.details(), claw: info.claw });
    }
  }

  /** The tool definitions (OpenAI function-calling shape), as ClawSandbox.toolDefs() gives them (MCP's tools/list). */
  toolDefs(): unknown[] {
    return this.tools;
  }

  /** One tool call on the worker's apps, in ClawSandbox.call()'s shape (MCP's tools/call). */
  async call(tool: string, args: unknown, actor = 'tool'): Promise<RemoteCallResult> {
    const r = (await this.relayClaw('POST', 'call', { tool, arguments: args, actor })) as { status: number; result?: unknown; error?: unknown; changes: unknown[]; seq: number; retry_after?: number };
    return { status: r.status, body: r.status === 200 ? r.result : { error: r.error }, changes: r.changes, entry: { seq: r.seq }, ...(r.retry_after !== undefined ? { retryAfter: r.retry_after } : {}) };
  }

  /** Relays a reset; after one to another task, that task's tools. */
  async resetClaw(body: { task_id?: string }): Promise<unknown> {
    const out = await this.relayClaw('POST', 'reset', body);
    if (body.task_id !== undefined) this.tools = ((await this.relayClaw('GET', 'tools')) as { tools: unknown[] }).tools;
    return out;
  }

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
