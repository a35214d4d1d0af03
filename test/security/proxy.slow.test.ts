// The recording proxy as an attacker uses it (issue 30, items 8-10): a harness in one rollout tries to write into
// another rollout's training data, to get its per-rollout key sent to the model server, and to crash the proxy
// with bad encodings. A real proxy over HTTP in front of the real-wire-format model server double, which keeps
// every request it received.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_ERRORS } from '../../proxy/errors.ts';
import { readCalls, startProxy, type RecordingProxy } from '../../proxy/index.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const ADMIN = 'admin-key-for-attacks';
const UPSTREAM_KEY = 'sk-upstream-only-this';
let upstream: OpenAITestServer;
let dir: string;
const proxies: RecordingProxy[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-attack-'));
  upstream = await startOpenAIServer(() => 'fine');
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function proxyWith(name: string, opts: { rolloutKeys?: 'required' | 'off'; upstreamKey?: string } = {}): Promise<RecordingProxy> {
  const p = await startProxy({ upstream: upstream.url, dir: path.join(dir, name), callTimeoutMs: 60_000, adminKey: ADMIN, ...opts });
  proxies.push(p);
  return p;
}

async function issue(p: RecordingProxy, rollout: string): Promise<string> {
  const r = await fetch(`${p.url}/rollouts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ rollout_id: rollout }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { api_key: string }).api_key;
}

const BODIES = {
  '/chat/completions': { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  '/messages': { model: 'claude-x', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  '/responses': { model: 'gpt-x', input: 'hi' },
} as const;
type Endpoint = keyof typeof BODIES;

async function call(url: string, endpoint: Endpoint, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const r = await fetch(`${url}${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(endpoint.startsWith('/messages') ? { 'anthropic-version': '2023-06-01' } : {}), ...headers },
    body: JSON.stringify(BODIES[endpoint.split('?')[0] as Endpoint]),
  });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  return { status: r.status, body };
}

/** A refusal of the proxy's own: its status for the code, in the OpenAI error shape, no stack trace. */
function expectRefused(r: { status: number; body: any }, code: keyof typeof PROXY_ERRORS): void {
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ error: { code, type: code, message: expect.any(String) } });
  expect(r.status).toBe(PROXY_ERRORS[code]);
  expect(JSON.stringify(r.body)).not.toMatch(/\bat .*\.ts:\d+/);
}

describe('one rollout cannot write into another (item 8)', () => {
  it('keys required (the default): another rollout\'s key, a header or a path alone, no key, a forged key: all refused, nothing recorded', async () => {
    const p = await proxyWith('required');
    const keyA = await issue(p, 'victim-a');
    const keyB = await issue(p, 'victim-b');
    const before = upstream.requests.length;
    const attacks: [string, Endpoint, Record<string, string>, keyof typeof PROXY_ERRORS][] = [
      [p.baseUrlFor('victim-b'), '/chat/completions', { authorization: `Bearer ${keyA}` }, 'rollout_key_mismatch'],
      [p.baseUrlFor('victim-b'), '/messages', { 'x-api-key': keyA }, 'rollout_key_mismatch'],
      [`${p.url}/v1`, '/responses', { authorization: `Bearer ${keyA}`, 'x-grove-rollout': 'victim-b' }, 'rollout_key_mismatch'],
      [`${p.url}/v1`, '/messages', { 'x-api-key': keyA, 'x-grove-rollout': 'victim-b' }, 'rollout_key_mismatch'],
      [`${p.url}/v1`, '/chat/completions', { authorization: `Bearer ${keyA}`, 'x-api-key': keyB }, 'rollout_key_mismatch'],
      [p.baseUrlFor('victim-b'), '/chat/completions', {}, 'rollout_key_required'],
      [p.baseUrlFor('victim-b'), '/chat/completions', { authorization: 'Bearer sk-some-upstream-key' }, 'rollout_key_required'],
      [`${p.url}/v1`, '/chat/completions', { 'x-grove-rollout': 'victim-b' }, 'rollout_key_required'],
      [p.baseUrlFor('fresh-rollout'), '/chat/completions', {}, 'rollout_key_required'],
      [p.baseUrlFor('victim-b'), '/chat/completions', { authorization: `Bearer gk-${'A'.repeat(24)}` }, 'invalid_rollout_key'],
      [`${p.url}/v1`, '/messages', { 'x-api-key': `${keyB}x` }, 'invalid_rollout_key'],
    ];
    for (const [base, endpoint, headers, code] of attacks) expectRefused(await call(base, endpoint, headers), code);
    expect(readCalls(path.join(dir, 'required'), 'victim-b')).toEqual([]);
    expect(readCalls(path.join(dir, 'required'), 'victim-a')).toEqual([]);
    expect(readCalls(path.join(dir, 'required'), 'fresh-rollout')).toEqual([]);
    expect(upstream.requests.length).toBe(before);
    // The positive control: each rollout's own key records into it, by key alone or with its own path.
    expect((await call(p.baseUrlFor('victim-b'), '/chat/completions', { authorization: `Bearer ${keyB}` })).status).toBe(200);
    expect((await call(`${p.url}/v1`, '/chat/completions', { authorization: `Bearer ${keyA}` })).status).toBe(200);
    expect(readCalls(path.join(dir, 'required'), 'victim-b').map((c) => c.rollout_source)).toEqual(['path']);
    expect(readCalls(path.join(dir, 'required'), 'victim-a').map((c) => c.rollout_source)).toEqual(['key']);
  });

  it('keys off (explicit): path and header name an unkeyed rollout, but a rollout with a key takes only its key', async () => {
    const p = await proxyWith('open', { rolloutKeys: 'off' });
    const keyA = await issue(p, 'keyed-a');
    const keyB = await issue(p, 'keyed-b');
    expectRefused(await call(p.baseUrlFor('keyed-b'), '/chat/completions', {}), 'rollout_key_required');
    expectRefused(await call(`${p.url}/v1`, '/chat/completions', { 'x-grove-rollout': 'keyed-b' }), 'rollout_key_required');
    expectRefused(await call(p.baseUrlFor('keyed-b'), '/chat/completions', { authorization: `Bearer ${keyA}` }), 'rollout_key_mismatch');
    expectRefused(await call(`${p.url}/v1`, '/messages', { 'x-api-key': keyA, 'x-grove-rollout': 'keyed-b' }), 'rollout_key_mismatch');
    expectRefused(await call(`${p.url}/v1`, '/chat/completions', {}), 'rollout_required');
    expect(readCalls(path.join(dir, 'open'), 'keyed-b')).toEqual([]);
    // Unkeyed rollouts are open to a path or header, as this mode documents; the keyed one to its own key.
    expect((await call(p.baseUrlFor('plain'), '/chat/completions', {})).status).toBe(200);
    expect((await call(`${p.url}/v1`, '/chat/completions', { 'x-grove-rollout': 'plain' })).status).toBe(200);
    expect((await call(p.baseUrlFor('keyed-b'), '/chat/completions', { authorization: `Bearer ${keyB}` })).status).toBe(200);
    expect(readCalls(path.join(dir, 'open'), 'plain').map((c) => c.rollout_source)).toEqual(['path', 'header']);
    expect(readCalls(path.join(dir, 'open'), 'keyed-b')).toHaveLength(1);
  });
});

describe('a per-rollout key never reaches the upstream (item 9)', () => {
  const ways: [string, (key: string) => Record<string, string>][] = [
    ['Authorization: Bearer', (k) => ({ authorization: `Bearer ${k}` })],
    ['x-api-key', (k) => ({ 'x-api-key': k })],
  ];
  const apis: Endpoint[] = ['/chat/completions', '/messages', '/responses'];

  for (const configured of [UPSTREAM_KEY, undefined]) {
    it(`every API × both headers × key alone or with its path: the upstream gets ${configured ? 'only the configured key' : 'no credentials'}`, async () => {
      const p = await proxyWith(`fwd-${configured ? 'keyed' : 'none'}`, { upstreamKey: configured });
      const key = await issue(p, 'leak');
      let cases = 0;
      for (const [way, headers] of ways) {
        for (const api of apis) {
          for (const base of [`${p.url}/v1`, p.baseUrlFor('leak')]) {
            const before = upstream.requests.length;
            // The key is also slipped into a header the proxy does not read (Azure-style api-key) and the query.
            await call(base, `${api}?api-version=1&key=${key}&api_key=${encodeURIComponent(key)}` as Endpoint, { ...headers(key), 'api-key': key });
            expect(upstream.requests.length, `${way} ${api} ${base}`).toBe(before + 1);
            const got = upstream.requests.at(-1)!.headers;
            expect(JSON.stringify(got), `${way} ${api} ${base}`).not.toContain(key);
            expect(upstream.requests.at(-1)!.url).toBe(`/v1${api}?api-version=1`);
            expect(JSON.stringify(got)).not.toContain('gk-');
            if (configured) {
              expect(got.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
              expect(got['x-api-key']).toBe(way === 'x-api-key' ? UPSTREAM_KEY : undefined);
            } else {
              expect(got.authorization).toBeUndefined();
              expect(got['x-api-key']).toBeUndefined();
            }
            cases++;
          }
        }
      }
      expect(cases).toBe(12);
      const records = readCalls(path.join(dir, `fwd-${configured ? 'keyed' : 'none'}`), 'leak');
      expect(records).toHaveLength(12);
      expect(JSON.stringify(records)).not.toContain(key);
    });
  }

  it('keys off: a harness\'s own upstream key still passes when no upstream key is configured (the documented mode)', async () => {
    const p = await proxyWith('own-key', { rolloutKeys: 'off' });
    await call(p.baseUrlFor('own'), '/chat/completions', { authorization: 'Bearer sk-harness-own' });
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-harness-own');
  });
});

describe('bad encodings and paths are 400s in the documented shape (item 10)', () => {
  it('a rollout that is not valid percent-encoding, a path that leaves the API prefix, an admin id that does not decode', async () => {
    const p = await proxyWith('paths', { rolloutKeys: 'off' });
    const key = await issue(p, 'ok');
    const before = upstream.requests.length;
    // The path exactly as written (fetch would normalise `%2e%2e` segments before sending).
    const raw = (method: string, url: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: any }>((ok, fail) => {
        const req = http.request(`${p.url}/`, { method, path: url, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += String(c)));
          res.on('end', () => {
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // kept as text
            }
            ok({ status: res.statusCode ?? 0, body });
          });
        });
        req.on('error', fail);
        req.end(method === 'GET' ? undefined : '{}');
      });
    for (const url of ['/r/%ZZ/v1/chat/completions', '/r/%E0%A4%A/v1/chat/completions', '/r/%/v1/responses']) {
      expectRefused(await raw('POST', url), 'invalid_path');
      expectRefused(await raw('POST', url, { authorization: `Bearer ${key}` }), 'invalid_path');
    }
    // Paths that would leave the upstream's /v1 (dot segments, plain or encoded; encoded slashes and backslashes).
    for (const url of ['/r/ok/v1/../admin', '/r/ok/v1/%2e%2e/admin', '/v1/%2E%2E/%2e%2e/etc', '/r/ok/v1/..%2f..%2fsecret', '/r/ok/v1/a/%2e%2e/%2e%2e/x', '/v1/..%5cadmin', '/v1/a/./../../x']) {
      expectRefused(await raw('POST', url, { authorization: `Bearer ${key}` }), 'invalid_path');
    }
    expectRefused(await raw('GET', '/rollouts/%ZZ/calls', { authorization: `Bearer ${ADMIN}` }), 'invalid_path');
    expectRefused(await raw('POST', '/rollouts/..%2F..%2Fetc/reward', { authorization: `Bearer ${ADMIN}` }), 'invalid_rollout');
    expect(upstream.requests.length).toBe(before);
  });
});
