// A harness's recorded model calls (proxy records) as the steps of an episode: one step per call, with what the
// model answered (text, or its tool calls as JSON), the call's latency and tokens, and upstream errors.
import type { StepRecord } from '../../protocol/recording.ts';
import { responseOf } from '../../proxy/samples.ts';
import type { CallRecord } from '../../proxy/types.ts';

type Json = Record<string, any>;

/** What the model answered in one call, as text (tool calls as JSON lines). */
function answerText(r: CallRecord): string {
  const resp = responseOf(r);
  if (!resp) return r.response_text.slice(0, 4000);
  if (Array.isArray(resp.choices)) {
    const m = resp.choices[0]?.message ?? {};
    const calls = (m.tool_calls ?? []).map((t: Json) => JSON.stringify({ name: t.function?.name, arguments: t.function?.arguments }));
    return [m.content ?? '', ...calls].filter(Boolean).join('\n');
  }
  if (Array.isArray(resp.output)) {
    return resp.output
      .map((o: Json) => (o.type === 'message' ? (o.content ?? []).map((c: Json) => c.text ?? '').join('') : JSON.stringify({ type: o.type, name: o.name, arguments: o.arguments ?? o.action })))
      .join('\n');
  }
  return r.response_text.slice(0, 4000);
}

function tokens(usage: Record<string, unknown> | null | undefined): { prompt?: number; completion?: number } {
  if (!usage) return {};
  const n = (k: string) => (typeof usage[k] === 'number' ? (usage[k] as number) : undefined);
  return { prompt: n('prompt_tokens') ?? n('input_tokens'), completion: n('completion_tokens') ?? n('output_tokens') };
}

/** Step records of an episode from its rollout's calls (in arrival order, numbered from 1). */
export function callSteps(records: CallRecord[]): Omit<StepRecord, 'frame' | 'diff'>[] {
  return [...records]
    .sort((a, b) => a.seq - b.seq)
    .map((r, i) => {
      const t = tokens(r.usage);
      return {
        step: i + 1,
        ts: r.started_at,
        model_output: answerText(r),
        format: `harness ${r.endpoint}`,
        actions: [],
        url: '',
        title: '',
        tabs: [],
        events: [],
        last_action_error: r.error ? { code: r.error.kind, message: r.error.message } : null,
        timings: { action: 0, settle: 0, capture: 0, encode: 0, total: Math.round(r.duration_ms) },
        policy: { latency_ms: r.duration_ms, prompt_tokens: t.prompt, completion_tokens: t.completion },
      };
    });
}
