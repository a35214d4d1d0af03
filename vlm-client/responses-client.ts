// OpenAI's Responses API (`POST /v1/responses`) behind the ChatClient interface, so a computer-use model (CUA)
// drives Grove through its own API. Based on OpenAI's public API reference and computer-use guide: the
// `computer_use_preview` tool with `display_width`, `display_height` and `environment`, `instructions` for the system
// prompt, `input` items (messages with input_text / input_image parts), `computer_call` output items answered on the
// next turn by `computer_call_output` items (the new screenshot, with the pending safety checks acknowledged) under
// `previous_response_id`, `function_call` ↔ `function_call_output`, `truncation: "auto"`, and
// `usage.input_tokens`/`output_tokens`. The conversation state (last response id, calls awaiting output) lives in
// the request's `state` object, one per episode. HTTP, retries and timeouts are the `openai` SDK's (ChatClient).
import { APIError, bodyObject, ChatClient, type ChatMessage, type ChatRequest, type ChatResult, type ContentPart, type Sent } from './client.ts';

type Item = Record<string, unknown>;

/** Per-episode state: the response to continue from and the calls it left waiting for output. */
interface ResponsesState {
  previous_response_id?: string;
  pending?: { call_id: string; type: 'computer_call' | 'function_call'; safety_checks?: unknown[] }[];
}

function partsOf(content: string | ContentPart[] | null): ContentPart[] {
  if (content === null || content === '') return [];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function userItem(parts: ContentPart[], withImages = true): Item {
  return {
    role: 'user',
    content: parts.flatMap((p): Item[] =>
      p.type === 'text' ? [{ type: 'input_text', text: p.text }] : withImages ? [{ type: 'input_image', image_url: p.image_url.url }] : [],
    ),
  };
}

/** The whole conversation as input items (first turn of an episode, or no stored response to continue). */
function fullInput(messages: ChatMessage[]): Item[] {
  const items: Item[] = [];
  for (const m of messages) {
    if (m.role === 'user') items.push(userItem(partsOf(m.content)));
    else if (m.role === 'assistant' && m.content) items.push({ role: 'assistant', content: [{ type: 'output_text', text: m.content }] });
    else if (m.role === 'tool') items.push({ role: 'user', content: [{ type: 'input_text', text: m.content }] });
  }
  return items;
}

/**
 * The next turn under `previous_response_id`: one output item per pending call (a computer_call gets the newest
 * screenshot), then the observation text as a user message.
 */
function continuation(messages: ChatMessage[], state: ResponsesState): Item[] {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const parts = last ? partsOf(last.content) : [];
  const image = [...parts].reverse().find((p) => p.type === 'image_url');
  const items: Item[] = [];
  for (const call of state.pending ?? []) {
    if (call.type === 'computer_call') {
      if (!image) throw new APIError(undefined, undefined, 'A computer_call_output needs a screenshot, and this step has none.');
      items.push({
        type: 'computer_call_output',
        call_id: call.call_id,
        output: { type: 'computer_screenshot', image_url: image.image_url.url },
        ...(call.safety_checks?.length ? { acknowledged_safety_checks: call.safety_checks } : {}),
      });
    } else items.push({ type: 'function_call_output', call_id: call.call_id, output: 'done' });
  }
  // With outputs, the screenshot already travels in them; the text still tells URL, tabs and errors.
  const text = userItem(parts, !items.length);
  if ((text.content as unknown[]).length) items.push(text);
  return items;
}

export class ResponsesClient extends ChatClient {
  protected endpoint(): string {
    return '/responses';
  }

  protected buildBody(req: ChatRequest): Record<string, unknown> {
    const state = (req.state ?? {}) as ResponsesState;
    const system = req.messages.filter((m) => m.role === 'system').map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n\n');
    const tools: Item[] = [];
    if (req.computer) tools.push({ type: 'computer_use_preview', display_width: req.computer.width, display_height: req.computer.height, environment: 'browser' });
    for (const t of req.tools ?? []) {
      if (req.computer && t.function.name === 'computer') continue;
      tools.push({ type: 'function', name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), parameters: t.function.parameters });
    }
    const body: Record<string, unknown> = {
      model: this.model,
      input: state.previous_response_id ? continuation(req.messages, state) : fullInput(req.messages),
      truncation: 'auto',
    };
    if (state.previous_response_id) body.previous_response_id = state.previous_response_id;
    if (system) body.instructions = system;
    if (tools.length) body.tools = tools;
    if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.max_tokens !== undefined) body.max_output_tokens = req.max_tokens;
    return { ...body, ...(req.extra ?? {}) };
  }

  async complete(req: ChatRequest): Promise<ChatResult> {
    const r = await super.complete(req);
    if (req.state) {
      const body = r.raw as Item;
      const state = req.state as ResponsesState;
      state.previous_response_id = String(body.id);
      state.pending = ((body.output as Item[]) ?? [])
        .filter((o) => o.type === 'computer_call' || o.type === 'function_call')
        .map((o) => ({
          call_id: String(o.call_id),
          type: o.type as 'computer_call' | 'function_call',
          ...(Array.isArray(o.pending_safety_checks) && o.pending_safety_checks.length ? { safety_checks: o.pending_safety_checks } : {}),
        }));
    }
    return r;
  }

  protected apiName(): string {
    return 'Responses';
  }

  protected async decode(sent: Sent): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
    const { status, headers } = sent;
    const body = bodyObject(sent, 'Responses');
    if (body.error || body.status === 'failed') throw new APIError(status, body.error ? body : { error: { message: 'The response failed.' } }, undefined, headers);
    if (!Array.isArray(body.output)) throw new APIError(status, undefined, 'The Responses answer has no output list.', headers);
    const texts: string[] = [];
    const summaries: string[] = [];
    const tool_calls: ChatResult['tool_calls'] = [];
    for (const o of body.output as Item[]) {
      if (o.type === 'message' && Array.isArray(o.content)) {
        for (const c of o.content as Item[]) if (typeof c.text === 'string') texts.push(c.text);
      } else if (o.type === 'reasoning' && Array.isArray(o.summary)) {
        for (const c of o.summary as Item[]) if (typeof c.text === 'string') summaries.push(c.text);
      } else if (o.type === 'computer_call') tool_calls.push({ id: String(o.call_id), name: 'computer', arguments: JSON.stringify({ action: o.action }) });
      else if (o.type === 'function_call') tool_calls.push({ id: String(o.call_id), name: String(o.name), arguments: typeof o.arguments === 'string' ? o.arguments : JSON.stringify(o.arguments ?? {}) });
    }
    const u = body.usage as Record<string, number> | undefined;
    const out: Omit<ChatResult, 'latency_ms' | 'attempts'> = {
      text: texts.join('\n'),
      tool_calls,
      finish_reason: typeof body.status === 'string' ? body.status : null,
      usage: u ? { prompt_tokens: u.input_tokens ?? 0, completion_tokens: u.output_tokens ?? 0, total_tokens: u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0) } : null,
      raw: body,
    };
    if (summaries.length) out.reasoning = summaries.join('\n');
    return out;
  }
}
