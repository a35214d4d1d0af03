// Server-sent events as model servers stream them: split into events, and assemble a stream into the one response
// object it stands for (a chat completion, the Responses API object of `response.completed`, or an Anthropic message).
import { createParser } from 'eventsource-parser';

export interface SseParse {
  /** The `data:` payloads in order (the `[DONE]` sentinel excluded). */
  data: string[];
  /** Event blocks that had no data line, or data that was not JSON (and not [DONE]). */
  malformed: number;
  done: boolean;
}

/**
 * Splits an SSE body into event data payloads. The fields are read by eventsource-parser (the WHATWG rules: multi-line
 * data joined with \n, one leading space dropped, CR/LF/CRLF, comments); the body is fed block by block so that a
 * block with no data and a field no event stream has counts as one malformed event, as does data that is not JSON.
 */
export function parseSse(text: string): SseParse {
  const data: string[] = [];
  let malformed = 0;
  let done = false;
  let events = 0;
  let errors = 0;
  const parser = createParser({
    onEvent: (e) => {
      events++;
      if (e.data === '[DONE]') {
        done = true;
        return;
      }
      try {
        JSON.parse(e.data);
        data.push(e.data);
      } catch {
        malformed++;
      }
    },
    onError: () => void errors++,
  });
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    events = 0;
    errors = 0;
    // A last block without its blank line still ends there (the recorded body is complete).
    parser.feed(`${block}\n\n`);
    if (events === 0 && errors > 0) malformed++;
  }
  return { data, malformed, done };
}

type Json = Record<string, any>;

interface ToolCallAcc {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

/** Assembles chat.completion.chunk events into one chat.completion (content, tool calls, logprobs, token ids, usage). */
function assembleChat(events: Json[]): Json | null {
  if (events.length === 0) return null;
  const first = events[0];
  const choices = new Map<number, { content: string | null; reasoning: string | null; tools: ToolCallAcc[]; finish: string | null; logprobs: unknown[] | null; tokenIds: number[] | null; role: string }>();
  let usage: Json | null = null;
  let promptTokenIds: number[] | null = null;
  for (const e of events) {
    if (e.usage) usage = e.usage;
    if (Array.isArray(e.prompt_token_ids)) promptTokenIds = e.prompt_token_ids;
    for (const c of (e.choices ?? []) as Json[]) {
      const idx = typeof c.index === 'number' ? c.index : 0;
      let acc = choices.get(idx);
      if (!acc) {
        acc = { content: null, reasoning: null, tools: [], finish: null, logprobs: null, tokenIds: null, role: 'assistant' };
        choices.set(idx, acc);
      }
      const d = (c.delta ?? {}) as Json;
      if (typeof d.role === 'string') acc.role = d.role;
      if (typeof d.content === 'string') acc.content = (acc.content ?? '') + d.content;
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (typeof reasoning === 'string') acc.reasoning = (acc.reasoning ?? '') + reasoning;
      for (const t of (d.tool_calls ?? []) as Json[]) {
        const ti = typeof t.index === 'number' ? t.index : acc.tools.length;
        const tc = (acc.tools[ti] ??= { function: { name: '', arguments: '' } });
        if (t.id) tc.id = t.id;
        if (t.type) tc.type = t.type;
        if (t.function?.name) tc.function.name += t.function.name;
        if (t.function?.arguments) tc.function.arguments += t.function.arguments;
      }
      if (Array.isArray(c.logprobs?.content)) acc.logprobs = [...(acc.logprobs ?? []), ...c.logprobs.content];
      if (Array.isArray(c.token_ids)) acc.tokenIds = [...(acc.tokenIds ?? []), ...c.token_ids];
      if (c.finish_reason) acc.finish = c.finish_reason;
    }
  }
  const out: Json = {
    id: first.id,
    object: 'chat.completion',
    created: first.created,
    model: first.model,
    choices: [...choices.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([index, a]) => {
        const message: Json = { role: a.role, content: a.content };
        if (a.reasoning !== null) message.reasoning_content = a.reasoning;
        if (a.tools.length) message.tool_calls = a.tools.map((t) => ({ id: t.id, type: t.type ?? 'function', function: t.function }));
        const choice: Json = { index, message, finish_reason: a.finish };
        if (a.logprobs) choice.logprobs = { content: a.logprobs };
        if (a.tokenIds) choice.token_ids = a.tokenIds;
        return choice;
      }),
    usage,
  };
  if (promptTokenIds) out.prompt_token_ids = promptTokenIds;
  return out;
}

/** The Responses API object a stream ends with (`response.completed`, else the last event carrying a response). */
function assembleResponses(events: Json[]): Json | null {
  let last: Json | null = null;
  for (const e of events) if (e.response && typeof e.response === 'object') last = e.response;
  return last;
}

/**
 * Anthropic Messages stream events (`message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
 * `message_stop`, as Anthropic's streaming reference describes them) assembled into the one message object a
 * non-streaming call returns: text, tool_use input from its JSON deltas, thinking, stop reason and usage.
 */
function assembleMessages(events: Json[]): Json | null {
  let message: Json | null = null;
  const blocks: Json[] = [];
  const partialJson = new Map<number, string>();
  for (const e of events) {
    if (e.type === 'message_start' && e.message) message = { ...e.message, content: [] };
    else if (e.type === 'content_block_start' && typeof e.index === 'number') blocks[e.index] = { ...e.content_block };
    else if (e.type === 'content_block_delta' && typeof e.index === 'number') {
      const b = (blocks[e.index] ??= {});
      const d = e.delta ?? {};
      if (d.type === 'text_delta') b.text = (b.text ?? '') + d.text;
      else if (d.type === 'input_json_delta') partialJson.set(e.index, (partialJson.get(e.index) ?? '') + (d.partial_json ?? ''));
      else if (d.type === 'thinking_delta') b.thinking = (b.thinking ?? '') + d.thinking;
      else if (d.type === 'signature_delta') b.signature = (b.signature ?? '') + d.signature;
    } else if (e.type === 'message_delta' && message) {
      Object.assign(message, e.delta ?? {});
      if (e.usage) message.usage = { ...message.usage, ...e.usage };
    }
  }
  if (!message) return null;
  for (const [i, text] of partialJson) {
    try {
      blocks[i].input = text ? JSON.parse(text) : {};
    } catch {
      blocks[i].input = text; // a stream cut inside the arguments: kept as the text received
    }
  }
  message.content = blocks.filter(Boolean);
  return message;
}

/** Assembles an SSE body for the endpoint it came from. */
export function assembleStream(endpoint: string, text: string): { assembled: Json | null; malformed: number } {
  const parsed = parseSse(text);
  const events = parsed.data.map((d) => JSON.parse(d) as Json);
  const assembled = endpoint.startsWith('/responses') ? assembleResponses(events) : endpoint.startsWith('/messages') ? assembleMessages(events) : assembleChat(events);
  return { assembled, malformed: parsed.malformed };
}
