// Driving a Claw-Eval episode through an orchestrator's REST routes, and the same turns as a scripted policy of the
// batch path (one machine): what the claw-eval-pods tests compare.
import { GroveClient } from '../../client/index.ts';
import type { PreparedCheckout } from '../../claw-env/claw-eval/host.ts';
import { clawEvalSandboxTools } from '../../claw-env/claw-eval/prompt.ts';
import { ensureClawEvalSandboxPython } from '../../claw-env/claw-eval/pyenv.ts';
import { runClawEval } from '../../runner/claw-eval/run.ts';
import type { ClawEvalPolicy } from '../../runner/claw-eval/trial.ts';
import { clientShellProvider } from '../../runner/swe/shell-session.ts';
import type { Answer } from '../support/http-api.ts';

/** Scripted turns: each a text answer (no tool calls) or one tool call. */
export type Turn = { say: string } | { call: string; args: Record<string, unknown> };

export function scripted(turns: Turn[]): ClawEvalPolicy {
  return {
    name: 'scripted-turns',
    next: async (_m, _t, ctx) => {
      const t = turns[ctx.turn - 1] ?? { say: '' };
      return 'say' in t ? { text: t.say, tool_calls: [] } : { text: '', tool_calls: [{ id: `c${ctx.turn}`, name: t.call, arguments: JSON.stringify(t.args) }] };
    },
  };
}

/** What drive calls: an Api (test/support/http-api.ts) or a test's own (an orchestrator's inject). */
export type Caller = (method: string, url: string, body?: unknown) => Promise<Pick<Answer, 'status' | 'json' | 'text'>>;

/** Calls into a server in this process (an orchestrator's fastify app) by inject. */
export function injectCaller(app: { inject(o: { method: 'GET'; url: string; payload?: object }): Promise<{ statusCode: number; body: string }> }): Caller {
  return async (method, url, body) => {
    const r = await app.inject({ method: method as 'GET', url, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: r.statusCode, json: r.body ? JSON.parse(r.body) : undefined, text: r.body };
  };
}

/** A `claw_eval_task` episode created and waited for until ready (an error with the answer otherwise); its id. */
export async function createReady(api: Caller, task: string, timeoutS = 240): Promise<string> {
  const r = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: task });
  if (r.status !== 201) throw new Error(`create ${task}: ${r.status} ${r.text}`);
  const w = await api('GET', `/sandboxes/${r.json.sandbox_id}/wait?timeout=${timeoutS}`);
  if (w.json?.status !== 'ready') throw new Error(`${task} not ready: ${w.text}`);
  return r.json.sandbox_id as string;
}

/** The same turns on one machine, for an episode with the sandbox tools: the batch path, the tools on a shell sandbox
 * of a local server (bubblewrap, no network); the grade's task_score and scores. */
export async function oneMachineWithTools(
  local: { url: string; apiKey: string },
  checkout: { root: string; prepared: PreparedCheckout; indexUrl?: string },
  task: string,
  turns: Turn[],
): Promise<[number, Record<string, number>]> {
  const client = new GroveClient({ baseUrl: local.url, apiKey: local.apiKey });
  try {
    const p = checkout.prepared;
    const sandboxPy = await ensureClawEvalSandboxPython(checkout.root, { indexUrl: checkout.indexUrl });
    const provider = clientShellProvider(client, { block_network: true });
    const b = await runClawEval({
      root: p.root, python: p.python, driver: p.driver, tasks: [p.tasks.find((t) => t.id === task)!], trials: 1, concurrency: 1, policy: scripted(turns),
      sandbox: { python: sandboxPy.python, tools: await clawEvalSandboxTools(p), open: async (labels) => provider.open(labels) },
    });
    const g = b.results[0]!.grade!;
    return [g.task_score, g.scores];
  } finally {
    client.close();
  }
}

/** The turns over REST: calls to /call, texts to /reply, then /grade (the last text, when no reply ended the
 * conversation, is the answer: the batch loop's last assistant message). */
export async function drive(api: Caller, id: string, turns: Turn[]): Promise<{ replies: any[]; calls: number[]; grade: any }> {
  const replies = [];
  const calls = [];
  for (const t of turns) {
    if ('call' in t) {
      const r = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: t.call, arguments: t.args });
      if (r.status !== 200) throw new Error(`call ${t.call}: ${r.status} ${r.text}`);
      calls.push(r.json.status);
    } else {
      const r = await api('POST', `/sandboxes/${id}/claw-eval/reply`, { text: t.say });
      if (r.status !== 200) throw new Error(`reply: ${r.status} ${r.text}`);
      replies.push(r.json);
    }
  }
  const g = await api('POST', `/sandboxes/${id}/claw-eval/grade`, {});
  if (g.status !== 200) throw new Error(`grade: ${g.status} ${g.text}`);
  return { replies, calls, grade: g.json };
}
