// A model server speaking the OpenAI Responses API as it streams (`POST /v1/responses` with `stream: true`):
// server-sent events response.created → output_item.added → output_text.delta → output_item.done →
// response.completed, as the real API sends them. Tests script the output items per turn; real harnesses (the
// Codex CLI) talk to it over HTTP. Used where a harness needs the streaming Responses API.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>;
/** A function call names its tool; a tool inside a namespace (the Codex CLI's MCP servers: `mcp__<server>`) names it too. */
export type ResponsesTurn = { text: string } | { function_call: { name: string; namespace?: string; arguments: Json } };

export interface ResponsesServer {
  url: string;
  requests: Json[];
  close(): Promise<void>;
}

/** `script(body, turn)`: the output of turn `turn` (0-based: the number of tool outputs already in the input). */
export async function startResponsesServer(script: (body: Json, turn: number) => ResponsesTurn): Promise<ResponsesServer> {
  const requests: Json[] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const body = JSON.parse(raw) as Json;
      requests.push(body);
      const id = `resp_${++n}`;
      const input: Json[] = Array.isArray(body.input) ? body.input : [];
      const turn = input.filter((i) => i.type === 'function_call_output').length;
      const t = script(body, turn);
      const item: Json =
        'text' in t
          ? { type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t.text, annotations: [] }] }
          : { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: t.function_call.name, ...(t.function_call.namespace ? { namespace: t.function_call.namespace } : {}), arguments: JSON.stringify(t.function_call.arguments), status: 'completed' };
      const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let seq = 0;
      const send = (o: Json) => res.write(`event: ${o.type}\ndata: ${JSON.stringify({ ...o, sequence_number: seq++ })}\n\n`);
      send({ type: 'response.created', response: { id, object: 'response', status: 'in_progress', model: body.model, output: [] } });
      send({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } });
      if ('text' in t) send({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: t.text });
      send({ type: 'response.output_item.done', output_index: 0, item });
      send({ type: 'response.completed', response: { id, object: 'response', status: 'completed', model: body.model, output: [item], usage } });
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    }),
  };
}
