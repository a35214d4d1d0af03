// Attacker's test (issue 30, item 12): the harness gateway (runner/harness/gateway.ts) on its own, attacked as the
// untrusted harness in the shell sandbox would: tokens, path tricks in the raw request target, methods, bodies
// (size, encodings, shapes), headers, and what reaches Grove. Grove is the real server with a real browser
// sandbox; the gateway's client records every request it makes, so "nothing else was relayed" is checked, not assumed.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGrove, type EmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { GroveClient } from '../../client/index.ts';
import { startBrowserGateway, type BrowserGateway } from '../../runner/harness/gateway.ts';
import { closedPort } from '../runner/harness.ts';

let grove: EmbeddedGrove;
let admin: GroveClient;
let gw: BrowserGateway;
let sandboxId = '';
let otherId = '';
const relayed: { method: string; path: string; headers: Record<string, string>; body?: string }[] = [];
const answers: string[] = [];

beforeAll(async () => {
  grove = await startEmbeddedGrove({ browserProcesses: 1 });
  admin = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey });
  sandboxId = (await admin.createAndWait({ type: 'browser', start_url: 'data:text/html,<title>gw</title><h1>gateway page</h1>' } as never, 120)).sandbox_id;
  otherId = (await admin.createAndWait({ type: 'browser', start_url: 'data:text/html,<h1>someone else</h1>' } as never, 120)).sandbox_id;
  const client = new GroveClient({
    baseUrl: grove.url,
    apiKey: grove.apiKey,
    fetch: (url, init) => {
      relayed.push({ method: init.method, path: new URL(url).pathname, headers: init.headers, body: init.body });
      return fetch(url, init) as never;
    },
  });
  gw = await startBrowserGateway(client, sandboxId);
}, 180_000);

afterAll(async () => {
  await gw?.close();
  admin?.close();
  await grove?.close();
});

/** One request with a raw request target and raw bytes, as a hostile client writes it. */
function raw(target: string, opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string; auth?: boolean } = {}): Promise<{ status: number; text: string }> {
  const { port } = new URL(gw.origin);
  const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, connection: 'close', ...(opts.auth === false ? {} : { authorization: `Bearer ${gw.token}` }), ...(body ? { 'content-length': String(body.length) } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', (err) => (got ? undefined : reject(err)));
    s.on('close', () => {
      answers.push(got);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
      resolve({ status, text: got.slice(got.indexOf('\r\n\r\n') + 4) });
    });
    s.write(`${opts.method ?? 'GET'} ${target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
    if (body) s.write(body);
  });
}

const code = (text: string) => (JSON.parse(text) as { error: { code: string } }).error.code;

describe('the harness gateway under attack', () => {
  it('refuses every request without its exact bearer token, before relaying anything', async () => {
    const before = relayed.length;
    for (const headers of <Record<string, string>[]>[{}, { authorization: `Bearer ${gw.token}x` }, { authorization: `bearer ${gw.token}` }, { authorization: `Basic ${Buffer.from(`x:${gw.token}`).toString('base64')}` }, { authorization: gw.token }, { 'x-api-key': grove.apiKey }, { authorization: `Bearer ${grove.apiKey}` }]) {
      for (const [method, target] of [['GET', '/observation'], ['POST', '/step'], ['GET', `/observation?token=${gw.token}`]]) {
        const r = await raw(target, { method, headers, auth: false, body: method === 'POST' ? '{"action":{"action":"wait","ms":1}}' : undefined });
        expect(r.status, `${method} ${target} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
    expect(relayed.length).toBe(before);
  });

  it('serves only the two exact paths: no traversal, no prefix, no decoding, no absolute form', async () => {
    const before = relayed.length;
    const targets = ['/step/../observation', `/observation/../../sandboxes/${otherId}`, `/../sandboxes/${otherId}/observation`, '//observation', '/observation/', '/observation/.', '/%6fbservation', '/OBSERVATION', `/observation%2F..%2Fsandboxes%2F${otherId}`, '/observation;x', '/observation%00', `http://127.0.0.1:${new URL(grove.url).port}/sandboxes`, '*', `/sandboxes/${otherId}/observation`, '/'];
    for (const target of targets) {
      const r = await raw(target);
      expect([400, 404], target).toContain(r.status);
    }
    expect(relayed.length).toBe(before);
    for (const [method, target, allow] of [['PUT', '/step', 405], ['DELETE', '/observation', 405], ['POST', '/observation', 405], ['GET', '/step', 405]] as const) {
      expect((await raw(target, { method })).status, `${method} ${target}`).toBe(allow);
    }
    expect(relayed.length).toBe(before);
  });

  it('takes only a JSON object of valid UTF-8 within the size limit as a step', async () => {
    const before = relayed.length;
    const bad: [string | Buffer, number][] = [
      ['{"action":', 400],
      ['[1,2]', 400],
      ['null', 400],
      ['"wait"', 400],
      [Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), 400], // {"\xff\xfe":1}
      [Buffer.from([0xc0, 0xaf]), 400], // an overlong "/"
      ['{"screenshot":"binary","action":{"action":"wait","ms":1}}', 400],
    ];
    for (const [body, status] of bad) {
      const r = await raw('/step', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(r.status, String(body)).toBe(status);
      expect(code(r.text)).toBe('invalid_request');
    }
    // Over the limit, declared or streamed: refused without buffering it.
    const declared = await raw('/step', { method: 'POST', headers: { 'content-length': String(64 << 20) } });
    expect(declared.status).toBe(413);
    const streamed = await raw('/step', { method: 'POST', body: Buffer.alloc((1 << 20) + 10, 0x20) });
    expect([0, 413]).toContain(streamed.status); // 413, or the connection cut while the client was still writing
    expect(relayed.length).toBe(before);
    // The gateway is still there after all of it.
    const ok = await raw('/observation');
    expect(ok.status).toBe(200);
  });

  it("relays the step body alone, with Grove's key, to this sandbox's two routes only", async () => {
    const before = relayed.length;
    const hostileHeaders = { 'x-api-key': 'harness-chosen-key', 'x-grove-rollout': 'someone-else', 'x-forwarded-for': '10.0.0.1', host: 'evil.example', cookie: 'a=b' };
    const step = await raw('/step', { method: 'POST', headers: hostileHeaders, body: JSON.stringify({ action: { action: 'wait', ms: 1 }, screenshot: 'none' }) });
    expect(step.status, step.text).toBe(200);
    // A step Grove refuses comes back with Grove's own code (4xx passes through).
    const refused = await raw('/step', { method: 'POST', body: JSON.stringify({ action: { action: 'teleport' } }) });
    expect(refused.status).toBe(400);
    const obs = await raw(`/observation?sandbox_id=${otherId}&api_key=x`, { headers: hostileHeaders });
    expect(obs.status).toBe(200);
    expect(JSON.parse(obs.text).title).toBe('gw');
    const mine = relayed.slice(before);
    expect(mine.length).toBe(3);
    for (const r of mine) {
      expect(r.path).toMatch(new RegExp(`^/sandboxes/${sandboxId}/(step|observation)$`));
      expect(r.headers['x-api-key']).toBe(grove.apiKey);
      expect(Object.keys(r.headers).sort()).toEqual(r.method === 'POST' ? ['content-type', 'x-api-key'] : ['x-api-key']);
    }
    expect(JSON.parse(mine[0].body!)).toEqual({ action: { action: 'wait', ms: 1 }, screenshot: 'none' });
    // Request smuggling spellings (both framings, a bad chunk) are the HTTP parser's 400, not a relay.
    const smuggle = await raw('/step', { method: 'POST', headers: { 'transfer-encoding': 'chunked', 'content-length': '5' }, body: '0\r\n\r\nGET /observation HTTP/1.1\r\n\r\n' });
    expect(smuggle.status).toBe(400);
    expect(relayed.length).toBe(before + 3);
  });

  it("cannot reach Grove's API or another sandbox through its browser", async () => {
    const r = await raw('/step', { method: 'POST', body: JSON.stringify({ action: { action: 'goto', url: `${grove.url}/sandboxes` }, screenshot: 'none' }) });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).observation.last_action_error).toMatchObject({ code: 'network_blocked' });
    expect(r.text).not.toContain(otherId);
    const obs = await raw('/observation');
    expect(obs.text).not.toContain(otherId);
    // Every answer the harness got, including errors: never Grove's key.
    expect(answers.join('\n')).not.toContain(grove.apiKey);
  });

  it("says nothing of Grove's address when Grove cannot be reached", async () => {
    const port = await closedPort();
    const lost = await startBrowserGateway(new GroveClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k'.repeat(16) }), sandboxId);
    try {
      const r = await fetch(`${lost.origin}/observation`, { headers: { authorization: `Bearer ${lost.token}` } });
      expect(r.status).toBe(502);
      const text = await r.text();
      expect(JSON.parse(text).error.code).toBe('grove_unreachable');
      expect(text).not.toContain(String(port));
    } finally {
      await lost.close();
    }
  });
});
