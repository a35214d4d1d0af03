// Route fuzzing of the recording proxy (issue 30, "the route fuzzer covers the proxy's routes too"): every route —
// /health, the admin routes, model calls by key, path and header — with malformed ids, percent-encodings, paths,
// credentials, bodies, content types and methods, against two real proxies (keys required with an admin and an
// upstream key; keys off without an admin key) in front of the model server double. Every answer is below 500 and
// carries no stack trace; every answer the proxy gives itself (the call was not forwarded) that is an error is in
// the documented shape with a catalogued code and that code's status. The upstream never sees a per-rollout key.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_ERRORS } from '../../proxy/errors.ts';
import { listRollouts, startProxy, type RecordingProxy } from '../../proxy/index.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const ADMIN = 'fuzz-admin-key-0123';
let upstream: OpenAITestServer;
let dir: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

interface Target {
  name: string;
  proxy: RecordingProxy;
  dir: string;
  keys: string[];
}
const targets: Target[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-fuzz-'));
  upstream = await startOpenAIServer(() => 'ok');
  const required = await startProxy({ upstream: upstream.url, dir: path.join(dir, 'required'), callTimeoutMs: 20_000, adminKey: ADMIN, upstreamKey: 'sk-up' });
  const open = await startProxy({ upstream: upstream.url, dir: path.join(dir, 'open'), callTimeoutMs: 20_000, rolloutKeys: 'off' });
  targets.push({ name: 'required', proxy: required, dir: path.join(dir, 'required'), keys: [required.issueKey('ro-a'), required.issueKey('ro-b')] });
  targets.push({ name: 'open', proxy: open, dir: path.join(dir, 'open'), keys: [open.issueKey('ro-a')] });
});
afterAll(async () => {
  for (const t of targets) await t.proxy.close();
  agent.destroy();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Bytes recorded so far (a forwarded call is recorded before its answer ends). */
function recorded(t: Target): number {
  let n = 0;
  for (const r of listRollouts(t.dir)) {
    try {
      n += statSync(path.join(t.dir, 'rollouts', r, 'calls.jsonl')).size;
    } catch {
      // a rollout folder without calls (a reward only)
    }
  }
  return n;
}

interface Answer {
  status: number;
  text: string;
}

/** One request with the path exactly as given (no client-side normalisation). */
function request(t: Target, method: string, rawPath: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  const { hostname, port } = new URL(t.proxy.url);
  return new Promise((ok, fail) => {
    // A body always goes with its length (node sends DELETE/OPTIONS bodies unframed otherwise).
    const framed = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request({ host: hostname, port, method, path: rawPath, headers: framed, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

const findings: string[] = [];
let requests = 0;

async function send(t: Target, method: string, rawPath: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<void> {
  const before = recorded(t);
  const r = await request(t, method, rawPath, headers, body);
  requests++;
  const desc = `[${t.name}] ${method} ${rawPath.slice(0, 100)} ${JSON.stringify(headers).slice(0, 120)} ${String(body ?? '').slice(0, 80)}`;
  if (r.status >= 500) findings.push(`${desc} → ${r.status} ${r.text.slice(0, 200)}`);
  if (/\n\s+at |\.ts:\d+/.test(r.text)) findings.push(`${desc} → a stack trace: ${r.text.slice(0, 200)}`);
  const forwarded = recorded(t) !== before;
  if (forwarded || r.status < 400 || method === 'HEAD') return;
  let parsed: { error?: { code?: unknown; type?: unknown; message?: unknown } } | undefined;
  try {
    parsed = JSON.parse(r.text);
  } catch {
    parsed = undefined;
  }
  const code = parsed?.error?.code;
  const known = typeof code === 'string' && code in PROXY_ERRORS;
  if (!known || PROXY_ERRORS[code as keyof typeof PROXY_ERRORS] !== r.status || parsed?.error?.type !== code || typeof parsed?.error?.message !== 'string') {
    findings.push(`${desc} → ${r.status}, not the documented error shape: ${r.text.slice(0, 200)}`);
  }
}

const BAD_IDS = ['%ZZ', '%', '%E0%A4%A', 'x'.repeat(300), '..%2F..%2Fetc', '%2e%2e', '%00', '%C3%A9', '%20', '.', '-a', 'a..b', 'a%2Fb', '%FF'];
const ENDPOINTS = ['/chat/completions', '/responses', '/messages', '/completions', '/embeddings', '/models', '', '/', '/%ZZ', '/../admin', '/%2e%2e/x', '/a/..%2f..%2fb', '/x?y=%ZZ', '//evil.example/x'];
const RAW_BODIES = ['', '{', '[]', 'null', '"x"', 'true', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '\u0000', 'x'.repeat(2048), '{"stream":true}', '{"model":"m","messages":"nope","stream":true}'];
const BAD_VALUES: unknown[] = [null, {}, [], 'x', -1, 1e308, 0.5, true, 'a'.repeat(70_000), { $ref: '#' }, 'é', '../x', '%ZZ'];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

function credentials(t: Target): Record<string, string>[] {
  const [a] = t.keys;
  return [
    {},
    { authorization: `Bearer ${a}` },
    { 'x-api-key': a },
    { authorization: `Bearer ${t.keys.at(-1)}`, 'x-grove-rollout': 'ro-a' },
    { authorization: `Bearer gk-${'z'.repeat(24)}` },
    { authorization: 'Bearer ' },
    { authorization: 'Basic Zm9vOmJhcg==' },
    { authorization: `Bearer ${ADMIN}` },
    { 'x-api-key': 'wrong' },
    { 'x-api-key': `${a}, ${a}` },
    { 'x-grove-rollout': 'ro-open' },
    { 'x-grove-rollout': '%ZZ' },
    { 'x-grove-rollout': 'x'.repeat(4000) },
    { 'x-grove-rollout': '../../etc' },
    { authorization: `Bearer ${'g'.repeat(8000)}` },
  ];
}

describe('recording-proxy route fuzzing', () => {
  it('answers every generated request below 500, its own errors in the documented shape', async () => {
    for (const t of targets) {
      const json = { 'content-type': 'application/json' };
      const admin = { ...json, authorization: `Bearer ${ADMIN}` };
      // /health and unknown routes.
      for (const m of METHODS) for (const p of ['/health', '/', '/nope', '/%', '/%ZZ', '//', '/r', '/r/', '/r/ro-a', '/r/ro-a/v2/chat/completions', '/v1', '/v2/x', '/rollouts/x', '/rollouts/x/y/z', '/health?x=%ZZ']) await send(t, m, p, admin);
      // Admin routes: ids, credentials, bodies.
      for (const m of METHODS) {
        await send(t, m, '/rollouts', admin, '{}');
        for (const id of ['ro-a', 'fresh', ...BAD_IDS]) for (const route of ['reward', 'calls']) await send(t, m, `/rollouts/${id}/${route}`, admin, m === 'GET' || m === 'HEAD' ? undefined : '{"reward":1}');
      }
      for (const cred of credentials(t)) {
        await send(t, 'POST', '/rollouts', { ...json, ...cred }, '{}');
        await send(t, 'GET', '/rollouts/ro-a/calls', cred);
        await send(t, 'POST', '/rollouts/ro-a/reward', { ...json, ...cred }, '{"reward":0}');
      }
      for (const raw of RAW_BODIES) {
        await send(t, 'POST', '/rollouts', admin, raw);
        await send(t, 'POST', '/rollouts/ro-a/reward', admin, raw);
        await send(t, 'POST', '/rollouts', { ...admin, 'content-type': 'text/plain' }, raw);
      }
      for (const bad of BAD_VALUES) {
        await send(t, 'POST', '/rollouts', admin, JSON.stringify({ rollout_id: bad }));
        await send(t, 'POST', '/rollouts/ro-a/reward', admin, JSON.stringify({ reward: bad, info: bad }));
      }
      await send(t, 'POST', '/rollouts', { ...admin, 'content-encoding': 'gzip' }, Buffer.from([0x1f, 0x8b, 0, 1, 2, 3]));
      // Model calls: by path, header and key, every endpoint and odd path, every credential.
      for (const endpoint of ENDPOINTS) {
        for (const base of ['/v1', '/r/ro-a/v1', '/r/ro-open/v1', ...BAD_IDS.map((id) => `/r/${id}/v1`)]) {
          await send(t, 'POST', `${base}${endpoint}`, { ...json, authorization: `Bearer ${t.keys[0]}` }, '{"model":"m","messages":[]}');
        }
        for (const cred of credentials(t)) {
          for (const m of ['GET', 'POST']) await send(t, m, `/v1${endpoint}`, { ...json, ...cred }, m === 'POST' ? '{"model":"m","messages":[{"role":"user","content":"hi"}]}' : undefined);
        }
      }
      for (const raw of RAW_BODIES) {
        await send(t, 'POST', '/r/ro-a/v1/chat/completions', { ...json, authorization: `Bearer ${t.keys[0]}` }, raw);
        await send(t, 'POST', '/r/ro-a/v1/messages', { 'content-type': 'text/plain', 'x-api-key': t.keys[0] }, raw);
        await send(t, 'POST', '/r/ro-open/v1/responses', json, raw);
      }
      for (const m of METHODS) await send(t, m, '/r/ro-a/v1/chat/completions', { ...json, authorization: `Bearer ${t.keys[0]}` }, m === 'GET' || m === 'HEAD' ? undefined : '{}');
      await send(t, 'POST', '/r/ro-a/v1/chat/completions', { ...json, 'content-encoding': 'gzip', authorization: `Bearer ${t.keys[0]}` }, Buffer.from([0x1f, 0x8b, 9, 9]));
    }
    // One body past the limit: 413, not a crash.
    await send(targets[0], 'POST', '/rollouts', { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, Buffer.alloc(64 * 1024 * 1024 + 1, 0x20));
    expect(requests).toBeGreaterThan(2000);
    expect(findings).toEqual([]);
    // Whatever was forwarded, no per-rollout key went with it.
    expect(upstream.requests.length).toBeGreaterThan(10);
    for (const r of upstream.requests) expect(JSON.stringify(r.headers)).not.toMatch(/gk-/);
  }, 600_000);
});
