// The bash policy over an OpenAI-compatible chat model (vlm-client's ChatClient).
import { ChatClient } from '../../vlm-client/client.ts';
import type { BashPolicy } from './episode.ts';

export function chatBashPolicy(o: { baseURL: string; model: string; apiKey?: string; temperature?: number }): BashPolicy {
  const chat = new ChatClient({ baseURL: o.baseURL, model: o.model, apiKey: o.apiKey, timeoutMs: 300_000 });
  return {
    async next(messages) {
      const r = await chat.complete({ messages, ...(o.temperature !== undefined ? { temperature: o.temperature } : {}) });
      return { text: r.text, latency_ms: r.latency_ms, prompt_tokens: r.usage?.prompt_tokens, completion_tokens: r.usage?.completion_tokens };
    },
  };
}
