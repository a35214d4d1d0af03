// The scripted judge and simulated user the Claw-Eval benches run against (no model server here), in OpenAI's
// chat-completions wire format: the judge always answers {"score": 0.5}; the simulated user (model "sim-user") asks
// once to go on, then ends the conversation with [DONE]. Calls are counted per role.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const GO_ON = 'Please go on with what you have.';

export interface ScriptedModels {
  url: string;
  calls: { judge: number; user: number };
  close(): Promise<void>;
}

export function startScriptedModels(): Promise<ScriptedModels> {
  const calls = { judge: 0, user: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; messages?: unknown };
      const user = body.model === 'sim-user';
      if (user) calls.user++;
      else calls.judge++;
      const content = user ? (JSON.stringify(body.messages).includes(GO_ON) ? 'Thanks, that is all. [DONE]' : GO_ON) : '{"score": 0.5, "reasoning": "scripted judge"}';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion', created: 0, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, calls, close: () => new Promise((r) => server.close(() => r())) })));
}
