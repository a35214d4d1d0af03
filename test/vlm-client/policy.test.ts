import { afterEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../protocol/observation.ts';
import type { Task } from '../../protocol/task.ts';
import { AuthenticationError, ChatClient, type ContentPart } from '../../vlm-client/client.ts';
import { parseModelOutput } from '../../vlm-client/formats/index.ts';
import { observationText, VlmPolicy } from '../../vlm-client/policy.ts';
import { startOpenAIServer, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const task: Task = { id: 'shop--1', suite: 'offline', site: 'shop', question: 'Find the price of the red shoes.', extra: {}, flags: [] };

function obs(step: number, over: Partial<Observation> = {}): Observation {
  return {
    step,
    url: `https://shop.test/p${step}`,
    title: `Page ${step}`,
    tabs: [{ index: 0, url: `https://shop.test/p${step}`, title: `Page ${step}`, active: true }],
    viewport: { width: 1280, height: 800 },
    screenshot: { mime: 'image/jpeg', width: 1280, height: 800, base64: Buffer.from(`frame-${step}`).toString('base64'), scale: 1, scale_x: 1, scale_y: 1 },
    last_action_error: null,
    events: [],
    timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
    ...over,
  };
}

async function setup(reply: (i: number) => ScriptedReply) {
  server = await startOpenAIServer((_r, i) => reply(i));
  return { server, client: new ChatClient({ baseURL: server.url, model: 'test-model', maxRetries: 0 }) };
}

const parts = (content: unknown) => (Array.isArray(content) ? (content as ContentPart[]) : [{ type: 'text' as const, text: String(content) }]);
const images = (body: any) => body.messages.flatMap((m: any) => parts(m.content)).filter((p: ContentPart) => p.type === 'image_url').map((p: any) => p.image_url.url);
const texts = (body: any) => body.messages.flatMap((m: any) => parts(m.content)).filter((p: ContentPart) => p.type === 'text').map((p: any) => p.text).join('\n');

describe('VlmPolicy', () => {
  it('runs qwen3vl end to end: prompt, screenshot, history, decision', async () => {
    const replies = [
      'The shoes are listed.\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 300]}}\n</tool_call>',
      '<tool_call>\n{"name": "computer_use", "arguments": {"action": "answer", "text": "$40"}}\n</tool_call>',
    ];
    const { server, client } = await setup((i) => replies[i]);
    const policy = new VlmPolicy({ client, format: 'qwen3vl', temperature: 0, max_tokens: 256 });
    expect(policy.name).toBe('vlm:test-model:qwen3vl');
    await policy.start(task);

    const d1 = await policy.next(obs(1), { task, step: 1 });
    expect(d1).toMatchObject({ output: replies[0], format: 'qwen3vl', thought: 'The shoes are listed.', prompt_tokens: 100, completion_tokens: 10 });
    expect(d1.latency_ms).toBeGreaterThanOrEqual(0);
    expect(parseModelOutput(d1.format!, d1.output)).toEqual({ ok: true, thought: 'The shoes are listed.', actions: [{ action: 'click', x: 500, y: 300, space: 'rel1000' }] });

    const req1 = server.requests[0].body;
    expect(req1.model).toBe('test-model');
    expect(req1.temperature).toBe(0);
    expect(req1.max_tokens).toBe(256);
    expect(req1.tools).toBeUndefined();
    expect(req1.messages[0].role).toBe('system');
    expect(req1.messages[0].content).toContain('<tools>');
    expect(req1.messages[0].content).toContain('"computer_use"');
    expect(texts(req1)).toContain('Task: Find the price of the red shoes.');
    expect(texts(req1)).toContain('URL: https://shop.test/p1');
    expect(images(req1)).toEqual([`data:image/jpeg;base64,${Buffer.from('frame-1').toString('base64')}`]);

    const d2 = await policy.next(obs(2), { task, step: 2 });
    expect(parseModelOutput('qwen3vl', d2.output)).toMatchObject({ ok: true, actions: [{ action: 'answer', text: '$40' }] });
    const req2 = server.requests[1].body;
    // Only the latest screenshot is sent (keepScreenshots 1); the previous output is replayed.
    expect(images(req2)).toEqual([`data:image/jpeg;base64,${Buffer.from('frame-2').toString('base64')}`]);
    expect(texts(req2)).toContain('[screenshot of step 1 omitted]');
    expect(req2.messages.filter((m: any) => m.role === 'assistant').map((m: any) => m.content)).toEqual([replies[0]]);
    expect(policy.lastContext?.images).toBe(1);
  });

  it('keeps k screenshots when configured', async () => {
    const { server, client } = await setup(() => '<tool_call>{"name":"computer_use","arguments":{"action":"wait","time":1}}</tool_call>');
    const policy = new VlmPolicy({ client, format: 'qwen3vl', context: { keepScreenshots: 2 } });
    policy.start(task);
    for (let s = 1; s <= 3; s++) await policy.next(obs(s), { task, step: s });
    expect(images(server.requests[2].body)).toHaveLength(2);
  });

  it('sends native tools and returns tool calls as a JSON-encoded message', async () => {
    const { server, client } = await setup(() => ({ content: 'Typing the query.', tool_calls: [{ id: 'c1', name: 'computer_use', arguments: '{"action":"type","text":"red shoes"}' }] }));
    const policy = new VlmPolicy({ client, format: 'qwen3vl', nativeTools: true, stream: true });
    policy.start(task);
    const d = await policy.next(obs(1), { task, step: 1 });
    const body = server.requests[0].body;
    expect(body.tools.map((t: any) => t.function.name)).toEqual(['computer_use']);
    expect(body.stream).toBe(true);
    expect(body.messages[0].content).not.toContain('<tools>');
    expect(JSON.parse(d.output)).toEqual({ content: 'Typing the query.', tool_calls: [{ id: 'c1', name: 'computer_use', arguments: '{"action":"type","text":"red shoes"}' }] });
    expect(d.thought).toBe('Typing the query.');
    expect(parseModelOutput('qwen3vl', d.output)).toMatchObject({ ok: true, actions: [{ action: 'type', text: 'red shoes' }] });
    // The next request replays the call as a tool call with a tool result, then the new observation.
    await policy.next(obs(2), { task, step: 2 });
    const msgs = server.requests[1].body.messages;
    const i = msgs.findIndex((m: any) => m.role === 'assistant');
    expect(msgs[i]).toEqual({ role: 'assistant', content: 'Typing the query.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'computer_use', arguments: '{"action":"type","text":"red shoes"}' } }] });
    expect(msgs[i + 1]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'Executed; see the next observation.' });
    expect(msgs[i + 2].role).toBe('user');
  });

  it('webvoyager: sends the SoM element list', async () => {
    const { server, client } = await setup(() => 'Thought: The search box is 0.\nAction: Type [0]; red shoes');
    const policy = new VlmPolicy({ client, format: 'webvoyager' });
    policy.start(task);
    const d = await policy.next(obs(1, { som: [{ label: 0, tag: 'input', text: 'Search products', x: 1, y: 2, width: 3, height: 4 }, { label: 1, tag: 'a', text: 'Cart', x: 5, y: 6, width: 7, height: 8 }] }), { task, step: 1 });
    expect(texts(server.requests[0].body)).toContain('Labelled elements:\n[0] <input> "Search products"\n[1] <a> "Cart"');
    expect(d.thought).toBe('The search box is 0.');
    expect(parseModelOutput('webvoyager', d.output)).toMatchObject({ ok: true, actions: [{ action: 'type_label', label: 0, text: 'red shoes' }] });
  });

  it('image_px formats state the screenshot size; errors and parse feedback reach the model', async () => {
    const { server, client } = await setup(() => JSON.stringify([{ type: 'tool_use', id: 't', name: 'computer', input: { action: 'screenshot' } }]));
    const policy = new VlmPolicy({ client, format: 'anthropic' });
    policy.start(task);
    await policy.next(obs(1), { task, step: 1 });
    expect(server.requests[0].body.messages[0].content).toContain('1280x800');
    await policy.next(obs(2, { last_action_error: { code: 'invalid_coordinates', message: 'outside the viewport' } }), { task, step: 2, lastParseError: 'Unknown tool "bash".' });
    const t = texts(server.requests[1].body);
    expect(t).toContain('The last action failed (invalid_coordinates): outside the viewport');
    expect(t).toContain('Your previous reply could not be used: Unknown tool "bash".');
  });

  it('propagates generation errors as typed errors', async () => {
    const { client } = await setup(() => ({ status: 401, body: { error: { message: 'bad key' } } }));
    const policy = new VlmPolicy({ client, format: 'uitars' });
    policy.start(task);
    await expect(policy.next(obs(1), { task, step: 1 })).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('rejects an unknown format at construction', () => {
    const client = new ChatClient({ baseURL: 'http://127.0.0.1:9/v1', model: 'm' });
    expect(() => new VlmPolicy({ client, format: 'morse' })).toThrow(/Unknown policy output format "morse"; known formats: qwen3vl/);
  });
});

describe('observationText', () => {
  it('describes tabs, events and a missing screenshot', () => {
    const o = obs(3, {
      tabs: [
        { index: 0, url: 'https://a.test/', title: 'A', active: false },
        { index: 1, url: 'https://b.test/', title: 'B', active: true },
      ],
      events: [{ type: 'dialog', dialog_type: 'alert', message: 'Saved', handled: 'accepted' }],
      screenshot: undefined,
    });
    expect(observationText(o)).toBe(
      'URL: https://shop.test/p3\nTitle: Page 3\nTabs: [0] A | [1*] B\nAn alert dialog said "Saved" and was accepted.\n(No screenshot is available for this step.)',
    );
  });
});
