// The one sanctioned test double: a local model server that speaks the real wire formats — OpenAI chat completions,
// Anthropic Messages (`/v1/messages`) and OpenAI Responses (`/v1/responses`), each as JSON and as SSE with
// `stream: true`, with its own auth header, request checks, answer and error shapes (vendor-apis.ts). Tests script
// its replies; the real client code talks to it over HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicAnswer, anthropicStreamEvents, checkAnthropic, ResponsesStore, responsesStreamEvents, type ReplyMessage } from './vendor-apis.ts';

export interface ChatRequestRecord {
  headers: http.IncomingHttpHeaders;
  body: any;
  /** Which API was called: chat (/chat/completions), anthropic (/messages) or responses (/responses). */
  api: 'chat' | 'anthropic' | 'responses';
  /** The request target as received (path and query). */
  url: string;
}

/** What a scripted reply may be. */
export type ScriptedReply =
  | string // assistant text content
  | ReplyMessage
  | { native: unknown } // an answer body sent as it is (any API's own shape)
  | { status: number; body?: unknown; headers?: Record<string, string> } // an HTTP error / odd response
  | { delay_ms: number; reply: ScriptedReply } // answer late (timeouts)
  | { raw: string; status?: number; content_type?: string }; // raw body bytes (malformed JSON or SSE etc.)

export interface OpenAITestServer {
  url: string; // base URL ending in /v1 (…/v1/chat/completions, …/v1/messages, …/v1/responses)
  requests: ChatRequestRecord[];
  close(): Promise<void>;
}

export async function startOpenAIServer(
  reply: (req: ChatRequestRecord, index: number) => ScriptedReply | Promise<ScriptedReply>,
): Promise<OpenAITestServer> {
  const requests: ChatRequestRecord[] = [];
  const store = new ResponsesStore();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const pathname = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && pathname.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model' }] }));
      return;
    }
    const api = pathname.endsWith('/chat/completions') ? 'chat' : pathname.endsWith('/messages') ? 'anthropic' : pathname.endsWith('/responses') ? 'responses' : undefined;
    if (req.method !== 'POST' || !api) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      return;
    }
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'the body must be a JSON object', type: 'invalid_request_error' } }));
      return;
    }
    const record: ChatRequestRecord = { headers: req.headers, body, api, url: req.url ?? '/' };
    const index = requests.push(record) - 1;
    // The vendor APIs refuse what the real ones refuse, before any scripted reply.
    const refused = api === 'anthropic' ? checkAnthropic(req.headers, body) : api === 'responses' ? store.check(req.headers, body) : undefined;
    if (refused) {
      res.writeHead(refused.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(refused.body));
      return;
    }
    let r = await reply(record, index);
    while (typeof r === 'object' && r !== null && 'delay_ms' in r) {
      const delayed: { delay_ms: number; reply: ScriptedReply } = r;
      await new Promise((ok) => setTimeout(ok, delayed.delay_ms));
      if (res.destroyed) return;
      r = delayed.reply;
    }
    if (typeof r === 'object' && r !== null && 'raw' in r) {
      res.writeHead(r.status ?? 200, { 'content-type': r.content_type ?? 'application/json' });
      res.end(r.raw);
      return;
    }
    if (typeof r === 'object' && r !== null && 'status' in r) {
      res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
      res.end(JSON.stringify(r.body ?? { error: { message: `status ${r.status}`, type: 'server_error' } }));
      return;
    }
    if (typeof r === 'object' && r !== null && 'native' in r) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(r.native));
      return;
    }
    const msg: ReplyMessage = typeof r === 'string' ? { content: r } : r;
    if (api !== 'chat') {
      const answer = api === 'anthropic' ? anthropicAnswer(msg, body, index) : store.answer(msg, body, index);
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const e of api === 'anthropic' ? anthropicStreamEvents(answer) : responsesStreamEvents(answer)) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
      return;
    }
    const toolCalls = msg.tool_calls?.map((t, i) => ({
      id: t.id ?? `call_${index}_${i}`,
      type: 'function',
      function: { name: t.name, arguments: t.arguments },
    }));
    const finish = msg.finish_reason ?? (toolCalls?.length ? 'tool_calls' : 'stop');
    const usage = { prompt_tokens: 100 + index, completion_tokens: 10, total_tokens: 110 + index };
    const created = Math.floor(Date.now() / 1000);
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = { id: `chatcmpl-${index}`, object: 'chat.completion.chunk', created, model: body.model };
      const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      send({ ...base, choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] });
      const text = msg.content ?? '';
      for (let i = 0; i < text.length; i += 7) {
        send({ ...base, choices: [{ index: 0, delta: { content: text.slice(i, i + 7) }, finish_reason: null }] });
      }
      toolCalls?.forEach((tc, i) => {
        send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] }, finish_reason: null }] });
        const a = tc.function.arguments;
        for (let j = 0; j < a.length; j += 5) {
          send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: a.slice(j, j + 5) } }] }, finish_reason: null }] });
        }
      });
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage });
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${index}`,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: msg.content ?? null, tool_calls: toolCalls }, finish_reason: finish }],
        usage,
      }),
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
