// Rollout reconstruction: the recorded calls of a rollout (chat completions, the Responses API or Anthropic Messages;
// read as turns by turns.ts) turned into training samples, as JSONL for an RL or SFT trainer. Three views: one
// sample per call; merged samples, where successive calls extend one another (an agent loop re-sends its whole
// conversation each turn) — merged by token prefix when token ids were recorded, else by message prefix; and the
// final trajectory. Token ids, logprobs and a loss mask come along where the upstream
// gave them, and the rollout's reward when one was attached.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readCalls } from './store.ts';
import { turnsOf } from './turns.ts';
import type { CallRecord, Json, ModelApi, Turn } from './types.ts';

export { responseOf, turnsOf } from './turns.ts';
export type { Turn } from './types.ts';

export interface Sample {
  rollout_id: string;
  kind: 'call' | 'merged' | 'trajectory';
  /** The API the calls spoke; `messages` are in chat-completions form whatever it was. */
  api: ModelApi;
  call_ids: string[];
  messages: Json[];
  tools?: unknown;
  /** Per message: 1 where the model produced it in one of the sample's calls (train on it), else 0. */
  message_loss_mask: number[];
  /** Present when every call of the sample recorded token ids. */
  token_ids?: number[];
  loss_mask?: number[];
  /** Per token: the sampled token's logprob where the model produced it, null elsewhere (present with logprobs). */
  logprobs?: (number | null)[];
  reward?: number | null;
}

function normArgs(a: unknown): string {
  if (typeof a !== 'string') return JSON.stringify(a ?? null);
  try {
    return JSON.stringify(JSON.parse(a));
  } catch {
    return a;
  }
}

/** The part of a message that identity rests on (a harness may drop ids or reasoning when it re-sends). */
function messageKey(m: Json): string {
  const content = typeof m.content === 'string' ? m.content.trim() : m.content == null ? '' : JSON.stringify(m.content);
  const tools = Array.isArray(m.tool_calls) ? m.tool_calls.map((t: Json) => `${t.function?.name}(${normArgs(t.function?.arguments)})`).join(';') : '';
  const extra = m.role === 'tool' ? String(m.tool_call_id ?? '') : '';
  return `${m.role}|${content}|${tools}|${extra}`;
}

function startsWith<T>(a: T[], prefix: T[], eq: (x: T, y: T) => boolean): boolean {
  return prefix.length <= a.length && prefix.every((p, i) => eq(a[i], p));
}

/** Whether `next` re-sends `prev`'s conversation plus `prev`'s answer (then both are one sample). */
export function extendsTurn(prev: Turn, next: Turn): boolean {
  if (prev.prompt_token_ids && prev.completion_token_ids && next.prompt_token_ids) {
    return startsWith(next.prompt_token_ids, [...prev.prompt_token_ids, ...prev.completion_token_ids], (x, y) => x === y);
  }
  const expected = [...prev.messages, prev.completion].map(messageKey);
  return startsWith(next.messages.map(messageKey), expected, (x, y) => x === y);
}

/** One sample from a chain of turns where each extends the one before. */
function mergeChain(rollout: string, chain: Turn[], kind: Sample['kind']): Sample {
  const last = chain[chain.length - 1];
  const messages = [...last.messages, last.completion];
  // A message was produced by the model when it is the completion of one of the chain's turns, at that position.
  const produced = new Set(chain.map((t) => t.messages.length));
  const sample: Sample = {
    rollout_id: rollout,
    kind,
    api: last.api,
    call_ids: chain.map((t) => t.call_id),
    messages,
    message_loss_mask: messages.map((_, i) => (produced.has(i) ? 1 : 0)),
  };
  if (last.tools) sample.tools = last.tools;
  if (chain.every((t) => t.prompt_token_ids && t.completion_token_ids)) {
    const ids = [...last.prompt_token_ids!, ...last.completion_token_ids!];
    const mask = new Array<number>(ids.length).fill(0);
    const withLogprobs = chain.every((t) => t.completion_logprobs?.length === t.completion_token_ids!.length);
    const lps: (number | null)[] = new Array(ids.length).fill(null);
    for (const t of chain) {
      const start = t.prompt_token_ids!.length;
      t.completion_token_ids!.forEach((_, j) => {
        mask[start + j] = 1;
        if (withLogprobs) lps[start + j] = t.completion_logprobs![j];
      });
    }
    sample.token_ids = ids;
    sample.loss_mask = mask;
    if (withLogprobs) sample.logprobs = lps;
  }
  return sample;
}

function readReward(dir: string, rollout: string): number | null {
  const f = path.join(dir, 'rollouts', rollout, 'reward.json');
  if (!existsSync(f)) return null;
  const r = (JSON.parse(readFileSync(f, 'utf8')) as { reward?: unknown }).reward;
  return typeof r === 'number' ? r : null;
}

/** Samples of one rollout in the chosen view. */
export function samplesOf(rollout: string, records: CallRecord[], view: 'calls' | 'merged' | 'trajectory', reward: number | null = null): Sample[] {
  const turns = turnsOf(records);
  let out: Sample[];
  if (view === 'calls') {
    out = turns.map((t) => mergeChain(rollout, [t], 'call'));
  } else {
    const chains: Turn[][] = [];
    for (const t of turns) {
      const chain = chains.find((c) => extendsTurn(c[c.length - 1], t));
      if (chain) chain.push(t);
      else chains.push([t]);
    }
    out = chains.map((c) => mergeChain(rollout, c, 'merged'));
    if (view === 'trajectory') {
      const lastTurn = turns[turns.length - 1];
      const final = chains.find((c) => c[c.length - 1] === lastTurn);
      out = final ? [mergeChain(rollout, final, 'trajectory')] : [];
    }
  }
  return out.map((s) => ({ ...s, reward }));
}

/** Samples of every given rollout of a proxy directory. */
export function exportSamples(dir: string, rollouts: string[], view: 'calls' | 'merged' | 'trajectory'): Sample[] {
  return rollouts.flatMap((r) => samplesOf(r, readCalls(dir, r), view, readReward(dir, r)));
}
