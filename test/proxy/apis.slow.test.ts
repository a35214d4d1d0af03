// Rollout reconstruction for the three model APIs a harness may speak through the recording proxy: chat
// completions, the OpenAI Responses API (stateless re-sends and stateful previous_response_id chains) and Anthropic
// Messages, JSON and streaming. Real HTTP calls through the real proxy to the local test server (which speaks each
// API's wire format); the samples are read back from the records.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCalls, samplesOf, startProxy, type RecordingProxy } from '../../proxy/index.ts';
import { startOpenAIServer, type ChatRequestRecord, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';

let upstream: OpenAITestServer;
let proxy: RecordingProxy;
let dir: string;
let script: (req: ChatRequestRecord) => ScriptedReply = () => 'ok';

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-apis-'));
  upstream = await startOpenAIServer((req) => script(req));
  proxy = await startProxy({ upstream: upstream.url, dir, callTimeoutMs: 60_000, rolloutKeys: 'off' });
});
afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(rollout: string, endpoint: string, body: unknown, headers: Record<string, string>): Promise<any> {
  const r = await fetch(`${proxy.baseUrlFor(rollout)}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  expect(r.status).toBe(200);
  return (r.headers.get('content-type') ?? '').includes('json') ? r.json() : r.text();
}

const ANTHROPIC = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const OPENAI = { authorization: 'Bearer sk-test' };
const PNG = 'iVBORw0KGgo=';

describe('Anthropic Messages records', () => {
  it('a tool-using conversation (JSON and streamed answers) is one merged sample with its loss mask', async () => {
    // The harness (Claude Code style) re-sends the whole conversation each turn; the middle answer is streamed.
    const turns: ScriptedReply[] = [
      { content: 'Let me look.', tool_calls: [{ id: 'toolu_1', name: 'bash', arguments: '{"cmd":"ls"}' }] },
      { tool_calls: [{ id: 'toolu_2', name: 'bash', arguments: '{"cmd":"cat a.py"}' }] },
      'The bug is in a.py line 3.',
    ];
    let i = 0;
    script = () => turns[i++];
    const tools = [{ name: 'bash', description: 'run', input_schema: { type: 'object', properties: { cmd: { type: 'string' } } } }];
    const base = { model: 'claude-x', max_tokens: 512, system: [{ type: 'text', text: 'You fix bugs.' }], tools };
    const messages: any[] = [{ role: 'user', content: [{ type: 'text', text: 'Fix the bug.' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }];
    const a1 = await call('ant', '/messages', { ...base, messages }, ANTHROPIC);
    messages.push({ role: 'assistant', content: a1.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.py\nb.py' }] });
    const streamed = await call('ant', '/messages', { ...base, messages, stream: true }, ANTHROPIC);
    expect(streamed).toContain('event: content_block_delta');
    messages.push(
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'bash', input: { cmd: 'cat a.py' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'x = 1/0' }] }] },
    );
    await call('ant', '/messages', { ...base, messages }, ANTHROPIC);

    const records = readCalls(dir, 'ant');
    expect(records.map((r) => r.endpoint)).toEqual(['/messages', '/messages', '/messages']);
    // The streamed answer is assembled into the message a JSON call returns (tool input from its JSON deltas).
    expect(records[1].assembled).toMatchObject({ type: 'message', stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_2', name: 'bash', input: { cmd: 'cat a.py' } }] });

    const [sample] = samplesOf('ant', records, 'merged', 1);
    expect(samplesOf('ant', records, 'merged')).toHaveLength(1);
    expect(sample).toMatchObject({ api: 'anthropic', call_ids: records.map((r) => r.call_id), reward: 1, tools });
    expect(sample.messages).toEqual([
      { role: 'system', content: 'You fix bugs.' },
      { role: 'user', content: [{ type: 'text', text: 'Fix the bug.' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'a.py\nb.py' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_2', type: 'function', function: { name: 'bash', arguments: '{"cmd":"cat a.py"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'x = 1/0' },
      { role: 'assistant', content: 'The bug is in a.py line 3.' },
    ]);
    expect(sample.message_loss_mask).toEqual([0, 0, 1, 0, 1, 0, 1]);
    expect(samplesOf('ant', records, 'calls').map((s) => s.messages.length)).toEqual([3, 5, 7]);
    expect(samplesOf('ant', records, 'trajectory')[0].call_ids).toHaveLength(3);
  });
});

describe('OpenAI Responses records', () => {
  const tools = [{ type: 'function', name: 'bash', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }];

  it('a stateful chain (previous_response_id, only new items sent) is rebuilt from the earlier calls and merged', async () => {
    const turns: ScriptedReply[] = [
      { tool_calls: [{ id: 'call_a', name: 'bash', arguments: '{"cmd":"ls"}' }] },
      { tool_calls: [{ id: 'call_b', name: 'computer', arguments: '{"action":{"type":"screenshot"}}' }] },
      'Done: a.py fixed.',
    ];
    let i = 0;
    script = () => turns[i++];
    const r1 = await call('resp', '/responses', { model: 'gpt-x', instructions: 'You fix bugs.', input: 'Fix the bug.', tools }, OPENAI);
    const r2 = await call(
      'resp',
      '/responses',
      { model: 'gpt-x', instructions: 'You fix bugs.', previous_response_id: r1.id, input: [{ type: 'function_call_output', call_id: 'call_a', output: 'a.py' }], tools, stream: true },
      OPENAI,
    );
    expect(r2).toContain('event: response.completed');
    const r2id = /"id":"(resp_[^"]+)"/.exec(r2)![1];
    await call(
      'resp',
      '/responses',
      {
        model: 'gpt-x',
        instructions: 'You fix bugs.',
        previous_response_id: r2id,
        input: [{ type: 'computer_call_output', call_id: 'call_b', output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${PNG}` }, acknowledged_safety_checks: [] }],
        tools,
      },
      OPENAI,
    );
    const records = readCalls(dir, 'resp');
    const merged = samplesOf('resp', records, 'merged');
    expect(merged).toHaveLength(1);
    expect(merged[0].api).toBe('responses');
    expect(merged[0].messages).toEqual([
      { role: 'system', content: 'You fix bugs.' },
      { role: 'user', content: 'Fix the bug.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: 'a.py' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'computer', arguments: '{"type":"screenshot"}' } }] },
      { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
      { role: 'assistant', content: 'Done: a.py fixed.' },
    ]);
    expect(merged[0].message_loss_mask).toEqual([0, 0, 1, 0, 1, 0, 1]);
    expect(merged[0].tools).toEqual(tools);
  });

  it('a stateless harness that re-sends the output items each turn (as the Codex CLI does) merges the same way', async () => {
    const turns: ScriptedReply[] = [{ content: 'Checking.', tool_calls: [{ id: 'call_x', name: 'bash', arguments: '{"cmd":"pwd"}' }] }, 'All done.'];
    let i = 0;
    script = () => turns[i++];
    const input: any[] = [{ role: 'user', content: [{ type: 'input_text', text: 'Where am I?' }] }];
    const r1 = await call('codex', '/responses', { model: 'gpt-x', instructions: 'Be brief.', input, tools, store: false, stream: true }, OPENAI);
    const completed = r1
      .split('\n')
      .filter((l: string) => l.startsWith('data: '))
      .map((l: string) => JSON.parse(l.slice(6)))
      .find((e: any) => e.type === 'response.completed');
    input.push(...completed.response.output, { type: 'function_call_output', call_id: 'call_x', output: '/work' });
    await call('codex', '/responses', { model: 'gpt-x', instructions: 'Be brief.', input, tools, store: false }, OPENAI);
    const [sample, ...rest] = samplesOf('codex', readCalls(dir, 'codex'), 'merged');
    expect(rest).toEqual([]);
    expect(sample.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(sample.messages[2]).toEqual({ role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'bash', arguments: '{"cmd":"pwd"}' } }] });
    expect(sample.message_loss_mask).toEqual([0, 0, 1, 0, 1]);
  });
});

describe('chat completions records still reconstruct', () => {
  it('one merged sample, api chat', async () => {
    const turns: ScriptedReply[] = [{ tool_calls: [{ id: 'c1', name: 'bash', arguments: '{}' }] }, 'fine'];
    let i = 0;
    script = () => turns[i++];
    const messages: any[] = [{ role: 'user', content: 'go' }];
    const a = await call('chat', '/chat/completions', { model: 'm', messages }, OPENAI);
    messages.push(a.choices[0].message, { role: 'tool', tool_call_id: 'c1', content: 'ok' });
    await call('chat', '/chat/completions', { model: 'm', messages, stream: true }, OPENAI);
    const [s] = samplesOf('chat', readCalls(dir, 'chat'), 'merged');
    expect(s).toMatchObject({ api: 'chat', message_loss_mask: [0, 1, 0, 1] });
  });
});

describe('per-rollout keys for Anthropic clients', () => {
  it('a rollout key given as x-api-key (ANTHROPIC_API_KEY) names the rollout and is not sent upstream; the upstream key is', async () => {
    const keyed = await startProxy({ upstream: upstream.url, dir, callTimeoutMs: 60_000, adminKey: 'admin-secret-2', upstreamKey: 'sk-upstream-1' });
    try {
      const issued = await fetch(`${keyed.url}/rollouts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'admin-secret-2' }, body: JSON.stringify({ rollout_id: 'ant-key' }) });
      const { api_key } = (await issued.json()) as { api_key: string };
      script = () => 'hello';
      const r = await fetch(`${keyed.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': api_key, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-x', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(r.status).toBe(200);
      await r.text();
      expect(upstream.requests.at(-1)!.headers['x-api-key']).toBe('sk-upstream-1');
      const [rec] = readCalls(dir, 'ant-key');
      expect(rec).toMatchObject({ rollout_source: 'key', endpoint: '/messages', status: 200 });
      expect(samplesOf('ant-key', [rec], 'calls')[0].messages).toEqual([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]);
    } finally {
      await keyed.close();
    }
  });
});
