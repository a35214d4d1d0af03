// Reading a successful chat-completions answer into a ChatResult: one JSON body (as the SDK parsed it), or an SSE
// stream whose content, reasoning and tool-call argument deltas are accumulated by index. The stream is read here
// with eventsource-parser from the SDK's raw response: the SDK's own Stream cost ~1 ms more CPU a call (measured). Fields of
// vLLM/SGLang beyond the API (reasoning_content, reasoning) are read from the raw body and chunks.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ChatResult, Sent, ToolCall, Usage } from './chat-types.ts';
import { APIError, truncate } from './errors.ts';

function parseToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((tc: any, i: number) => ({
    id: typeof tc?.id === 'string' ? tc.id : `call_${i}`,
    name: String(tc?.function?.name ?? ''),
    arguments:
      typeof tc?.function?.arguments === 'string'
        ? tc.function.arguments
        : JSON.stringify(tc?.function?.arguments ?? {}),
  }));
}

function parseUsage(u: any): Usage | null {
  if (!u || typeof u !== 'object') return null;
  const p = Number(u.prompt_tokens ?? 0);
  const c = Number(u.completion_tokens ?? 0);
  const t = Number(u.total_tokens ?? p + c);
  return { prompt_tokens: p, completion_tokens: c, total_tokens: t };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  // Some servers answer with content parts.
  if (Array.isArray(content)) {
    return content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

export function decodeChat(sent: Sent): Omit<ChatResult, 'latency_ms' | 'attempts'> {
  const { status, headers } = sent;
  let body: any = sent.data;
  // A body served without a JSON content type comes back from the SDK as text.
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch (e) {
      const text = sent.data as string;
      throw new APIError(status, undefined, `Malformed JSON in the chat-completions response (${text.length} bytes, starts ${JSON.stringify(truncate(text, 80))}): ${(e as Error).message}`, headers, { cause: e });
    }
  }
  if (body && typeof body === 'object' && body.error) {
    // Some gateways answer 200 with an error object.
    throw new APIError(status, body, undefined, headers);
  }
  const choice = body?.choices?.[0];
  if (!choice || typeof choice !== 'object') {
    throw new APIError(status, undefined, `The chat-completions response has no choices: ${truncate(JSON.stringify(body) ?? '', 200)}`, headers);
  }
  const msg = choice.message ?? {};
  const out: Omit<ChatResult, 'latency_ms' | 'attempts'> = {
    text: contentText(msg.content),
    tool_calls: parseToolCalls(msg.tool_calls),
    finish_reason: choice.finish_reason ?? null,
    usage: parseUsage(body.usage),
    raw: body,
  };
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning) out.reasoning = reasoning;
  return out;
}

/** Reads an SSE chat-completions stream, accumulating content and tool-call argument deltas by index. */
export async function readStream(res: Response, headers: Record<string, string>): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
  if (!res.body) throw new APIError(res.status, undefined, 'Streaming response has no body', headers);
  const decoder = new TextDecoder();
  const chunks: unknown[] = [];
  let text = '';
  let reasoning = '';
  let finish: string | null = null;
  let usage: Usage | null = null;
  let done = false;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();

  // Fields and events are read by eventsource-parser (the WHATWG rules); each event is handled here.
  const handleEvent = ({ event: eventName, data }: EventSourceMessage) => {
    if (!data) return;
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let obj: any;
    try {
      obj = JSON.parse(data);
    } catch (e) {
      throw new APIError(res.status, undefined, `Malformed JSON in a stream event: ${truncate(data, 120)}`, headers, { cause: e });
    }
    if (eventName === 'error' || obj?.error) throw new APIError(res.status, obj, undefined, headers);
    chunks.push(obj);
    if (obj.usage) usage = parseUsage(obj.usage);
    for (const choice of obj.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const d = choice.delta ?? {};
      if (typeof d.content === 'string') text += d.content;
      const r = d.reasoning_content ?? d.reasoning;
      if (typeof r === 'string') reasoning += r;
      for (const tc of d.tool_calls ?? []) {
        const idx = typeof tc.index === 'number' ? tc.index : calls.size;
        const cur = calls.get(idx) ?? { id: '', name: '', arguments: '' };
        if (tc.id) cur.id = tc.id;
        if (tc.function?.name) cur.name += tc.function.name;
        if (typeof tc.function?.arguments === 'string') cur.arguments += tc.function.arguments;
        calls.set(idx, cur);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  };

  const parser = createParser({ onEvent: (e) => !done && handleEvent(e) });
  const reader = res.body.getReader();
  try {
    while (!done) {
      const { value, done: eof } = await reader.read();
      if (eof) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    // A last event without its blank line still counts once the stream ended.
    if (!done) parser.feed(`${decoder.decode()}\n\n`);
  } finally {
    await reader.cancel().catch(() => {});
  }
  const tool_calls = [...calls.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([i, c]) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments }));
  const out: Omit<ChatResult, 'latency_ms' | 'attempts'> = { text, tool_calls, finish_reason: finish, usage, raw: chunks };
  if (reasoning) out.reasoning = reasoning;
  return out;
}
