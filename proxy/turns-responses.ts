// OpenAI Responses API calls (`POST /v1/responses`) as turns. From OpenAI's public API reference: `instructions` (the
// system prompt of this call), `input` as a string or items — messages (input_text, input_image, output_text parts),
// function_call / function_call_output, computer_call / computer_call_output (a screenshot), reasoning — and an
// answer whose `output` items are the model's turn. A call that continues a stored conversation
// (`previous_response_id`) sends only the new items: its conversation is that earlier call's conversation and answer
// (found among the rollout's calls) followed by them. Mapped to chat-completions form: consecutive model items are one
// assistant message (text, tool_calls — a computer_call as a `computer` call with its action as arguments —,
// reasoning summary as reasoning_content); each call output is a `tool` message.
import type { CallRecord, Json, Turn } from './types.ts';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

function partsOf(content: unknown): string | Part[] {
  if (typeof content === 'string') return content;
  const parts: Part[] = [];
  for (const p of Array.isArray(content) ? content : []) {
    if ((p?.type === 'input_text' || p?.type === 'output_text' || p?.type === 'text') && typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
    else if (p?.type === 'input_image' && typeof p.image_url === 'string') parts.push({ type: 'image_url', image_url: { url: p.image_url } });
  }
  return parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n') : parts;
}

const MODEL_ITEMS = new Set(['function_call', 'computer_call', 'reasoning']);
const isModelItem = (i: Json) => MODEL_ITEMS.has(i?.type) || (i?.role === 'assistant' && (i.type === undefined || i.type === 'message'));

/** Consecutive model items (one model turn) as one assistant message. */
function assistantOf(items: Json[]): Json {
  const text: string[] = [];
  const calls: Json[] = [];
  const reasoning: string[] = [];
  for (const i of items) {
    if (i.type === 'function_call') calls.push({ id: i.call_id, type: 'function', function: { name: i.name, arguments: typeof i.arguments === 'string' ? i.arguments : JSON.stringify(i.arguments ?? {}) } });
    else if (i.type === 'computer_call') calls.push({ id: i.call_id, type: 'function', function: { name: 'computer', arguments: JSON.stringify(i.action ?? {}) } });
    else if (i.type === 'reasoning') {
      for (const s of Array.isArray(i.summary) ? i.summary : []) if (typeof s?.text === 'string') reasoning.push(s.text);
    } else {
      const c = partsOf(i.content);
      if (typeof c === 'string' ? c : c.length) text.push(typeof c === 'string' ? c : JSON.stringify(c));
    }
  }
  const msg: Json = { role: 'assistant', content: text.length ? text.join('\n') : null };
  if (calls.length) msg.tool_calls = calls;
  if (reasoning.length) msg.reasoning_content = reasoning.join('\n');
  return msg;
}

/** Input items in chat-completions form. */
function responsesItems(input: unknown): Json[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const items = Array.isArray(input) ? (input as Json[]) : [];
  const out: Json[] = [];
  for (let k = 0; k < items.length; ) {
    const i = items[k];
    if (isModelItem(i)) {
      let end = k;
      while (end < items.length && isModelItem(items[end])) end++;
      out.push(assistantOf(items.slice(k, end)));
      k = end;
      continue;
    }
    if (i?.type === 'function_call_output') out.push({ role: 'tool', tool_call_id: i.call_id, content: typeof i.output === 'string' ? i.output : JSON.stringify(i.output ?? null) });
    else if (i?.type === 'computer_call_output') {
      const url = i.output?.image_url;
      out.push({ role: 'tool', tool_call_id: i.call_id, content: typeof url === 'string' ? [{ type: 'image_url', image_url: { url } }] : '' });
    } else if (typeof i?.role === 'string') out.push({ role: i.role, content: partsOf(i.content) });
    k++;
  }
  return out;
}

export function responsesTurn(r: CallRecord, sent: Json, resp: Json, earlier: (responseId: string) => Turn | undefined): Turn | undefined {
  if (!Array.isArray(resp.output)) return undefined;
  const prev = typeof sent.previous_response_id === 'string' ? earlier(sent.previous_response_id) : undefined;
  let messages: Json[] = prev ? [...prev.messages, prev.completion] : [];
  const instructions = typeof sent.instructions === 'string' && sent.instructions ? { role: 'system', content: sent.instructions } : undefined;
  if (instructions) {
    // Instructions apply to the call that gives them: this call's replace a continued conversation's own.
    messages = messages[0]?.role === 'system' ? [instructions, ...messages.slice(1)] : [instructions, ...messages];
  }
  messages.push(...responsesItems(sent.input));
  const turn: Turn = { call_id: r.call_id, seq: r.seq, api: 'responses', messages, completion: assistantOf((resp.output as Json[]).filter(isModelItem)) };
  if (typeof resp.id === 'string') turn.response_id = resp.id;
  if (sent.tools) turn.tools = sent.tools;
  return turn;
}
