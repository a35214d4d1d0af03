// Anthropic's Messages API (`POST /v1/messages`) behind the ChatClient interface, so a Claude model drives Grove
// through its own API with the built-in computer-use tool. Based on Anthropic's public API reference: `x-api-key` and
// `anthropic-version` headers (no bearer token), `system` apart from `messages`, required `max_tokens`, image blocks
// with base64 sources, the `computer_20250124` tool with `display_width_px`/`display_height_px` (beta header
// `computer-use-2025-01-24`), `tool_use` blocks answered by `tool_result` blocks at the start of the next user turn,
// and `usage.input_tokens`/`output_tokens`. HTTP, retries and timeouts are the official `@anthropic-ai/sdk`'s (its
// generic `post`, so the body is the one built here); the error family is ChatClient's.
import Anthropic from '@anthropic-ai/sdk';
import { APIError, bodyObject, ChatClient, type ChatClientOptions, type ChatMessage, type ChatRequest, type ChatResult, type ContentPart, type Sent, type ToolDef } from './client.ts';
import { headerRecord, tracingFetch } from './sdk-transport.ts';

const ANTHROPIC_VERSION = '2023-06-01';
const COMPUTER_TOOL_TYPE = 'computer_20250124';
const COMPUTER_USE_BETA = 'computer-use-2025-01-24';
/** Anthropic downsizes images above about 1.15 megapixels or 1568 px on the long side (its vision docs). */
const ANTHROPIC_MAX_PIXELS = 1_150_000;
const ANTHROPIC_MAX_SIDE = 1568;

type Block = Record<string, unknown>;
type AnthropicMessage = { role: 'user' | 'assistant'; content: Block[] };

/** True when Anthropic's API would resize an image of this size (then coordinates come back in another space). */
export function anthropicWouldResize(width: number, height: number): boolean {
  return width * height > ANTHROPIC_MAX_PIXELS || Math.max(width, height) > ANTHROPIC_MAX_SIDE;
}

function imageBlock(url: string): Block {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) return { type: 'image', source: { type: 'base64', media_type: m[1], data: m[2] } };
  return { type: 'image', source: { type: 'url', url } };
}

function blocksOf(content: string | ContentPart[] | null): Block[] {
  if (content === null || content === '') return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : imageBlock(p.image_url.url)));
}

/**
 * Chat messages → Anthropic's `system` and `messages`: tool calls become `tool_use` blocks, the tool messages after
 * them `tool_result` blocks that open the next user turn, and consecutive user turns are merged (roles alternate).
 */
function toAnthropicMessages(messages: ChatMessage[]): { system: string; messages: AnthropicMessage[] } {
  const system: string[] = [];
  const out: AnthropicMessage[] = [];
  const user = (): AnthropicMessage => {
    const last = out[out.length - 1];
    if (last?.role === 'user') return last;
    const m: AnthropicMessage = { role: 'user', content: [] };
    out.push(m);
    return m;
  };
  for (const m of messages) {
    if (m.role === 'system') system.push(typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
    else if (m.role === 'user') user().content.push(...blocksOf(m.content));
    else if (m.role === 'tool') user().content.push({ type: 'tool_result', tool_use_id: m.tool_call_id, content: [{ type: 'text', text: m.content }] });
    else {
      const content = blocksOf(m.content);
      for (const c of m.tool_calls ?? []) {
        let input: unknown = {};
        try {
          input = JSON.parse(c.function.arguments || '{}');
        } catch {
          input = {};
        }
        content.push({ type: 'tool_use', id: c.id, name: c.function.name, input });
      }
      out.push({ role: 'assistant', content: content.length ? content : [{ type: 'text', text: '(no output)' }] });
    }
  }
  // tool_result blocks must come first in their user turn.
  for (const m of out) if (m.role === 'user') m.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  if (out[0]?.role !== 'user') out.unshift({ role: 'user', content: [{ type: 'text', text: '(start)' }] });
  return { system: system.join('\n\n'), messages: out };
}

function toolsFor(req: ChatRequest): Block[] {
  const tools: Block[] = [];
  if (req.computer) {
    tools.push({ type: COMPUTER_TOOL_TYPE, name: 'computer', display_width_px: req.computer.width, display_height_px: req.computer.height });
  }
  // The format's own `computer` function stands in for the built-in tool on chat-completions servers only.
  for (const t of req.tools ?? []) {
    if (req.computer && t.function.name === 'computer') continue;
    tools.push(customTool(t));
  }
  return tools;
}

function customTool(t: ToolDef): Block {
  return { name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), input_schema: t.function.parameters };
}

/**
 * The SDK's client without its default credential chain (local profiles, config files): the key given is the key.
 * Nor with the host's ANTHROPIC_CUSTOM_HEADERS, which its constructor (1.x) merges into the default headers with no
 * option to turn that off: they are put back to the given ones right after. The SDK does not declare `_options` in
 * its types, hence the narrow cast; test/vlm-client/env-headers.test.ts sets the variable and checks the requests,
 * so an SDK update that moves the field fails there.
 */
class OwnCredentialsAnthropic extends Anthropic {
  constructor(opts: NonNullable<ConstructorParameters<typeof Anthropic>[0]>) {
    super(opts);
    const self = this as unknown as { _options: { defaultHeaders?: unknown } };
    self._options = { ...self._options, defaultHeaders: opts.defaultHeaders };
  }

  protected override _shouldResolveDefaultCredentials(): boolean {
    return false;
  }
}

export interface AnthropicClientOptions extends ChatClientOptions {
  /** Default max_tokens (the Messages API requires one). */
  maxTokens?: number;
  anthropicVersion?: string;
}

export class AnthropicClient extends ChatClient {
  private readonly maxTokens: number;
  private readonly version: string;

  constructor(opts: AnthropicClientOptions) {
    super(opts);
    this.maxTokens = opts.maxTokens ?? 4096;
    this.version = opts.anthropicVersion ?? ANTHROPIC_VERSION;
  }

  private anthropicSdk: Anthropic | undefined;

  protected apiName(): string {
    return 'Messages';
  }

  /**
   * The official Anthropic client, made once, with nothing taken from the environment or the machine. The key goes
   * in `x-api-key` as Anthropic's API reference documents it: @anthropic-ai/sdk 1.17 would send it as
   * `Authorization: Bearer`, and without a key it would resolve credentials from local profile files.
   */
  private anthropic(): Anthropic {
    this.anthropicSdk ??= new OwnCredentialsAnthropic({
      baseURL: this.baseURL,
      apiKey: null,
      authToken: null,
      logLevel: 'off',
      timeout: this.timeoutMs,
      maxRetries: this.maxRetries,
      fetch: tracingFetch(this.fetchImpl, this.log, this.apiName(), this.maxRetryAfterMs),
      defaultHeaders: {
        'anthropic-version': this.version,
        'anthropic-beta': COMPUTER_USE_BETA,
        ...(this.apiKey ? { 'x-api-key': this.apiKey } : {}),
        authorization: null,
        ...this.defaultHeaders,
      },
    });
    return this.anthropicSdk;
  }

  // The base URL names the API version (…/v1), as for the OpenAI APIs; the SDK's own paths start with /v1.
  protected async send(body: Record<string, unknown>, req: ChatRequest): Promise<Sent> {
    const { data, response } = await this.anthropic().post<unknown>('/messages', { body, signal: req.signal }).withResponse();
    return { data, status: response.status, headers: headerRecord(response.headers) };
  }

  protected buildBody(req: ChatRequest): Record<string, unknown> {
    if (req.computer && anthropicWouldResize(req.computer.width, req.computer.height)) {
      this.log.warn(
        { width: req.computer.width, height: req.computer.height },
        'Anthropic shrinks screenshots above ~1.15 MP, so coordinates come back in a smaller space; resize to max_side 1024 (the anthropic format default) or use a 1280x800 viewport',
      );
    }
    const { system, messages } = toAnthropicMessages(req.messages);
    const body: Record<string, unknown> = { model: this.model, max_tokens: req.max_tokens ?? this.maxTokens, messages };
    if (system) body.system = system;
    const tools = toolsFor(req);
    if (tools.length) body.tools = tools;
    if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    return { ...body, ...(req.extra ?? {}) };
  }

  protected async decode(sent: Sent): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
    const { status, headers } = sent;
    const body = bodyObject(sent, 'Messages');
    if (body.type === 'error' || body.error) throw new APIError(status, body, undefined, headers);
    if (!Array.isArray(body.content)) throw new APIError(status, undefined, 'The Messages response has no content list.', headers);
    const texts: string[] = [];
    const thinking: string[] = [];
    const tool_calls: ChatResult['tool_calls'] = [];
    for (const b of body.content as Block[]) {
      if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
      else if (b.type === 'thinking' && typeof b.thinking === 'string') thinking.push(b.thinking);
      else if (b.type === 'tool_use') tool_calls.push({ id: String(b.id), name: String(b.name), arguments: JSON.stringify(b.input ?? {}) });
    }
    const u = body.usage as Record<string, number> | undefined;
    const input = u ? (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) : 0;
    const out: Omit<ChatResult, 'latency_ms' | 'attempts'> = {
      text: texts.join('\n'),
      tool_calls,
      finish_reason: typeof body.stop_reason === 'string' ? body.stop_reason : null,
      usage: u ? { prompt_tokens: input, completion_tokens: u.output_tokens ?? 0, total_tokens: input + (u.output_tokens ?? 0) } : null,
      raw: body,
    };
    if (thinking.length) out.reasoning = thinking.join('\n');
    return out;
  }
}
