// The recording proxy between a real HTTP client and the local OpenAI-compatible test server: byte-faithful
// records of streaming and non-streaming calls, concurrent rollouts that never mix, upstream failures passed
// through, and a SIGKILLed proxy process that leaves every completed call readable.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportSamples, readCalls, startProxy, type RecordingProxy } from '../../proxy/index.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

let upstream: OpenAITestServer;
let proxy: RecordingProxy;
let dir: string;

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; type: string }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') ?? '' };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-'));
  upstream = await startOpenAIServer((req) => {
    const last = req.body.messages?.at(-1)?.content ?? '';
    if (last === 'boom') return { status: 500, body: { error: { message: 'upstream exploded', type: 'server_error' } } };
    if (last === 'slow') return { delay_ms: 5000, reply: 'late' };
    if (last === 'badsse') return { raw: 'data: {"id":"x","choices":[{"index":0,"delta":{"content":"ok"}}]}\n\ndata: {oops\n\ndata: [DONE]\n\n', content_type: 'text/event-stream' };
    if (last === 'tool') return { tool_calls: [{ name: 'bash', arguments: '{"cmd":"ls -la"}' }] };
    return `echo:${last}`;
  });
  // A generous deadline: a loaded machine must not turn ordinary calls into timeouts (the timeout case has its own proxy).
  proxy = await startProxy({ upstream: upstream.url, dir, callTimeoutMs: 60_000, adminKey: 'admin-secret-1', rolloutKeys: 'off', rewrite: { temperature: 0.6, logprobs: true } });
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('recording proxy', () => {
  it('records a non-streaming call byte for byte, with what was asked and what was sent', async () => {
    const r = await post(`${proxy.baseUrlFor('ro-a')}/chat/completions`, { model: 'm', temperature: 1, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(200);
    const [call] = readCalls(dir, 'ro-a');
    expect(call.response_text).toBe(r.text);
    expect(call.request_asked).toEqual({ model: 'm', temperature: 1, messages: [{ role: 'user', content: 'hi' }] });
    expect(call.request_sent).toEqual({ model: 'm', temperature: 0.6, logprobs: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.requests.at(-1)!.body.temperature).toBe(0.6);
    expect(call.rewritten).toBe(true);
    expect(call.usage).toMatchObject({ completion_tokens: 10 });
    expect(call.ttfb_ms).toBeGreaterThan(0);
  });

  it('streams SSE through unchanged and records the stream verbatim plus its assembled answer', async () => {
    const r = await post(`${proxy.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'tool' }] }, { 'x-grove-rollout': 'ro-b' });
    expect(r.type).toContain('text/event-stream');
    const [call] = readCalls(dir, 'ro-b');
    expect(call.rollout_source).toBe('header');
    expect(call.stream).toBe(true);
    expect(call.response_text).toBe(r.text);
    expect(call.response_text.split('data: ').length).toBeGreaterThan(5);
    expect(call.assembled).toMatchObject({ choices: [{ message: { tool_calls: [{ function: { name: 'bash', arguments: '{"cmd":"ls -la"}' } }] }, finish_reason: 'tool_calls' }] });
    expect(call.sse_malformed).toBe(0);
  });

  it('ties calls to a rollout by a per-rollout key and never forwards that key upstream', async () => {
    const issued = await post(`${proxy.url}/rollouts`, { rollout_id: 'ro-key' }, { 'x-api-key': 'admin-secret-1' });
    expect(issued.status).toBe(201);
    const { api_key } = JSON.parse(issued.text);
    const r = await post(`${proxy.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'k' }] }, { authorization: `Bearer ${api_key}` });
    expect(r.status).toBe(200);
    expect(readCalls(dir, 'ro-key')).toHaveLength(1);
    expect(upstream.requests.at(-1)!.headers.authorization).toBeUndefined();
    const denied = await post(`${proxy.url}/rollouts`, {}, { 'x-api-key': 'wrong' });
    expect(denied.status).toBe(401);
    const anon = await post(`${proxy.url}/v1/chat/completions`, { messages: [] });
    expect(anon.status).toBe(400);
    expect(JSON.parse(anon.text).error.code).toBe('rollout_required');
  });

  it('keeps 64 concurrent rollouts apart', async () => {
    await Promise.all(
      Array.from({ length: 64 }, async (_, i) => {
        for (let turn = 0; turn < 3; turn++) {
          const r = await post(`${proxy.baseUrlFor(`mix-${i}`)}/chat/completions`, { model: 'm', stream: turn % 2 === 1, messages: [{ role: 'user', content: `r${i}t${turn}` }] });
          expect(r.status).toBe(200);
        }
      }),
    );
    for (let i = 0; i < 64; i++) {
      const calls = readCalls(dir, `mix-${i}`);
      expect(calls.map((c) => (c.request_asked as any).messages[0].content)).toEqual([`r${i}t0`, `r${i}t1`, `r${i}t2`]);
      expect(calls.map((c) => c.seq)).toEqual([0, 1, 2]);
      for (const c of calls) {
        const answer = c.stream ? (c.assembled as any).choices[0].message.content : JSON.parse(c.response_text).choices[0].message.content;
        expect(answer).toBe(`echo:${(c.request_asked as any).messages[0].content}`);
      }
    }
  });

  it('passes upstream failures back faithfully and records them', async () => {
    const boom = await post(`${proxy.baseUrlFor('ro-err')}/chat/completions`, { messages: [{ role: 'user', content: 'boom' }] });
    expect(boom.status).toBe(500);
    expect(JSON.parse(boom.text).error.message).toBe('upstream exploded');
    // The call's deadline (here 300 ms, on a proxy of its own) ends a call the upstream answers late: a 504.
    const short = await startProxy({ upstream: upstream.url, dir, callTimeoutMs: 300, rolloutKeys: 'off' });
    try {
      const slow = await post(`${short.baseUrlFor('ro-err')}/chat/completions`, { messages: [{ role: 'user', content: 'slow' }] });
      expect(slow.status).toBe(504);
      expect(JSON.parse(slow.text).error.code).toBe('upstream_timeout');
    } finally {
      await short.close();
    }
    const bad = await post(`${proxy.baseUrlFor('ro-err')}/chat/completions`, { stream: true, messages: [{ role: 'user', content: 'badsse' }] });
    expect(bad.text).toContain('data: {oops');
    const calls = readCalls(dir, 'ro-err');
    expect(calls.map((c) => [c.status, c.error?.kind ?? null])).toEqual([[500, 'upstream_error'], [504, 'upstream_timeout'], [200, null]]);
    expect(calls[2].sse_malformed).toBe(1);
    expect(calls[2].response_text).toBe(bad.text);
    // An unreachable upstream: a 502 in the OpenAI error shape.
    const dead = http.createServer();
    await new Promise<void>((ok) => dead.listen(0, '127.0.0.1', ok));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((ok) => dead.close(() => ok()));
    const p2 = await startProxy({ upstream: `http://127.0.0.1:${port}/v1`, dir, callTimeoutMs: 2000, rolloutKeys: 'off' });
    try {
      const r = await post(`${p2.baseUrlFor('ro-dead')}/chat/completions`, { messages: [] });
      expect(r.status).toBe(502);
      expect(JSON.parse(r.text).error.code).toBe('upstream_unreachable');
      expect(readCalls(dir, 'ro-dead')[0].error?.kind).toBe('upstream_unreachable');
    } finally {
      await p2.close();
    }
  });

  it('exports merged samples with the attached reward', async () => {
    const base = proxy.baseUrlFor('ro-conv');
    const m1 = [{ role: 'user', content: 'tool' }];
    const first = JSON.parse((await post(`${base}/chat/completions`, { model: 'm', messages: m1 })).text).choices[0].message;
    const m2 = [...m1, first, { role: 'tool', tool_call_id: first.tool_calls[0].id, content: 'a.txt' }];
    await post(`${base}/chat/completions`, { model: 'm', messages: m2 });
    const rw = await post(`${proxy.url}/rollouts/ro-conv/reward`, { reward: 1 }, { 'x-api-key': 'admin-secret-1' });
    expect(rw.status).toBe(200);
    const [s] = exportSamples(dir, ['ro-conv'], 'merged');
    expect(s.call_ids).toHaveLength(2);
    expect(s.message_loss_mask).toEqual([0, 1, 0, 1]);
    expect(s.reward).toBe(1);
  });
});

describe('a SIGKILLed proxy', () => {
  it('leaves every call that completed readable', async () => {
    const killDir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-kill-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'proxy', 'serve', '--upstream', upstream.url, '--port', '0', '--dir', killDir, '--rollout-keys', 'off'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const url = await new Promise<string>((ok, fail) => {
        let err = '';
        child.stderr!.on('data', (c) => {
          err += String(c);
          const m = err.match(/listening on (http:\/\/\S+)/);
          if (m) ok(m[1]);
        });
        child.on('exit', (code) => fail(new Error(`proxy exited ${code}: ${err}`)));
      });
      const done: string[] = [];
      const running = Array.from({ length: 8 }, async (_, i) => {
        for (let t = 0; ; t++) {
          const r = await post(`${url}/r/k${i}/v1/chat/completions`, { stream: t % 2 === 0, messages: [{ role: 'user', content: `k${i}-${t}` }] }).catch(() => null);
          if (!r) return;
          if (r.status === 200) done.push(`k${i}-${t}`);
        }
      });
      while (done.length < 40) await new Promise((ok) => setTimeout(ok, 20));
      child.kill('SIGKILL');
      await Promise.all(running);
      const recorded = new Set<string>();
      for (let i = 0; i < 8; i++) for (const c of readCalls(killDir, `k${i}`)) recorded.add((c.request_asked as any).messages[0].content);
      for (const d of done) expect(recorded.has(d), d).toBe(true);
    } finally {
      child.kill('SIGKILL');
      rmSync(killDir, { recursive: true, force: true });
    }
  });
});

describe('grove proxy serve: rollout keys', () => {
  it('needs --admin-key unless --rollout-keys off is given; refuses other modes (exit 2)', () => {
    const serve = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'proxy', 'serve', '--upstream', 'http://127.0.0.1:9/v1', '--port', '0', ...args], { encoding: 'utf8', timeout: 60_000 });
    const bare = serve();
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('--admin-key');
    const odd = serve('--rollout-keys', 'sometimes', '--admin-key', 'k');
    expect(odd.status).toBe(2);
    expect(odd.stderr).toContain('--rollout-keys must be required or off');
  });
});

describe('streaming through the proxy', () => {
  it('passes each SSE event on as it comes: the upstream ends its stream only after the client has the first event', async () => {
    let clientHasFirst!: () => void;
    const gate = new Promise<void>((ok) => (clientHasFirst = ok));
    const paced = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"id":"p","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"first"},"finish_reason":null}]}\n\n');
        // A proxy that held the answer back until its end would never let this continue (the test would time out).
        void gate.then(() => res.end('data: {"id":"p","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'));
      });
    });
    await new Promise<void>((ok) => paced.listen(0, '127.0.0.1', () => ok()));
    const p = await startProxy({ upstream: `http://127.0.0.1:${(paced.address() as AddressInfo).port}/v1`, dir, callTimeoutMs: 60_000, rolloutKeys: 'off' });
    try {
      const r = await fetch(`${p.baseUrlFor('paced')}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","stream":true,"messages":[]}' });
      const reader = r.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('"content":"first"');
      expect(first).not.toContain('[DONE]');
      clientHasFirst();
      let rest = '';
      for (let c = await reader.read(); !c.done; c = await reader.read()) rest += new TextDecoder().decode(c.value);
      expect(rest).toContain('[DONE]');
      const [call] = readCalls(dir, 'paced');
      expect(call.response_text).toBe(first + rest);
      expect(call.assembled).toMatchObject({ choices: [{ message: { content: 'first' }, finish_reason: 'stop' }] });
    } finally {
      await p.close();
      paced.closeAllConnections();
      paced.close();
    }
  });
});
