// The chat-completions wire types the clients speak (the subset of the API Grove uses), the request and result
// of one `complete()` call, the client options and its accounting. Types only: every client shares them.
import type { Logger } from '../sandbox/log.ts';

type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };
export type ContentPart = TextPart | ImagePart;

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string | ContentPart[] }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface ToolDef {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it (may be invalid JSON: formats report that). */
  arguments: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatResult {
  text: string;
  tool_calls: ToolCall[];
  finish_reason: string | null;
  usage: Usage | null;
  /** Wall time of the whole call, retries and backoff included. */
  latency_ms: number;
  /** HTTP attempts made (1 = no retry). */
  attempts: number;
  /** Reasoning text some servers return apart (vLLM/DeepSeek `reasoning_content`), if any. */
  reasoning?: string;
  /** Parsed response body (non-streaming) or the list of stream chunks. */
  raw: unknown;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDef[];
  tool_choice?: unknown;
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  signal?: AbortSignal;
  /** Extra body fields merged last (top_p, seed, stop, response_format, vendor options...). */
  extra?: Record<string, unknown>;
  /**
   * The computer the model drives, for APIs with a built-in computer-use tool (Anthropic Messages, OpenAI
   * Responses): the display size the tool declares, which is the size of the screenshots sent.
   */
  computer?: { width: number; height: number };
  /** Conversation state of a stateful API (OpenAI Responses' previous_response_id): one object per episode. */
  state?: Record<string, unknown>;
}

/** One successful answer as the SDK read it: its parsed body (or chunk stream), status and headers. */
export interface Sent {
  data: unknown;
  status: number;
  headers: Record<string, string>;
}

export interface ChatClientOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  /** Per-attempt timeout (default 60 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2), by the SDK: 408/409/429/5xx, with its backoff and Retry-After. */
  maxRetries?: number;
  fetch?: typeof fetch;
  defaultHeaders?: Record<string, string>;
  log?: Logger;
  /** Cap for a server-requested Retry-After (default 60 s); a longer one is ignored and the SDK backs off instead. */
  maxRetryAfterMs?: number;
}

export interface ClientStats {
  calls: number;
  succeeded: number;
  failed: number;
  attempts: number;
  retries: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Sum of per-call latencies. */
  latency_ms_total: number;
  latency_ms_max: number;
}

/** An image content part carrying the bytes as a data URL (the form every OpenAI-compatible VLM server accepts). */
export function imageContent(bytes: Buffer, mime: string, detail?: 'auto' | 'low' | 'high'): ImagePart {
  return imageContentFromBase64(bytes.toString('base64'), mime, detail);
}

function imageContentFromBase64(base64: string, mime: string, detail?: 'auto' | 'low' | 'high'): ImagePart {
  const part: ImagePart = { type: 'image_url', image_url: { url: `data:${mime};base64,${base64}` } };
  if (detail) part.image_url.detail = detail;
  return part;
}
