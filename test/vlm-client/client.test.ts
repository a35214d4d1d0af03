import { afterEach, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ChatClient,
  ConflictError,
  imageContent,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  type ChatClientOptions,
} from '../../vlm-client/client.ts';
import { startOpenAIServer, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(reply: (i: number) => ScriptedReply, opts: Partial<ChatClientOptions> = {}) {
  server = await startOpenAIServer((_req, i) => reply(i));
  const client = new ChatClient({ baseURL: server.url, model: 'test-model', apiKey: 'sk-test', ...opts });
  return { server, client };
}

const user = (text: string) => [{ role: 'user' as const, content: text }];

describe('ChatClient', () => {
  it('returns text, finish reason, usage and what it sent', async () => {
    const { server, client } = await setup(() => 'hello there');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    const res = await client.complete({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, imageContent(png, 'image/png')] }],
      temperature: 0,
      max_tokens: 50,
      extra: { seed: 7 },
    });
    expect(res.text).toBe('hello there');
    expect(res.tool_calls).toEqual([]);
    expect(res.finish_reason).toBe('stop');
    expect(res.usage).toEqual({ prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 });
    expect(res.attempts).toBe(1);
    expect(res.latency_ms).toBeGreaterThanOrEqual(0);
    const sent = server.requests[0];
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body.model).toBe('test-model');
    expect(sent.body.temperature).toBe(0);
    expect(sent.body.max_tokens).toBe(50);
    expect(sent.body.seed).toBe(7);
    expect(sent.body.stream).toBeUndefined();
    expect(sent.body.messages[0].content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } });
  });

  it('sends no authorization header without an API key, and default headers', async () => {
    server = await startOpenAIServer(() => 'ok');
    const client = new ChatClient({ baseURL: `${server.url}/`, model: 'm', defaultHeaders: { 'x-team': 'grove' } });
    await client.complete({ messages: user('hi') });
    expect(server.requests[0].headers.authorization).toBeUndefined();
    expect(server.requests[0].headers['x-team']).toBe('grove');
  });

  it('returns tool calls and sends tools', async () => {
    const { server, client } = await setup(() => ({ content: null, tool_calls: [{ name: 'computer_use', arguments: '{"action":"left_click","coordinate":[1,2]}', id: 'c1' }] }));
    const tools = [{ type: 'function' as const, function: { name: 'computer_use', parameters: { type: 'object' } } }];
    const res = await client.complete({ messages: user('go'), tools, tool_choice: 'auto' });
    expect(res.text).toBe('');
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.tool_calls).toEqual([{ id: 'c1', name: 'computer_use', arguments: '{"action":"left_click","coordinate":[1,2]}' }]);
    expect(server.requests[0].body.tools).toEqual(tools);
    expect(server.requests[0].body.tool_choice).toBe('auto');
  });

  it('streams text and tool-call argument deltas', async () => {
    const args = '{"action":"type","text":"a fairly long text to split into many deltas"}';
    const { server, client } = await setup(() => ({
      content: 'Thinking about the page, then acting.',
      tool_calls: [
        { name: 'computer_use', arguments: args, id: 'x1' },
        { name: 'computer_use', arguments: '{"action":"key","keys":["enter"]}', id: 'x2' },
      ],
    }));
    const res = await client.complete({ messages: user('go'), stream: true });
    expect(server.requests[0].body.stream).toBe(true);
    expect(server.requests[0].body.stream_options).toEqual({ include_usage: true });
    expect(res.text).toBe('Thinking about the page, then acting.');
    expect(res.tool_calls).toEqual([
      { id: 'x1', name: 'computer_use', arguments: args },
      { id: 'x2', name: 'computer_use', arguments: '{"action":"key","keys":["enter"]}' },
    ]);
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.usage?.total_tokens).toBe(110);
    expect(Array.isArray(res.raw)).toBe(true);
  });

  it('retries 429 honouring retry-after-ms, then succeeds', async () => {
    const { server, client } = await setup((i) => (i === 0 ? { status: 429, headers: { 'retry-after-ms': '300' }, body: { error: { message: 'slow down' } } } : 'done'));
    const t0 = Date.now();
    const res = await client.complete({ messages: user('x') });
    expect(res.text).toBe('done');
    expect(res.attempts).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(server.requests).toHaveLength(2);
    expect(client.stats().retries).toBe(1);
  });

  it('retries 429 honouring Retry-After in seconds', async () => {
    const { client } = await setup((i) => (i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 'ok'));
    const t0 = Date.now();
    const res = await client.complete({ messages: user('x') });
    expect(res.text).toBe('ok');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
  });

  it('ignores a Retry-After above the cap and backs off instead', async () => {
    const { client } = await setup((i) => (i === 0 ? { status: 429, headers: { 'retry-after': '3600' } } : 'ok'), { maxRetryAfterMs: 2000 });
    const t0 = Date.now();
    await client.complete({ messages: user('x') });
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('retries 503 twice then succeeds', async () => {
    const { server, client } = await setup((i) => (i < 2 ? { status: 503 } : 'third time'));
    const res = await client.complete({ messages: user('x') });
    expect(res.text).toBe('third time');
    expect(res.attempts).toBe(3);
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with the typed error', async () => {
    const { server, client } = await setup(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error', code: 'e500' } } }), { maxRetries: 1 });
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.status).toBe(500);
    expect(err.code).toBe('e500');
    expect(err.message).toBe('500 boom');
    expect(server.requests).toHaveLength(2);
    expect(client.stats()).toMatchObject({ calls: 1, failed: 1, succeeded: 0, attempts: 2 });
  });

  it('does not retry a 400', async () => {
    const { server, client } = await setup(() => ({ status: 400, body: { error: { message: 'bad image', param: 'messages' } } }));
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.param).toBe('messages');
    expect(server.requests).toHaveLength(1);
  });

  it('honours x-should-retry: false on a retryable status', async () => {
    const { server, client } = await setup(() => ({ status: 503, headers: { 'x-should-retry': 'false' } }));
    await expect(client.complete({ messages: user('x') })).rejects.toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, InternalServerError],
    [502, InternalServerError],
    [418, APIError],
  ])('maps status %i to its error class', async (status, Cls) => {
    const { client } = await setup(() => ({ status, body: { error: { message: `m${status}`, code: `c${status}` } } }), { maxRetries: 0 });
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(Cls);
    expect(err).toBeInstanceOf(APIError);
    expect(err.constructor).toBe(Cls);
    expect(err.status).toBe(status);
    expect(err.code).toBe(`c${status}`);
    expect(err.body).toEqual({ error: { message: `m${status}`, code: `c${status}` } });
  });

  it('times out an attempt with APITimeoutError', async () => {
    const { client } = await setup(() => ({ delay_ms: 2000, reply: 'late' }), { timeoutMs: 150, maxRetries: 0 });
    const t0 = Date.now();
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('retries a timeout, then succeeds', async () => {
    const { server, client } = await setup((i) => (i === 0 ? { delay_ms: 1000, reply: 'late' } : 'fast'), { timeoutMs: 200, maxRetries: 1 });
    const res = await client.complete({ messages: user('x') });
    expect(res.text).toBe('fast');
    expect(res.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('reports malformed JSON as an APIError without retrying', async () => {
    const { server, client } = await setup(() => ({ raw: '{"choices": [{"message": ' }));
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.message).toMatch(/Malformed JSON in the chat-completions response/);
    expect(server.requests).toHaveLength(1);
  });

  it('reports a response without choices clearly', async () => {
    const { client } = await setup(() => ({ raw: '{"object":"chat.completion"}' }));
    await expect(client.complete({ messages: user('x') })).rejects.toThrow(/no choices/);
  });

  it('wraps connection failures as APIConnectionError after retrying', async () => {
    const s = await startOpenAIServer(() => 'x');
    const url = s.url;
    await s.close();
    const client = new ChatClient({ baseURL: url, model: 'm', maxRetries: 1 });
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).not.toBeInstanceOf(APITimeoutError);
    expect(client.stats().attempts).toBe(2);
  });

  it('stops on the caller abort signal without retrying', async () => {
    const { server, client } = await setup(() => ({ delay_ms: 2000, reply: 'late' }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await expect(client.complete({ messages: user('x'), signal: ac.signal })).rejects.toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(1);
  });

  it('accumulates usage and latency in stats()', async () => {
    const { client } = await setup(() => 'ok');
    const a = await client.complete({ messages: user('1') });
    const b = await client.complete({ messages: user('2'), stream: true });
    expect(a.usage?.prompt_tokens).toBe(100);
    expect(b.usage?.prompt_tokens).toBe(101);
    const s = client.stats();
    expect(s).toMatchObject({ calls: 2, succeeded: 2, failed: 0, attempts: 2, retries: 0, prompt_tokens: 201, completion_tokens: 20, total_tokens: 221 });
    expect(s.latency_ms_total).toBeGreaterThanOrEqual(a.latency_ms + b.latency_ms - 1);
  });
});

describe('ChatClient body edge cases', () => {
  it('collects reasoning_content apart from the text', async () => {
    const { client } = await setup(() => ({ raw: JSON.stringify({ choices: [{ message: { content: 'a', reasoning_content: 'r' }, finish_reason: 'stop' }] }) }));
    expect(await client.complete({ messages: user('x') })).toMatchObject({ text: 'a', reasoning: 'r', usage: null });
  });

  it('reports an error object inside a 200 answer', async () => {
    const { client } = await setup(() => ({ raw: JSON.stringify({ error: { message: 'model overloaded', code: 'overloaded' } }) }));
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.code).toBe('overloaded');
    expect(err.message).toBe('200 model overloaded');
  });

  it("keeps vLLM's top-level error body (which the SDK's error classes drop) in the error and its message", async () => {
    const body = { object: 'error', message: 'This model supports at most 1 image', type: 'BadRequestError', param: null, code: 400 };
    const { client } = await setup(() => ({ status: 400, body }), { maxRetries: 0 });
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.body).toEqual(body);
    expect(err.message).toBe('400 This model supports at most 1 image');
    expect(err.code).toBe('400');
  });

  it('keeps a non-JSON error body as text in the message', async () => {
    const { client } = await setup(() => ({ raw: '<html>Bad Gateway</html>', status: 502 }), { maxRetries: 0 });
    const err = await client.complete({ messages: user('x') }).catch((e) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.message).toBe('502 <html>Bad Gateway</html>');
  });
});
