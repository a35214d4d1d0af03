// Where a Claw episode's apps live: in this process (a ClawApp, the default for `grove claw run`) or in a Claw
// sandbox of a Grove server (its REST API). Both answer tool calls the same way and expose the audit log and
// state the graders read.
import type { AuditEntry } from '../../claw-env/app.ts';
import type { RecordChange } from '../../claw-env/diff.ts';
import { appForTask } from '../../claw-env/scripted.ts';
import type { ClawState } from '../../claw-env/state.ts';
import type { ClawTask } from '../../claw-env/tasks/format.ts';
import { ALL_TOOLS, openAiTool, type OpenAIToolDef } from '../../claw-env/tools.ts';

interface ToolAnswer {
  status: number;
  result?: unknown;
  error?: { code: string; message: string };
  retry_after?: number;
  changes: RecordChange[];
}

interface ClawEnvHandle {
  tools(): OpenAIToolDef[];
  call(name: string, args: string | Record<string, unknown>): Promise<ToolAnswer>;
  audit(): Promise<AuditEntry[]>;
  state(): Promise<ClawState>;
  close(): Promise<void>;
}

export type ClawEnvFactory = (task: ClawTask) => Promise<ClawEnvHandle>;

/** In-process apps for one trial. */
export const embeddedEnv: ClawEnvFactory = async (task) => {
  const app = appForTask(task);
  const tools = task.tool_defs ?? ALL_TOOLS.filter((t) => app.offers(t)).map(openAiTool);
  return {
    tools: () => tools,
    async call(name, args) {
      let parsed: unknown = args;
      if (typeof args === 'string') {
        try {
          parsed = args.trim() === '' ? {} : JSON.parse(args);
        } catch {
          parsed = { __unparseable_arguments__: args };
        }
      }
      const r = app.call(name, parsed);
      if (r.delayMs) await new Promise((ok) => setTimeout(ok, r.delayMs));
      return r.status === 200
        ? { status: 200, result: r.body, changes: r.changes }
        : { status: r.status, error: (r.body as { error: { code: string; message: string } }).error, changes: [], ...(r.retryAfter ? { retry_after: r.retryAfter } : {}) };
    },
    audit: async () => app.audit,
    state: async () => app.state,
    close: async () => undefined,
  };
};

/**
 * Claw sandboxes on a Grove server (built-in tasks only: the server resolves task_id). By default one sandbox per
 * trial, deleted after it. With `reuse`, a finished trial's sandbox goes back to an idle list and the next trial
 * starts there with POST /sandboxes/{id}/claw/reset {task_id} (fresh apps from the task's seed) instead of a
 * create, wait and delete; `dispose()` deletes the idle ones. (`faults` overrides need a create: no reuse then.)
 */
export function remoteEnv(baseUrl: string, apiKey: string | undefined, opts: { faults?: ClawTask['faults']; reuse?: boolean } = {}): ClawEnvFactory & { dispose(): Promise<void> } {
  const auth: Record<string, string> = apiKey ? { 'x-api-key': apiKey } : {};
  const req = async (method: string, path: string, body?: unknown): Promise<any> => {
    const headers = body === undefined ? auth : { ...auth, 'content-type': 'application/json' };
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  const reuse = opts.reuse === true && !opts.faults;
  const idle: string[] = [];
  const open = async (task: ClawTask): Promise<string> => {
    const again = reuse ? idle.pop() : undefined;
    if (again !== undefined) {
      try {
        await req('POST', `/sandboxes/${again}/claw/reset`, { task_id: task.id });
        return again;
      } catch {
        // Expired or deleted meanwhile: a new one below.
        await req('DELETE', `/sandboxes/${again}`).catch(() => undefined);
      }
    }
    const created = await req('POST', '/sandboxes', { type: 'claw', task_id: task.id, ...(opts.faults ? { faults: opts.faults } : {}), labels: { task: task.id } });
    const id: string = created.sandbox_id;
    const ready = await req('GET', `/sandboxes/${id}/wait?timeout=30`);
    if (ready.status !== 'ready') throw new Error(`claw sandbox ${id}: ${ready.status} ${ready.error?.message ?? ''}`);
    return id;
  };
  const factory: ClawEnvFactory = async (task) => {
    const id = await open(task);
    const tools = (await req('GET', `/sandboxes/${id}/claw/tools`)).tools as OpenAIToolDef[];
    return {
      tools: () => tools,
      call: async (name, args) => req('POST', `/sandboxes/${id}/claw/call`, { tool: name, arguments: args }),
      audit: async () => (await req('GET', `/sandboxes/${id}/claw/audit`)).entries,
      state: async () => (await req('GET', `/sandboxes/${id}/claw/state`)).state,
      close: async () => {
        if (reuse) idle.push(id);
        else await req('DELETE', `/sandboxes/${id}`);
      },
    };
  };
  return Object.assign(factory, {
    dispose: async () => {
      await Promise.all(idle.splice(0).map((id) => req('DELETE', `/sandboxes/${id}`).catch(() => undefined)));
    },
  });
}
