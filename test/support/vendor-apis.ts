// The Anthropic Messages (`POST /v1/messages`) and OpenAI Responses (`POST /v1/responses`) sides of the local test
// server: scripted replies in each API's own answer shape, and the request checks those APIs make (auth headers,
// required fields, tool_use ↔ tool_result pairing, previous_response_id and computer_call_output pairing), answered
// with each API's error shape. Written from the public API references; no vendor code.

export type Json = any;

export interface ApiError {
  status: number;
  body: Json;
}

/** A reply as the tests script it: text, or text with tool calls (name + JSON arguments). */
export interface ReplyMessage {
  content?: string | null;
  tool_calls?: { name: string; arguments: string; id?: string; safety_checks?: Json[] }[];
  finish_reason?: string;
}

const anthropicError = (status: number, type: string, message: string): ApiError => ({ status, body: { type: 'error', error: { type, message } } });
const openaiError = (status: number, message: string, param: string | null = null, code: string | null = null): ApiError => ({
  status,
  body: { error: { message, type: 'invalid_request_error', param, code } },
});

// ---------------------------------------------------------------------------------------------------------
// Anthropic Messages

export function checkAnthropic(headers: Record<string, string | string[] | undefined>, body: Json): ApiError | undefined {
  if (!headers['x-api-key']) return anthropicError(401, 'authentication_error', 'x-api-key header is required');
  if (!headers['anthropic-version']) return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
  if (typeof body.model !== 'string') return anthropicError(400, 'invalid_request_error', 'model: Field required');
  if (typeof body.max_tokens !== 'number') return anthropicError(400, 'invalid_request_error', 'max_tokens: Field required');
  const msgs: Json[] = body.messages;
  if (!Array.isArray(msgs) || !msgs.length) return anthropicError(400, 'invalid_request_error', 'messages: at least one message is required');
  if (msgs[0].role !== 'user') return anthropicError(400, 'invalid_request_error', 'messages: first message must use the "user" role');
  for (let i = 1; i < msgs.length; i++) {
    if (msgs[i].role === msgs[i - 1].role) return anthropicError(400, 'invalid_request_error', `messages: roles must alternate between "user" and "assistant" (message ${i})`);
  }
  for (let i = 0; i < msgs.length; i++) {
    const content = Array.isArray(msgs[i].content) ? msgs[i].content : [];
    for (const b of content) {
      if (b.type === 'image' && !(b.source?.type === 'base64' && b.source.media_type && b.source.data) && b.source?.type !== 'url') {
        return anthropicError(400, 'invalid_request_error', `messages.${i}: image source must be base64 with media_type and data, or a url`);
      }
    }
    if (msgs[i].role !== 'assistant') continue;
    const uses = content.filter((b: Json) => b.type === 'tool_use').map((b: Json) => b.id);
    if (!uses.length) continue;
    const next = msgs[i + 1];
    const results = new Set((Array.isArray(next?.content) ? next.content : []).filter((b: Json) => b.type === 'tool_result').map((b: Json) => b.tool_use_id));
    const missing = uses.filter((id: string) => !results.has(id));
    if (missing.length) {
      return anthropicError(400, 'invalid_request_error', `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`);
    }
  }
  for (const t of body.tools ?? []) {
    if (typeof t.type === 'string' && t.type.startsWith('computer_')) {
      if (!String(headers['anthropic-beta'] ?? '').includes('computer-use')) return anthropicError(400, 'invalid_request_error', `tools: ${t.type} requires the computer-use beta header`);
      if (!(t.display_width_px > 0) || !(t.display_height_px > 0)) return anthropicError(400, 'invalid_request_error', 'tools.0: display_width_px and display_height_px are required');
    }
  }
  return undefined;
}

export function anthropicAnswer(msg: ReplyMessage, body: Json, index: number): Json {
  const content: Json[] = [];
  if (msg.content) content.push({ type: 'text', text: msg.content });
  (msg.tool_calls ?? []).forEach((t, i) => content.push({ type: 'tool_use', id: t.id ?? `toolu_${index}_${i}`, name: t.name, input: JSON.parse(t.arguments) }));
  return {
    id: `msg_${index}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: msg.finish_reason ?? (msg.tool_calls?.length ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: 200 + index, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

// ---------------------------------------------------------------------------------------------------------
// OpenAI Responses (stateful: the server remembers each response's calls for previous_response_id)

export class ResponsesStore {
  private readonly responses = new Map<string, { calls: { call_id: string; type: string; safety: Json[] }[] }>();

  check(headers: Record<string, string | string[] | undefined>, body: Json): ApiError | undefined {
    if (!String(headers.authorization ?? '').startsWith('Bearer ')) {
      return { status: 401, body: { error: { message: 'You didn\'t provide an API key.', type: 'invalid_request_error', param: null, code: null } } };
    }
    if (typeof body.model !== 'string') return openaiError(400, "Missing required parameter: 'model'.", 'model');
    if (!Array.isArray(body.input) && typeof body.input !== 'string') return openaiError(400, "Missing required parameter: 'input'.", 'input');
    for (const t of body.tools ?? []) {
      if (t.type === 'computer_use_preview' && !(t.display_width > 0 && t.display_height > 0 && typeof t.environment === 'string')) {
        return openaiError(400, 'computer_use_preview needs display_width, display_height and environment.', 'tools');
      }
    }
    const outputs = (Array.isArray(body.input) ? body.input : []).filter((i: Json) => i.type === 'computer_call_output' || i.type === 'function_call_output');
    const prevId = body.previous_response_id;
    if (prevId === undefined) {
      // Without a stored response the calls must be in the input itself (a stateless client re-sends them).
      const sentCalls = new Set((Array.isArray(body.input) ? body.input : []).filter((i: Json) => i.type === 'function_call' || i.type === 'computer_call').map((i: Json) => i.call_id));
      const orphan = outputs.find((o: Json) => !sentCalls.has(o.call_id));
      if (orphan) return openaiError(400, `No tool call found for output with call_id ${orphan.call_id}.`, 'input');
      return undefined;
    }
    const prev = this.responses.get(prevId);
    if (!prev) return openaiError(404, `Previous response with id '${prevId}' not found.`, 'previous_response_id');
    for (const call of prev.calls) {
      const out = outputs.find((o: Json) => o.call_id === call.call_id);
      if (!out) return openaiError(400, `No tool output found for ${call.type === 'computer_call' ? 'computer' : 'function'} call ${call.call_id}.`, 'input');
      if (call.type === 'computer_call') {
        if (out.type !== 'computer_call_output' || out.output?.type !== 'computer_screenshot' || typeof out.output.image_url !== 'string') {
          return openaiError(400, `The output of computer call ${call.call_id} must be a computer_screenshot with an image_url.`, 'input');
        }
        const acked = (out.acknowledged_safety_checks ?? []).map((c: Json) => c.id).sort().join(',');
        if (acked !== call.safety.map((c: Json) => c.id).sort().join(',')) {
          return openaiError(400, `Pending safety checks of computer call ${call.call_id} were not acknowledged.`, 'input');
        }
      }
    }
    for (const o of outputs) {
      if (!prev.calls.some((c) => c.call_id === o.call_id)) return openaiError(400, `No tool call found for output with call_id ${o.call_id}.`, 'input');
    }
    return undefined;
  }

  answer(msg: ReplyMessage, body: Json, index: number): Json {
    const output: Json[] = [];
    const calls: { call_id: string; type: string; safety: Json[] }[] = [];
    if (msg.content) {
      output.push({ type: 'message', id: `msg_${index}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: msg.content, annotations: [] }] });
    }
    (msg.tool_calls ?? []).forEach((t, i) => {
      const call_id = t.id ?? `call_${index}_${i}`;
      if (t.name === 'computer') {
        const args = JSON.parse(t.arguments);
        const safety = t.safety_checks ?? [];
        output.push({ type: 'computer_call', id: `cu_${index}_${i}`, call_id, action: args.action ?? args, pending_safety_checks: safety, status: 'completed' });
        calls.push({ call_id, type: 'computer_call', safety });
      } else {
        output.push({ type: 'function_call', id: `fc_${index}_${i}`, call_id, name: t.name, arguments: t.arguments, status: 'completed' });
        calls.push({ call_id, type: 'function_call', safety: [] });
      }
    });
    const id = `resp_${index}`;
    this.responses.set(id, { calls });
    return {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model: body.model,
      previous_response_id: body.previous_response_id ?? null,
      output,
      usage: { input_tokens: 300 + index, output_tokens: 30, total_tokens: 330 + index },
    };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Streaming (`stream: true`): each API's server-sent events for an answer built above, as their streaming references
// describe them.

/** Anthropic Messages events: message_start, then per content block start / deltas / stop, message_delta, message_stop. */
export function anthropicStreamEvents(answer: Json): { event: string; data: Json }[] {
  const out: { event: string; data: Json }[] = [];
  const ev = (event: string, data: Json) => out.push({ event, data: { type: event, ...data } });
  ev('message_start', { message: { ...answer, content: [], stop_reason: null, usage: { ...answer.usage, output_tokens: 1 } } });
  answer.content.forEach((b: Json, index: number) => {
    if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (let i = 0; i < b.text.length; i += 7) ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text.slice(i, i + 7) } });
    } else {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      const json = JSON.stringify(b.input);
      for (let i = 0; i < json.length; i += 5) ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 5) } });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', { delta: { stop_reason: answer.stop_reason, stop_sequence: null }, usage: { output_tokens: answer.usage.output_tokens } });
  ev('message_stop', {});
  return out;
}

/** OpenAI Responses events: response.created, per output item added (text deltas) and done, response.completed. */
export function responsesStreamEvents(answer: Json): { event: string; data: Json }[] {
  const out: { event: string; data: Json }[] = [];
  let seq = 0;
  const ev = (event: string, data: Json) => out.push({ event, data: { type: event, ...data, sequence_number: seq++ } });
  ev('response.created', { response: { ...answer, status: 'in_progress', output: [], usage: null } });
  answer.output.forEach((item: Json, output_index: number) => {
    ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', ...(item.type === 'message' ? { content: [] } : {}) } });
    if (item.type === 'message') {
      for (const [content_index, p] of item.content.entries()) ev('response.output_text.delta', { item_id: item.id, output_index, content_index, delta: p.text });
    }
    ev('response.output_item.done', { output_index, item });
  });
  ev('response.completed', { response: answer });
  return out;
}
