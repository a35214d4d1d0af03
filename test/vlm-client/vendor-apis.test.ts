// Anthropic's Messages API and OpenAI's Responses API on the wire: each format's request as the vendor expects it
// (auth header, computer tool with the display size, turn structure) and a model-shaped reply parsed back.
import { afterEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../protocol/observation.ts';
import type { Task } from '../../protocol/task.ts';
import { makePolicyFactory } from '../../cli/commands/run-policy.ts';
import { AnthropicClient, anthropicWouldResize } from '../../vlm-client/anthropic-client.ts';
import { RateLimitError } from '../../vlm-client/client.ts';
import { FORMATS, parseModelOutput } from '../../vlm-client/formats/index.ts';
import { VlmPolicy } from '../../vlm-client/policy.ts';
import { ResponsesClient } from '../../vlm-client/responses-client.ts';
import { targetSize } from '../../browser-env/resize.ts';
import { ResizeOptions } from '../../protocol/sandbox.ts';
import { startOpenAIServer, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const task: Task = { id: 'shop--1', suite: 'offline', site: 'shop', question: 'Find the price of the red shoes.', extra: {}, flags: [] };

function obs(step: number, size = { width: 1024, height: 800 }): Observation {
  return {
    step,
    url: `https://shop.test/p${step}`,
    title: `Page ${step}`,
    tabs: [{ index: 0, url: `https://shop.test/p${step}`, title: `Page ${step}`, active: true }],
    viewport: { width: 1280, height: 1000 },
    screenshot: { mime: 'image/jpeg', ...size, base64: Buffer.from(`frame-${step}`).toString('base64'), scale: 0.8, scale_x: 0.8, scale_y: 0.8 },
    last_action_error: null,
    events: [],
    timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
  };
}

async function serve(replies: ScriptedReply[]) {
  server = await startOpenAIServer((_r, i) => replies[i]);
  return server;
}

describe('Anthropic Messages API', () => {
  it('sends the computer tool with the display size, x-api-key and anthropic-version; replays tool_use with tool_result', async () => {
    const s = await serve([
      { content: 'Clicking the search box.', tool_calls: [{ name: 'computer', arguments: '{"action":"left_click","coordinate":[512,400]}' }] },
      { content: null, tool_calls: [{ name: 'computer', arguments: '{"action":"type","text":"red shoes"}' }] },
      'The red shoes cost $40.',
    ]);
    const client = new AnthropicClient({ baseURL: s.url, model: 'claude-test', apiKey: 'sk-ant-test', maxRetries: 0 });
    const policy = new VlmPolicy({ client, format: 'anthropic', nativeTools: true, max_tokens: 1024 });
    await policy.start(task);
    const d1 = await policy.next(obs(1), { task, step: 1 });

    const r1 = s.requests[0];
    expect(r1.api).toBe('anthropic');
    expect(r1.headers['x-api-key']).toBe('sk-ant-test');
    expect(r1.headers['anthropic-version']).toBe('2023-06-01');
    expect(r1.headers['anthropic-beta']).toContain('computer-use');
    expect(r1.headers.authorization).toBeUndefined();
    expect(r1.body).toMatchObject({ model: 'claude-test', max_tokens: 1024, system: FORMATS.anthropic.systemPrompt({ width: 1024, height: 800, native_tools: true }) });
    expect(r1.body.tools).toEqual([{ type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 800 }]);
    expect(r1.body.messages).toHaveLength(1);
    expect(r1.body.messages[0].content).toContainEqual({ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: Buffer.from('frame-1').toString('base64') } });

    // The reply, as a Claude model answers, parses with the anthropic format.
    expect(parseModelOutput('anthropic', d1.output, { width: 1024, height: 800 })).toEqual({
      ok: true,
      thought: 'Clicking the search box.',
      actions: [{ action: 'click', x: 512, y: 400, space: 'image_px' }],
    });
    expect(d1).toMatchObject({ prompt_tokens: 200, completion_tokens: 20 });

    await policy.next(obs(2), { task, step: 2 });
    // The server refuses a tool_use without its tool_result: this request was accepted and pairs them.
    const m2 = s.requests[1].body.messages;
    expect(m2.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(m2[1].content).toContainEqual({ type: 'tool_use', id: 'toolu_0_0', name: 'computer', input: { action: 'left_click', coordinate: [512, 400] } });
    expect(m2[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_0_0' });

    const d3 = await policy.next(obs(3), { task, step: 3 });
    expect(parseModelOutput('anthropic', d3.output)).toEqual({ ok: true, actions: [{ action: 'answer', text: 'The red shoes cost $40.' }] });
    expect(client.stats()).toMatchObject({ calls: 3, succeeded: 3, prompt_tokens: 200 + 201 + 202, completion_tokens: 60 });
  });

  it('retries 429 (with retry-after-ms) and 529 overloaded, and reports errors in the Anthropic shape', async () => {
    const s = await serve([
      { status: 429, headers: { 'retry-after-ms': '10' }, body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } } },
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      'done',
      { status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } },
    ]);
    const client = new AnthropicClient({ baseURL: s.url, model: 'claude-test', apiKey: 'k', maxRetries: 2 });
    const r = await client.complete({ messages: [{ role: 'user', content: 'hi' }] });
    expect(r).toMatchObject({ text: 'done', attempts: 3, usage: { prompt_tokens: 202, completion_tokens: 20, total_tokens: 222 } });
    const once = new AnthropicClient({ baseURL: s.url, model: 'claude-test', apiKey: 'k', maxRetries: 0 });
    const err = await once.complete({ messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, type: 'rate_limit_error', message: '429 slow down' });
    // Without a key the API answers 401 authentication_error (never retried).
    const anon = new AnthropicClient({ baseURL: s.url, model: 'claude-test', maxRetries: 2 });
    await expect(anon.complete({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 401, type: 'authentication_error' });
  });

  it('sends images of the size Claude sees: the anthropic format shrinks 1280x1000 to 1024x800', () => {
    expect(anthropicWouldResize(1280, 1000)).toBe(true);
    const sent = targetSize({ width: 1280, height: 1000 }, ResizeOptions.parse(FORMATS.anthropic.sandbox!.resize));
    expect(sent).toEqual({ width: 1024, height: 800 });
    expect(anthropicWouldResize(sent.width, sent.height)).toBe(false);
    expect(anthropicWouldResize(1280, 800)).toBe(false);
  });

  it('warns when a screenshot is one Anthropic would shrink (coordinates would come back in another space)', async () => {
    const s = await serve(['ok', 'ok']);
    const warnings: string[] = [];
    const log = { debug() {}, info() {}, error() {}, warn: (_o: unknown, msg?: string) => void warnings.push(msg ?? '') };
    const client = new AnthropicClient({ baseURL: s.url, model: 'claude-test', apiKey: 'k', maxRetries: 0, log });
    await client.complete({ messages: [{ role: 'user', content: 'hi' }], computer: { width: 1024, height: 800 } });
    expect(warnings).toEqual([]);
    await client.complete({ messages: [{ role: 'user', content: 'hi' }], computer: { width: 1280, height: 1000 } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/shrinks screenshots above ~1\.15 MP/);
  });
});

describe('OpenAI Responses API', () => {
  it('sends computer_use_preview with display size and environment, then previous_response_id + computer_call_output turns', async () => {
    const safety = [{ id: 'sc_1', code: 'malicious_instructions', message: 'The page asks to ignore instructions.' }];
    const srv = await serve([
      { content: null, tool_calls: [{ name: 'computer', arguments: JSON.stringify({ action: { type: 'click', button: 'left', x: 100, y: 200 } }) }] },
      { content: null, tool_calls: [{ name: 'computer', arguments: JSON.stringify({ action: { type: 'type', text: 'red shoes' } }), safety_checks: safety }] },
      { content: null, tool_calls: [{ name: 'goto', arguments: '{"url":"https://shop.test/cart"}' }] },
      'The red shoes cost $40.',
    ]);
    const client = new ResponsesClient({ baseURL: srv.url, model: 'computer-use-preview', apiKey: 'sk-test', maxRetries: 0 });
    const policy = new VlmPolicy({ client, format: 'openai_cua', nativeTools: true });
    await policy.start(task);

    const d1 = await policy.next(obs(1), { task, step: 1 });
    const b1 = srv.requests[0].body;
    expect(srv.requests[0].api).toBe('responses');
    expect(srv.requests[0].headers.authorization).toBe('Bearer sk-test');
    expect(b1.tools[0]).toEqual({ type: 'computer_use_preview', display_width: 1024, display_height: 800, environment: 'browser' });
    expect(b1.tools.slice(1).map((t: { type: string; name: string }) => `${t.type}:${t.name}`)).toEqual(['function:goto', 'function:back']);
    expect(b1).toMatchObject({ model: 'computer-use-preview', truncation: 'auto', instructions: FORMATS.openai_cua.systemPrompt({ width: 1024, height: 800, native_tools: true }) });
    expect(b1.previous_response_id).toBeUndefined();
    expect(b1.input.at(-1).content).toContainEqual({ type: 'input_image', image_url: `data:image/jpeg;base64,${Buffer.from('frame-1').toString('base64')}` });
    expect(parseModelOutput('openai_cua', d1.output)).toEqual({ ok: true, actions: [{ action: 'click', x: 100, y: 200, space: 'image_px' }] });
    expect(d1).toMatchObject({ prompt_tokens: 300, completion_tokens: 30 });

    // The next turn continues the stored response with the new screenshot as the call's output.
    const d2 = await policy.next(obs(2), { task, step: 2 });
    const b2 = srv.requests[1].body;
    expect(b2.previous_response_id).toBe('resp_0');
    expect(b2.input[0]).toEqual({ type: 'computer_call_output', call_id: 'call_0_0', output: { type: 'computer_screenshot', image_url: `data:image/jpeg;base64,${Buffer.from('frame-2').toString('base64')}` } });
    expect(b2.input[1].content.every((c: { type: string }) => c.type === 'input_text')).toBe(true);
    expect(parseModelOutput('openai_cua', d2.output)).toMatchObject({ ok: true, actions: [{ action: 'type', text: 'red shoes' }] });

    // Pending safety checks are acknowledged with the output (the server refuses the turn otherwise).
    const d3 = await policy.next(obs(3), { task, step: 3 });
    expect(srv.requests[2].body.input[0]).toMatchObject({ type: 'computer_call_output', call_id: 'call_1_0', acknowledged_safety_checks: safety });
    expect(parseModelOutput('openai_cua', d3.output)).toMatchObject({ ok: true, actions: [{ action: 'goto', url: 'https://shop.test/cart' }] });

    const d4 = await policy.next(obs(4), { task, step: 4 });
    expect(srv.requests[3].body.input[0]).toEqual({ type: 'function_call_output', call_id: 'call_2_0', output: 'done' });
    expect(parseModelOutput('openai_cua', d4.output)).toEqual({ ok: true, actions: [{ action: 'answer', text: 'The red shoes cost $40.' }] });
  });

  it('a continuation the API would refuse is a 4xx APIError, not a silent success', async () => {
    const s = await serve(['unused']);
    const client = new ResponsesClient({ baseURL: s.url, model: 'm', apiKey: 'k', maxRetries: 0 });
    const err = await client.complete({ messages: [{ role: 'user', content: 'x' }], state: { previous_response_id: 'resp_nope' } }).catch((e) => e);
    expect(err).toMatchObject({ status: 404, message: "404 Previous response with id 'resp_nope' not found." });
  });
});

describe('grove run policies', () => {
  it('--api picks the client; --keep-screenshots reaches the prompt', async () => {
    const s = await serve([
      { content: null, tool_calls: [{ name: 'computer', arguments: '{"action":"mouse_move","coordinate":[10,10]}' }] },
      { content: null, tool_calls: [{ name: 'computer', arguments: '{"action":"left_click"}' }] },
    ]);
    const make = makePolicyFactory({ policy: s.url, model: 'claude-test', format: 'anthropic', api: 'anthropic', policyApiKey: 'k', context: { keepScreenshots: 2 } });
    const policy = make(task);
    await policy.start(task);
    await policy.next(obs(1), { task, step: 1 });
    await policy.next(obs(2), { task, step: 2 });
    expect(s.requests.map((r) => r.api)).toEqual(['anthropic', 'anthropic']);
    const images = s.requests[1].body.messages.flatMap((m: { content: { type: string }[] }) => m.content).filter((b: { type: string }) => b.type === 'image');
    expect(images).toHaveLength(2);
  });
});
