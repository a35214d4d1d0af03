// The official SDKs add OPENAI_CUSTOM_HEADERS / ANTHROPIC_CUSTOM_HEADERS from the host's environment to every request
// (openai 6.x, @anthropic-ai/sdk 1.x constructors). A policy or judge sends what it was configured with and nothing
// else: with both variables set on this process, the requests a local model server receives carry none of them,
// while the headers the client was given (its own default headers, the key) still go out.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../vlm-client/anthropic-client.ts';
import { ChatClient } from '../../vlm-client/client.ts';
import { ResponsesClient } from '../../vlm-client/responses-client.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const VARS = ['OPENAI_CUSTOM_HEADERS', 'ANTHROPIC_CUSTOM_HEADERS'] as const;
const saved: Record<string, string | undefined> = {};
let server: OpenAITestServer | undefined;

beforeEach(() => {
  for (const v of VARS) {
    saved[v] = process.env[v];
    // Two lines (the SDKs split on newlines): a header of the host's and one that would override ours.
    process.env[v] = 'X-Host-Secret: from-the-host\nX-Grove-Test: host-value';
  }
});
afterEach(async () => {
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
  await server?.close();
  server = undefined;
});

const messages = [{ role: 'user' as const, content: 'hi' }];

describe('host environment headers', () => {
  it('chat completions and Responses: no OPENAI_CUSTOM_HEADERS header goes out; the given headers do', async () => {
    server = await startOpenAIServer(() => 'ok');
    const opts = { baseURL: server.url, model: 'test-model', apiKey: 'sk-test', maxRetries: 0, defaultHeaders: { 'X-Grove-Test': 'ours' } };
    await new ChatClient(opts).complete({ messages });
    await new ChatClient(opts).complete({ messages, stream: true });
    await new ResponsesClient(opts).complete({ messages });
    expect(server.requests.map((r) => r.api)).toEqual(['chat', 'chat', 'responses']);
    for (const r of server.requests) {
      expect(r.headers['x-host-secret']).toBeUndefined();
      expect(r.headers['x-grove-test']).toBe('ours');
      expect(r.headers.authorization).toBe('Bearer sk-test');
    }
  });

  it('a keyless chat client (a local vLLM) sends no Authorization and no host header', async () => {
    server = await startOpenAIServer(() => 'ok');
    await new ChatClient({ baseURL: server.url, model: 'test-model', maxRetries: 0 }).complete({ messages });
    expect(server.requests[0].headers['x-host-secret']).toBeUndefined();
    expect(server.requests[0].headers['x-grove-test']).toBeUndefined();
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it('Anthropic Messages: no ANTHROPIC_CUSTOM_HEADERS header goes out; x-api-key and the given headers do', async () => {
    server = await startOpenAIServer(() => 'ok');
    await new AnthropicClient({ baseURL: server.url, model: 'claude-test', apiKey: 'sk-ant-test', maxRetries: 0, defaultHeaders: { 'X-Grove-Test': 'ours' } }).complete({ messages });
    const [r] = server.requests;
    expect(r.api).toBe('anthropic');
    expect(r.headers['x-host-secret']).toBeUndefined();
    expect(r.headers['x-grove-test']).toBe('ours');
    expect(r.headers['x-api-key']).toBe('sk-ant-test');
    expect(r.headers.authorization).toBeUndefined();
  });
});
