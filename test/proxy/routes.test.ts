// The recording proxy's own routes through app.inject (no ports): health, the admin routes, and every refusal a
// model call gets before it is forwarded (issue 30 items 8 and 10): another rollout's key, no key, a forged key,
// a bad percent-encoding. Nothing refused is recorded. Forwarding itself is tested against a real upstream double
// in proxy.slow, apis.slow, fuzz.slow and test/security/proxy.slow.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_ERRORS } from '../../proxy/errors.ts';
import { createProxyApp, type ProxyApp } from '../../proxy/server.ts';
import { readCalls } from '../../proxy/store.ts';

const ADMIN = 'routes-admin-key';
let dir: string;
let required: ProxyApp;
let open: ProxyApp;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-routes-'));
  // The upstream is never reached by anything below (a refused call is answered before forwarding).
  const upstream = 'http://127.0.0.1:9/v1';
  required = await createProxyApp({ upstream, dir: path.join(dir, 'required'), adminKey: ADMIN, callTimeoutMs: 1000 });
  open = await createProxyApp({ upstream, dir: path.join(dir, 'open'), rolloutKeys: 'off', callTimeoutMs: 1000 });
});
afterAll(async () => {
  await required?.app.close();
  await open?.app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function inject(p: ProxyApp, method: string, url: string, headers: Record<string, string> = {}, payload?: string) {
  const r = await p.app.inject({ method: method as 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });
  return { status: r.statusCode, body: r.body ? (JSON.parse(r.body) as any) : undefined };
}

function refused(r: { status: number; body: any }, code: keyof typeof PROXY_ERRORS): void {
  expect(r.body).toEqual({ error: { code, type: code, message: expect.any(String) } });
  expect(r.status).toBe(PROXY_ERRORS[code]);
}

describe('admin routes', () => {
  it('issue keys, rewards and calls with the admin key only; bad ids, bodies and encodings are 4xx in the proxy shape', async () => {
    expect(await inject(required, 'GET', '/health')).toEqual({ status: 200, body: { ok: true } });
    refused(await inject(open, 'POST', '/rollouts', {}, '{}'), 'admin_disabled');
    refused(await inject(required, 'POST', '/rollouts', { authorization: 'Bearer nope' }, '{}'), 'unauthorized');
    refused(await inject(required, 'GET', '/rollouts/x/calls'), 'unauthorized');
    refused(await inject(required, 'GET', '/rollouts/x/other', { 'x-api-key': 'nope' }), 'unauthorized');
    const admin = { 'x-api-key': ADMIN };
    const issued = await inject(required, 'POST', '/rollouts', admin, JSON.stringify({ rollout_id: 'ro-1' }));
    expect(issued).toMatchObject({ status: 201, body: { rollout_id: 'ro-1', api_key: expect.stringMatching(/^gk-/) } });
    for (const body of ['null', '[]', '"x"', '{']) refused(await inject(required, 'POST', '/rollouts', admin, body), 'invalid_json');
    refused(await inject(required, 'POST', '/rollouts', admin, JSON.stringify({ rollout_id: '../x' })), 'invalid_rollout');
    refused(await inject(required, 'POST', '/rollouts/ro-1/reward', admin, JSON.stringify({ reward: 'high' })), 'invalid_reward');
    expect(await inject(required, 'POST', '/rollouts/ro-1/reward', admin, JSON.stringify({ reward: 0.5 }))).toEqual({ status: 200, body: { rollout_id: 'ro-1', reward: 0.5 } });
    expect(await inject(required, 'GET', '/rollouts/ro-1/calls', admin)).toEqual({ status: 200, body: { calls: [] } });
    refused(await inject(required, 'GET', '/rollouts/%ZZ/calls', admin), 'invalid_path');
    refused(await inject(required, 'GET', '/rollouts/..%2F..%2Fetc/calls', admin), 'invalid_rollout');
    refused(await inject(required, 'GET', '/rollouts/ro-1/other', admin), 'not_found');
    refused(await inject(required, 'GET', '/elsewhere'), 'not_found');
    refused(await inject(required, 'POST', '/rollouts', { ...admin, 'content-length': String(64 * 1024 * 1024 + 1) }, '{}'), 'body_too_large');
  });
});

describe('model calls refused before forwarding', () => {
  it('keys required: another rollout\'s key, no key, a forged key, a bad encoding; nothing recorded', async () => {
    const a = required.keys.issue('ro-a');
    required.keys.issue('ro-b');
    const body = JSON.stringify({ model: 'm', messages: [] });
    refused(await inject(required, 'POST', '/r/ro-b/v1/chat/completions', { authorization: `Bearer ${a}` }, body), 'rollout_key_mismatch');
    refused(await inject(required, 'POST', '/v1/messages', { 'x-api-key': a, 'x-grove-rollout': 'ro-b' }, body), 'rollout_key_mismatch');
    refused(await inject(required, 'POST', '/r/ro-b/v1/chat/completions', {}, body), 'rollout_key_required');
    refused(await inject(required, 'POST', '/v1/responses', { 'x-grove-rollout': 'ro-b' }, body), 'rollout_key_required');
    refused(await inject(required, 'POST', '/v1/chat/completions', { authorization: `Bearer gk-${'x'.repeat(24)}` }, body), 'invalid_rollout_key');
    refused(await inject(required, 'POST', '/r/%ZZ/v1/chat/completions', { authorization: `Bearer ${a}` }, body), 'invalid_path');
    refused(await inject(required, 'POST', '/r/ro-a/v1/x%ZZ', { authorization: `Bearer ${a}` }, body), 'invalid_path');
    refused(await inject(required, 'POST', '/r/a%2Fb/v1/chat/completions', { authorization: `Bearer ${a}` }, body), 'invalid_rollout');
    refused(await inject(required, 'POST', '/r/ro-a/v2/chat/completions', { authorization: `Bearer ${a}` }, body), 'not_found');
    await Promise.allSettled([...required.inflight]);
    for (const r of ['ro-a', 'ro-b']) expect(readCalls(path.join(dir, 'required'), r)).toEqual([]);
  });

  it('keys off: a call naming no rollout, or a keyed rollout without its key, is refused', async () => {
    open.keys.issue('keyed');
    refused(await inject(open, 'POST', '/v1/chat/completions', { authorization: 'Bearer sk-own' }, '{}'), 'rollout_required');
    refused(await inject(open, 'POST', '/r/keyed/v1/chat/completions', {}, '{}'), 'rollout_key_required');
    refused(await inject(open, 'POST', '/r/%E0%A4%A/v1/chat/completions', {}, '{}'), 'invalid_path');
    expect(readCalls(path.join(dir, 'open'), 'keyed')).toEqual([]);
  });
});

describe('keys across a restart', () => {
  it('a proxy restarted on the same directory takes the keys it issued and keeps keyed rollouts closed; no key is stored', async () => {
    const d = path.join(dir, 'restart');
    const first = await createProxyApp({ upstream: 'http://127.0.0.1:9/v1', dir: d, adminKey: ADMIN, rolloutKeys: 'off', callTimeoutMs: 1000 });
    const issued = await inject(first, 'POST', '/rollouts', { 'x-api-key': ADMIN }, JSON.stringify({ rollout_id: 'kept' }));
    const key: string = issued.body.api_key;
    const other = first.keys.issue('other');
    await first.app.close();
    await first.keys.flushed();
    const second = await createProxyApp({ upstream: 'http://127.0.0.1:9/v1', dir: d, adminKey: ADMIN, rolloutKeys: 'off', callTimeoutMs: 1000 });
    try {
      refused(await inject(second, 'POST', '/r/kept/v1/chat/completions', {}, '{}'), 'rollout_key_required');
      refused(await inject(second, 'POST', '/v1/chat/completions', { 'x-grove-rollout': 'kept' }, '{}'), 'rollout_key_required');
      refused(await inject(second, 'POST', '/r/kept/v1/chat/completions', { authorization: `Bearer ${other}` }, '{}'), 'rollout_key_mismatch');
      refused(await inject(second, 'POST', '/v1/chat/completions', { authorization: `Bearer ${key}x` }, '{}'), 'invalid_rollout_key');
      // The first process's key records into its rollout again (the call then finds no upstream: 502, recorded).
      const r = await inject(second, 'POST', '/r/kept/v1/chat/completions', { authorization: `Bearer ${key}` }, '{}');
      expect(r).toMatchObject({ status: 502, body: { error: { code: 'upstream_unreachable' } } });
      expect(readCalls(d, 'kept')).toMatchObject([{ rollout_id: 'kept', rollout_source: 'path', status: 502 }]);
      const stored = readdirSync(path.join(d, 'keys')).map((f) => readFileSync(path.join(d, 'keys', f), 'utf8') + f).join('\n');
      expect(stored).not.toContain(key.slice(3));
      expect(stored).not.toContain(other.slice(3));
    } finally {
      await second.app.close();
    }
  });
});
