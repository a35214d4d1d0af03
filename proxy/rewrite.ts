// Request rewriting for RL: ask for logprobs / token ids, pin temperature and seed, cap output tokens. Pure: takes
// what the harness asked and returns what is sent (a new object; the asked one is recorded untouched).
import type { RewriteOptions } from './types.ts';

type Body = Record<string, unknown>;

function isResponsesApi(endpoint: string): boolean {
  return endpoint.startsWith('/responses');
}

/** The output-token cap field each API reads (chat accepts both; the newer name wins when the harness used it). */
function capField(endpoint: string, body: Body): string {
  if (isResponsesApi(endpoint)) return 'max_output_tokens';
  return 'max_completion_tokens' in body ? 'max_completion_tokens' : 'max_tokens';
}

/** Returns the body to send and whether it differs from the asked one. Non-model endpoints pass unchanged. */
export function rewriteRequest(endpoint: string, asked: unknown, opts: RewriteOptions | undefined): { sent: unknown; rewritten: boolean } {
  if (!opts || asked === null || typeof asked !== 'object' || Array.isArray(asked)) return { sent: asked, rewritten: false };
  const chat = endpoint.startsWith('/chat/completions');
  const responses = isResponsesApi(endpoint);
  const completions = endpoint.startsWith('/completions');
  if (!chat && !responses && !completions) return { sent: asked, rewritten: false };
  const body: Body = { ...(asked as Body) };
  if (opts.temperature !== undefined) body.temperature = opts.temperature;
  if (opts.seed !== undefined && !responses) body.seed = opts.seed;
  if (opts.maxTokens !== undefined) {
    const field = capField(endpoint, body);
    const askedCap = typeof body[field] === 'number' ? (body[field] as number) : undefined;
    body[field] = askedCap === undefined ? opts.maxTokens : Math.min(askedCap, opts.maxTokens);
  }
  if (opts.logprobs) {
    if (chat) {
      body.logprobs = true;
      if (opts.topLogprobs) body.top_logprobs = opts.topLogprobs;
    } else if (completions) {
      body.logprobs = Math.max(opts.topLogprobs ?? 0, 1);
    } else {
      body.top_logprobs = opts.topLogprobs ?? 0;
      const include = Array.isArray(body.include) ? [...(body.include as unknown[])] : [];
      if (!include.includes('message.output_text.logprobs')) include.push('message.output_text.logprobs');
      body.include = include;
    }
  }
  if (opts.tokenIds && !responses) body.return_token_ids = true;
  if (opts.streamUsage && chat && body.stream === true) {
    const so = body.stream_options && typeof body.stream_options === 'object' ? (body.stream_options as Body) : {};
    body.stream_options = { ...so, include_usage: true };
  }
  return { sent: body, rewritten: JSON.stringify(body) !== JSON.stringify(asked) };
}
