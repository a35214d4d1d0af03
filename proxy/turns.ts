// A rollout's recorded calls as turns: each successful model call reduced to the conversation the model saw (in
// chat-completions message form, whatever API the harness spoke) and the assistant message it produced, with token
// ids and logprobs where the upstream gave them. Chat completions are read here; the OpenAI Responses API in
// turns-responses.ts (its stateful `previous_response_id` conversations rebuilt from the rollout's earlier calls)
// and Anthropic Messages in turns-anthropic.ts.
import { anthropicTurn } from './turns-anthropic.ts';
import { responsesTurn } from './turns-responses.ts';
import type { CallRecord, Json, Turn } from './types.ts';

/** A call's response object: the assembled stream, or the JSON body (null when neither). */
export function responseOf(r: CallRecord): Json | null {
  if (r.assembled) return r.assembled as Json;
  try {
    return JSON.parse(r.response_text) as Json;
  } catch {
    return null;
  }
}

function apiOf(endpoint: string): Turn['api'] | undefined {
  if (endpoint.startsWith('/chat/completions')) return 'chat';
  if (endpoint.startsWith('/responses')) return 'responses';
  if (endpoint.startsWith('/messages')) return 'anthropic';
  return undefined;
}

function chatTurn(r: CallRecord, sent: Json, resp: Json): Turn | undefined {
  const choice = resp.choices?.[0];
  if (!Array.isArray(sent.messages) || !choice?.message) return undefined;
  const turn: Turn = { call_id: r.call_id, seq: r.seq, api: 'chat', messages: sent.messages, completion: choice.message };
  if (sent.tools) turn.tools = sent.tools;
  const promptIds = resp.prompt_token_ids ?? choice.prompt_token_ids;
  if (Array.isArray(promptIds) && Array.isArray(choice.token_ids)) {
    turn.prompt_token_ids = promptIds;
    turn.completion_token_ids = choice.token_ids;
  }
  const lp = choice.logprobs?.content;
  if (Array.isArray(lp)) turn.completion_logprobs = lp.map((t: Json) => Number(t.logprob));
  return turn;
}

/** The turns of a rollout's records, in arrival order (failed calls and non-model endpoints skipped). */
export function turnsOf(records: CallRecord[]): Turn[] {
  const out: Turn[] = [];
  const byResponseId = new Map<string, Turn>();
  for (const r of [...records].sort((a, b) => a.seq - b.seq)) {
    if (r.error || r.status !== 200) continue;
    const api = apiOf(r.endpoint);
    const sent = r.request_sent as Json | null;
    const resp = responseOf(r);
    if (!api || !sent || typeof sent !== 'object' || !resp) continue;
    const turn =
      api === 'chat' ? chatTurn(r, sent, resp) : api === 'responses' ? responsesTurn(r, sent, resp, (id) => byResponseId.get(id)) : anthropicTurn(r, sent, resp);
    if (!turn) continue;
    out.push(turn);
    if (turn.response_id) byResponseId.set(turn.response_id, turn);
  }
  return out;
}
