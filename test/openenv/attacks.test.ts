// The OpenEnv surface under attack: missing and wrong keys (HTTP and the WebSocket handshake), malformed and
// oversized frames, session ids used across environments and transports, capacity exhaustion, hostile reset
// arguments. Each answers a stable code and leaves no sandbox or session behind.
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Frames, KEY, serve, wsUrl, type Served } from './support.ts';

let s: Served;
beforeAll(async () => {
  s = await serve({ openenvMaxSessions: 4, bodyLimit: 64 * 1024 });
});
afterAll(async () => {
  await s?.close();
});

const p = (env: string, rest: string, key = KEY) => `/openenv/${key}/${env}${rest}`;

function handshake(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((ok, fail) => {
    const ws = new WebSocket(url, { headers });
    ws.once('unexpected-response', (_req, res) => {
      ok(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      ws.close();
      ok(101);
    });
    ws.once('error', fail);
  });
}

async function settled(): Promise<void> {
  await expect.poll(() => s.app.grove.registry.list().length).toBe(0);
}

describe('keys', () => {
  it('a wrong key in the path is 403, a missing header 401, on HTTP and at the WebSocket handshake', async () => {
    expect((await s.app.inject({ url: p('claw', '/health', 'wrong-key-xxxxxxxx') })).statusCode).toBe(403);
    expect((await s.app.inject({ method: 'POST', url: p('claw', '/reset', 'wrong-key-xxxxxxxx'), payload: {} })).statusCode).toBe(403);
    expect((await s.app.inject({ method: 'POST', url: '/openenv/claw/mcp', payload: { jsonrpc: '2.0', method: 'tools/list', id: 1 } })).statusCode).toBe(401);
    expect((await s.app.inject({ url: '/openenv/claw/schema', headers: { 'x-api-key': 'nope-nope-nope' } })).statusCode).toBe(403);
    expect(await handshake(wsUrl(s.base, p('claw', '/ws', 'wrong-key-xxxxxxxx')))).toBe(403);
    expect(await handshake(wsUrl(s.base, '/openenv/claw/ws'))).toBe(401);
    expect(await handshake(wsUrl(s.base, `/openenv/claw/ws?api_key=${KEY}`))).toBe(101);
    expect(await handshake(wsUrl(s.base, '/openenv/claw/ws'), { 'x-api-key': KEY })).toBe(101);
    // An unknown environment learns nothing more than 404; an undecodable key segment too.
    expect(await handshake(wsUrl(s.base, p('nosuch', '/ws')))).toBe(404);
    expect(await handshake(wsUrl(s.base, '/openenv/%ZZ/claw/ws'))).toBe(404);
    await settled();
  });

  it('with auth off, a foreign Origin is refused even with any path key', async () => {
    const open = await serve({ apiKey: undefined, authDisabled: true });
    try {
      expect((await open.app.inject({ url: '/openenv/anything/claw/metadata' })).statusCode).toBe(200);
      expect((await open.app.inject({ url: '/openenv/anything/claw/metadata', headers: { origin: 'http://evil.example' } })).statusCode).toBe(403);
      expect(await handshake(wsUrl(open.base, '/openenv/anything/claw/ws'), { origin: 'http://evil.example' })).toBe(403);
    } finally {
      await open.close();
    }
  });
});

describe('frames', () => {
  it('malformed frames answer an error and the session goes on', async () => {
    const ws = await Frames.open(wsUrl(s.base, p('claw', '/ws')));
    expect((await ws.send('{"type":')).data.code).toBe('INVALID_JSON');
    expect((await ws.send('[1,2,3]')).data.code).toBe('UNKNOWN_TYPE');
    expect((await ws.send('null')).data.code).toBe('UNKNOWN_TYPE');
    expect((await ws.send({ type: '__proto__' })).data.code).toBe('UNKNOWN_TYPE');
    expect((await ws.send({ type: 'state', extra: 1 })).data.code).toBe('VALIDATION_ERROR');
    expect((await ws.send({ type: 'reset', data: 'x' })).data.code).toBe('VALIDATION_ERROR');
    expect((await ws.send({ type: 'reset', data: { seed: -1 } })).data.code).toBe('VALIDATION_ERROR');
    expect((await ws.send('{"type":"reset","data":{"__proto__":{"polluted":1}}}')).type).toBe('observation');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await ws.send({ type: 'step', data: { tool: 'x'.repeat(500) } })).data.code).toBe('VALIDATION_ERROR');
    expect((await ws.send({ type: 'mcp', data: { jsonrpc: '1.0', method: 'tools/list' } })).data.error.code).toBe(-32600);
    ws.ws.send(Buffer.from([0xff, 0xfe, 0x00]));
    expect((await ws.next()).data.code).toBe('INVALID_JSON');
    expect((await ws.send({ type: 'state' })).type).toBe('state');
    await ws.close();
    await settled();
  });

  it('a frame over the body limit closes the connection (1009) and frees its session and sandbox', async () => {
    const ws = await Frames.open(wsUrl(s.base, p('claw', '/ws')));
    await ws.send({ type: 'reset', data: {} });
    ws.ws.send(JSON.stringify({ type: 'step', data: { tool: 'todo_list', arguments: { pad: 'x'.repeat(100 * 1024) } } }));
    expect((await ws.whenClosed()).code).toBe(1009);
    await settled();
    await expect.poll(() => s.app.grove.registry.list().length).toBe(0);
  });

  it('hostile reset arguments are refused before any sandbox exists', async () => {
    const ws = await Frames.open(wsUrl(s.base, p('browser', '/ws')));
    const fileUrl = await ws.send({ type: 'reset', data: { start_url: 'file:///etc/passwd' } });
    expect(fileUrl.data).toMatchObject({ code: 'VALIDATION_ERROR', grove_code: 'navigation_blocked' });
    const task = await ws.send({ type: 'reset', data: { task: '../../etc/passwd' } });
    expect(task.data.code).toBe('VALIDATION_ERROR');
    await ws.close();
    const claw = await Frames.open(wsUrl(s.base, p('claw', '/ws')));
    expect((await claw.send({ type: 'reset', data: { task: '../../../etc/passwd' } })).data.code).toBe('VALIDATION_ERROR');
    await claw.close();
    expect(s.app.grove.registry.list()).toEqual([]);
  });
});

describe('sessions', () => {
  const rpc = async (env: string, method: string, params: Record<string, unknown> = {}) =>
    (await s.app.inject({ method: 'POST', url: p(env, '/mcp'), payload: { jsonrpc: '2.0', method, params, id: 1 } })).json();

  it('an MCP session id works only on its own environment, and a WebSocket session is never reachable by id', async () => {
    const sid = (await rpc('claw', 'openenv/session/create')).result.session_id as string;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    expect((await rpc('shell', 'tools/call', { name: 'exec', arguments: { command: 'id' }, session_id: sid })).error.code).toBe(-32602);
    expect((await rpc('shell', 'openenv/session/close', { session_id: sid })).error.code).toBe(-32602);
    // A WebSocket's own session id (what openenv/session/create answers on it) is not an HTTP session.
    const ws = await Frames.open(wsUrl(s.base, p('claw', '/ws')));
    await ws.send({ type: 'reset', data: {} });
    const wsId = (await ws.send({ type: 'mcp', data: { jsonrpc: '2.0', method: 'openenv/session/create', id: 2 } })).data.result.session_id as string;
    expect((await rpc('claw', 'tools/call', { name: 'todo_list', session_id: wsId })).error.code).toBe(-32602);
    expect((await rpc('claw', 'openenv/session/close', { session_id: wsId })).error.code).toBe(-32602);
    const closeOwn = await ws.send({ type: 'mcp', data: { jsonrpc: '2.0', method: 'openenv/session/close', params: { session_id: wsId }, id: 3 } });
    expect(closeOwn.data.error.code).toBe(-32600);
    await ws.close();
    expect((await rpc('claw', 'openenv/session/close', { session_id: sid })).result.closed).toBe(true);
    await settled();
  });

  it('capacity exhaustion: sessions beyond the cap are refused with the counts, and nothing leaks', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await rpc('claw', 'openenv/session/create')).result.session_id);
    const over = await rpc('claw', 'openenv/session/create');
    expect(over.error).toMatchObject({ code: -32000, data: { active_sessions: 4, max_sessions: 4 } });
    const ws = await Frames.open(wsUrl(s.base, p('shell', '/ws')));
    expect((await ws.next()).data).toMatchObject({ code: 'CAPACITY_REACHED', max_sessions: 4 });
    await ws.whenClosed();
    for (const id of ids) await rpc('claw', 'openenv/session/close', { session_id: id });
    const again = await Frames.open(wsUrl(s.base, p('claw', '/ws')));
    expect((await again.send({ type: 'reset', data: {} })).type).toBe('observation');
    await again.close();
    await settled();
  });
});
