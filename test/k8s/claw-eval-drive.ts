// Driving a Claw-Eval episode through an orchestrator's REST routes, and the same turns as a scripted policy of the
// batch path (one machine): what the claw-eval-pods tests compare.
import type { ClawEvalPolicy } from '../../runner/claw-eval/trial.ts';
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
