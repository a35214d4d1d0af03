// Orchard-GUI's per-turn format reward. Facts from MSR-Orchard/slime examples/orchard_gui/reward_browser.py
// (`_compute_turn_format_reward`, read for its rules; the code here is our own) and the regex parsing of
// examples/orchard_gui/base/utils.py `ToolParser`: a turn scores 1 when its text — trimmed, a trailing `<|im_end|>`
// removed — holds `</think>` (a thinking model's output starts inside the think block, so only the closing tag is
// required) and at least one `<tool_call>{…}</tool_call>` block whose JSON object has a "name"; a block whose JSON
// does not parse fails the whole turn; else 0. The tool's name is not checked against the tool list. With turn-level
// samples (Orchard-GUI's recipe) the trajectory's reward is computed on its last turn: 1 only when that turn's
// format score is 1 and the judge says SUCCESS (rewards.ts).

const TOOL_CALL = /<tool_call>\s*(\{.*?\})\s*<\/tool_call>/gs;

/** The format reward of one model turn (its raw text, or Grove's JSON form of an assistant message with tool calls). */
export function orchardTurnFormat(output: string): 0 | 1 {
  let text = output.trim();
  if (text.endsWith('<|im_end|>')) text = text.slice(0, -'<|im_end|>'.length).trimEnd();
  const message = assistantMessage(text);
  if (message) {
    // Tool calls parsed by the server (OpenAI `tool_calls`): they are the parsed calls; the thought is the content.
    const named = message.tool_calls.filter((c) => typeof (c.function?.name ?? c.name) === 'string');
    return (message.content ?? '').includes('</think>') && named.length > 0 ? 1 : 0;
  }
  if (!text.includes('</think>')) return 0;
  let calls = 0;
  for (const m of text.matchAll(TOOL_CALL)) {
    let v: unknown;
    try {
      v = JSON.parse(m[1]!);
    } catch {
      return 0;
    }
    if (v && typeof v === 'object' && !Array.isArray(v) && 'name' in v) calls++;
  }
  return calls > 0 ? 1 : 0;
}

type ToolCallLike = { name?: unknown; function?: { name?: unknown } };

/** Grove's encoding of an assistant message as model output: `{"content": …, "tool_calls": […]}`. */
function assistantMessage(text: string): { content: string | null; tool_calls: ToolCallLike[] } | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(text) as { content?: unknown; tool_calls?: unknown };
    if (!Array.isArray(v.tool_calls)) return undefined;
    return { content: typeof v.content === 'string' ? v.content : null, tool_calls: v.tool_calls as ToolCallLike[] };
  } catch {
    return undefined;
  }
}
