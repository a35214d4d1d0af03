// The recording proxy's records and options. A record is one model call as the harness made it, what the proxy
// sent upstream, and what came back (byte-faithful), with timing and usage.

/** How the rollout of a call was found. */
export type RolloutSource = 'path' | 'header' | 'key';

/** `required`: every call carries its rollout's per-rollout key. `off` (trusted networks only): a path or header alone
 * names the rollout, except a rollout that has a key. */
export type RolloutKeyMode = 'required' | 'off';

/** Optional request rewriting for RL (what was asked is kept beside what was sent). */
export interface RewriteOptions {
  /** Ask for per-token logprobs (chat: `logprobs: true`, `top_logprobs` when > 0). */
  logprobs?: boolean;
  topLogprobs?: number;
  /** Ask for token ids (vLLM/SGLang: `return_token_ids: true`). */
  tokenIds?: boolean;
  /** Pin sampling: these replace whatever the harness asked. */
  temperature?: number;
  seed?: number;
  /** Cap the output tokens: min(asked, cap), set when the harness asked for none. */
  maxTokens?: number;
  /** Streaming chat calls: ask for the final usage chunk (`stream_options.include_usage`). */
  streamUsage?: boolean;
}

export interface CallRecord {
  /** Record format version. */
  v: 1;
  call_id: string;
  rollout_id: string;
  rollout_source: RolloutSource;
  /** Order of the call within its rollout, from 0 (calls of one rollout may overlap; this is arrival order). */
  seq: number;
  method: string;
  /** The upstream path after the base URL, e.g. `/chat/completions` or `/responses`. */
  endpoint: string;
  started_at: string;
  /** ms from the request's arrival to the first upstream byte, and to the last. */
  ttfb_ms: number | null;
  duration_ms: number;
  /** The harness's request body as parsed JSON (null when it was not JSON; then `request_text` holds it). */
  request_asked: unknown;
  /** What the proxy sent upstream after rewriting (identical to `request_asked` without rewriting). */
  request_sent: unknown;
  request_text?: string;
  rewritten: boolean;
  stream: boolean;
  /** Upstream HTTP status, or the proxy's own status when the upstream failed (502 / 504). */
  status: number;
  response_headers: Record<string, string>;
  /** The response body exactly as the harness received it (UTF-8 text; SSE streams verbatim). */
  response_text: string;
  /** For SSE: the stream assembled into one response object (chat completion or Responses API object). */
  assembled?: unknown;
  /** Lines of an SSE stream that were not valid events (passed through to the harness unchanged). */
  sse_malformed?: number;
  usage?: Record<string, unknown> | null;
  /** Set when the call did not complete normally: upstream_error (HTTP ≥ 400), upstream_unreachable, upstream_timeout,
   * client_aborted. */
  error?: { kind: string; message: string } | null;
}

export interface ProxyOptions {
  /** Upstream base URL including its API prefix, e.g. `http://127.0.0.1:8000/v1`. */
  upstream: string;
  /** Directory of the records: `<dir>/rollouts/<rollout-id>/calls.jsonl`. */
  dir: string;
  /** Key sent upstream as `Authorization: Bearer …` (and `x-api-key` to Anthropic clients). Without it, only a
   * harness's own non-Grove credentials pass on (a per-rollout key never does). */
  upstreamKey?: string;
  /** Key for the proxy's admin routes (issuing per-rollout keys, attaching rewards). Required to use them. */
  adminKey?: string;
  /** Whether model calls need a per-rollout key (default `required`; see `RolloutKeyMode`). */
  rolloutKeys?: RolloutKeyMode;
  rewrite?: RewriteOptions;
  /** Per call: the time the upstream may take in all (the call's deadline). */
  callTimeoutMs: number;
}

// ---------------------------------------------------------------------------------------------------------
// Turns: a recorded call as a trainer reads it (turns.ts builds them)

export type Json = Record<string, any>;

/** The model API a call spoke, by its endpoint. */
export type ModelApi = 'chat' | 'responses' | 'anthropic';

/** One successful model call, reduced to what a trainer needs. */
export interface Turn {
  call_id: string;
  seq: number;
  api: ModelApi;
  /** The conversation the model was given, as chat-completions messages. */
  messages: Json[];
  tools?: unknown;
  /** The assistant message the model produced (chat-completions form). */
  completion: Json;
  /** The response id a later Responses API call may continue from (`previous_response_id`). */
  response_id?: string;
  prompt_token_ids?: number[];
  completion_token_ids?: number[];
  completion_logprobs?: number[];
}
