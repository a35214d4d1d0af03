import { beforeEach, describe, expect, it } from 'vitest';
import { extendsTurn, samplesOf, turnsOf } from '../../proxy/samples.ts';
import { rewriteRequest } from '../../proxy/rewrite.ts';
import { assembleStream, parseSse } from '../../proxy/sse.ts';
import { RolloutKeys, resolveCall } from '../../proxy/rollout.ts';
import type { CallRecord } from '../../proxy/types.ts';

let n = 0;
beforeEach(() => {
  n = 0;
});
function rec(messages: any[], completion: any, extra: Partial<CallRecord> = {}, tokens?: { prompt: number[]; out: number[]; lp?: number[] }): CallRecord {
  const choice: any = { index: 0, message: completion, finish_reason: 'stop' };
  if (tokens) {
    choice.token_ids = tokens.out;
    if (tokens.lp) choice.logprobs = { content: tokens.lp.map((l, i) => ({ token: `t${i}`, logprob: l })) };
  }
  const resp: any = { id: 'x', object: 'chat.completion', choices: [choice], usage: { prompt_tokens: 1, completion_tokens: 1 } };
  if (tokens) resp.prompt_token_ids = tokens.prompt;
  const seq = n++;
  return {
    v: 1, call_id: `c${seq}`, rollout_id: 'r', rollout_source: 'path', seq, method: 'POST', endpoint: '/chat/completions',
    started_at: '', ttfb_ms: 1, duration_ms: 2, request_asked: { messages }, request_sent: { messages, tools: [{ type: 'function', function: { name: 'bash' } }] },
    rewritten: false, stream: false, status: 200, response_headers: { 'content-type': 'application/json' }, response_text: JSON.stringify(resp), ...extra,
  };
}

const sys = { role: 'system', content: 'you are an agent' };
const user = { role: 'user', content: 'fix the bug' };
const a1 = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"cmd": "ls"}' } }] };
const t1 = { role: 'tool', tool_call_id: 'call_1', content: 'a.py\nb.py' };
const a2 = { role: 'assistant', content: 'Done: the bug was in a.py.' };

describe('rollout reconstruction', () => {
  it('merges a multi-turn tool-calling conversation into one sample with a message loss mask', () => {
    // The harness re-sends the assistant's tool call with its arguments re-serialised (spacing differs): still one chain.
    const resent = { ...a1, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] };
    const records = [rec([sys, user], a1), rec([sys, user, resent, t1], a2)];
    const merged = samplesOf('r', records, 'merged', 0.5);
    expect(merged).toHaveLength(1);
    expect(merged[0].call_ids).toEqual(['c0', 'c1']);
    expect(merged[0].messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(merged[0].message_loss_mask).toEqual([0, 0, 1, 0, 1]);
    expect(merged[0].reward).toBe(0.5);
    expect(samplesOf('r', records, 'calls')).toHaveLength(2);
    const traj = samplesOf('r', records, 'trajectory');
    expect(traj).toHaveLength(1);
    expect(traj[0].messages).toHaveLength(5);
  });

  it('starts a new sample when a call does not extend the previous one (context was cut)', () => {
    const records = [rec([sys, user], a1), rec([sys, { role: 'user', content: 'summary of earlier work' }], a2)];
    const merged = samplesOf('r', records, 'merged');
    expect(merged.map((s) => s.call_ids)).toEqual([['c0'], ['c1']]);
    expect(samplesOf('r', records, 'trajectory')[0].call_ids).toEqual(['c1']);
  });

  it('merges by token prefix when token ids were recorded, with a token loss mask and aligned logprobs', () => {
    const r0 = rec([sys, user], a1, {}, { prompt: [1, 2, 3], out: [10, 11], lp: [-0.1, -0.2] });
    // The next prompt is prompt0 + completion0 + tool tokens (5, 6).
    const r1 = rec([sys, user, a1, t1], a2, {}, { prompt: [1, 2, 3, 10, 11, 5, 6], out: [12], lp: [-0.3] });
    const [s] = samplesOf('r', [r0, r1], 'merged');
    expect(s.token_ids).toEqual([1, 2, 3, 10, 11, 5, 6, 12]);
    expect(s.loss_mask).toEqual([0, 0, 0, 1, 1, 0, 0, 1]);
    expect(s.logprobs).toEqual([null, null, null, -0.1, -0.2, null, null, -0.3]);
    // A re-tokenisation that differs breaks the token chain even though the messages match.
    const r2 = rec([sys, user, a1, t1], a2, {}, { prompt: [1, 2, 3, 10, 99, 5, 6], out: [12] });
    expect(extendsTurn(turnsOf([r0])[0], turnsOf([r2])[0])).toBe(false);
  });

  it('skips failed calls and other endpoints', () => {
    const bad = rec([sys, user], a1, { status: 500, error: { kind: 'upstream_error', message: '500' } });
    const emb = rec([sys], a1, { endpoint: '/embeddings' });
    expect(turnsOf([bad, emb])).toEqual([]);
  });
});

describe('request rewriting', () => {
  it('pins sampling, caps tokens and asks for logprobs/token ids, leaving the asked body untouched', () => {
    const asked = { model: 'm', messages: [], temperature: 1.2, max_tokens: 4096, stream: true };
    const { sent, rewritten } = rewriteRequest('/chat/completions', asked, { temperature: 0.7, seed: 3, maxTokens: 1024, logprobs: true, topLogprobs: 2, tokenIds: true, streamUsage: true });
    expect(rewritten).toBe(true);
    expect(sent).toEqual({ model: 'm', messages: [], temperature: 0.7, seed: 3, max_tokens: 1024, stream: true, logprobs: true, top_logprobs: 2, return_token_ids: true, stream_options: { include_usage: true } });
    expect(asked.temperature).toBe(1.2);
    expect(rewriteRequest('/chat/completions', { max_tokens: 10 }, { maxTokens: 1024 }).sent).toEqual({ max_tokens: 10 });
    expect(rewriteRequest('/chat/completions', { max_completion_tokens: 5000 }, { maxTokens: 1024 }).sent).toEqual({ max_completion_tokens: 1024 });
    expect(rewriteRequest('/responses', { input: 'x' }, { maxTokens: 64, logprobs: true }).sent).toEqual({ input: 'x', max_output_tokens: 64, top_logprobs: 0, include: ['message.output_text.logprobs'] });
    expect(rewriteRequest('/models', { a: 1 }, { temperature: 0 })).toEqual({ sent: { a: 1 }, rewritten: false });
    expect(rewriteRequest('/chat/completions', { a: 1 }, {}).rewritten).toBe(false);
  });
});

describe('SSE assembly', () => {
  it('assembles content and streamed tool-call arguments, and counts malformed events', () => {
    const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const text =
      ev({ id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }) +
      ev({ id: 'c', choices: [{ index: 0, delta: { content: 'lo' } }] }) +
      ev({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 't1', function: { name: 'bash', arguments: '{"cm' } }] } }] }) +
      ev({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'd":1}' } }] }, finish_reason: 'tool_calls' }] }) +
      'data: {not json\n\n' +
      ': keep-alive comment\n\n' +
      ev({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } }) +
      'data: [DONE]\n\n';
    const { assembled, malformed } = assembleStream('/chat/completions', text);
    expect(malformed).toBe(1);
    expect(assembled).toMatchObject({
      model: 'm',
      choices: [{ message: { role: 'assistant', content: 'Hello', tool_calls: [{ id: 't1', function: { name: 'bash', arguments: '{"cmd":1}' } }] }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    });
    expect(parseSse(text).done).toBe(true);
  });

  it('takes the Responses API object from response.completed', () => {
    const text = 'event: response.created\ndata: {"type":"response.created","response":{"id":"r1","status":"in_progress"}}\n\n' +
      'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r1","status":"completed","output":[]}}\n\n';
    expect(assembleStream('/responses', text).assembled).toEqual({ id: 'r1', status: 'completed', output: [] });
  });
});

describe('rollout resolution', () => {
  it('keys off: finds the rollout by path prefix, header or per-rollout key, and refuses calls without one', () => {
    const keys = new RolloutKeys();
    const key = keys.issue('ep-7');
    expect(resolveCall('/r/ep-1/v1/chat/completions', {}, keys, 'off')).toEqual({ rollout: 'ep-1', source: 'path', endpoint: '/chat/completions', keyed: false });
    expect(resolveCall('/v1/responses', { 'x-grove-rollout': 'ep-2' }, keys, 'off')).toEqual({ rollout: 'ep-2', source: 'header', endpoint: '/responses', keyed: false });
    expect(resolveCall('/v1/chat/completions', { authorization: `Bearer ${key}` }, keys, 'off')).toEqual({ rollout: 'ep-7', source: 'key', endpoint: '/chat/completions', keyed: true });
    expect(resolveCall('/v1/chat/completions', { authorization: 'Bearer sk-other' }, keys, 'off')).toMatchObject({ error: 'rollout_required' });
    expect(resolveCall('/r/..%2F..%2Fetc/v1/chat/completions', {}, keys, 'off')).toMatchObject({ error: 'invalid_rollout' });
    expect(resolveCall('/r/%ZZ/v1/chat/completions', {}, keys, 'off')).toMatchObject({ error: 'invalid_path' });
    expect(resolveCall('/other', {}, keys, 'off')).toMatchObject({ error: 'not_found' });
    // A rollout with a key takes only that key, even with keys off.
    expect(resolveCall('/r/ep-7/v1/chat/completions', {}, keys, 'off')).toMatchObject({ error: 'rollout_key_required' });
    expect(resolveCall('/v1/chat/completions', { 'x-grove-rollout': 'ep-7' }, keys, 'off')).toMatchObject({ error: 'rollout_key_required' });
  });

  it('keys required (the default): only a rollout\'s own key records into it', () => {
    const keys = new RolloutKeys();
    const a = keys.issue('ro-a');
    const b = keys.issue('ro-b');
    expect(resolveCall('/r/ro-a/v1/chat/completions', { authorization: `Bearer ${a}` }, keys)).toEqual({ rollout: 'ro-a', source: 'path', endpoint: '/chat/completions', keyed: true });
    expect(resolveCall('/v1/messages', { 'x-api-key': b }, keys)).toEqual({ rollout: 'ro-b', source: 'key', endpoint: '/messages', keyed: true });
    expect(resolveCall('/r/ro-b/v1/chat/completions', { authorization: `Bearer ${a}` }, keys)).toMatchObject({ error: 'rollout_key_mismatch' });
    expect(resolveCall('/v1/chat/completions', { 'x-api-key': a, 'x-grove-rollout': 'ro-b' }, keys)).toMatchObject({ error: 'rollout_key_mismatch' });
    expect(resolveCall('/v1/chat/completions', { authorization: `Bearer ${a}`, 'x-api-key': b }, keys)).toMatchObject({ error: 'rollout_key_mismatch' });
    expect(resolveCall('/r/ro-c/v1/chat/completions', {}, keys)).toMatchObject({ error: 'rollout_key_required' });
    expect(resolveCall('/v1/chat/completions', { 'x-grove-rollout': 'ro-c', authorization: 'Bearer sk-x' }, keys)).toMatchObject({ error: 'rollout_key_required' });
    expect(resolveCall('/v1/chat/completions', { authorization: 'Bearer gk-not-issued-by-this-proxy' }, keys)).toMatchObject({ error: 'invalid_rollout_key' });
  });
});
