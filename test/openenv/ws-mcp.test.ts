// OpenEnv's MCP WebSocket route (/openenv/<key>/<env>/mcp), as OpenEnv's server has it (http_server.py,
// `@app.websocket("/mcp")`): one session per connection, JSON-RPC 2.0 text frames answered in order, OpenEnv's
// session methods; and its attacker's side: keys, malformed and oversized frames, session ids across transports,
// capacity. Against Grove's Claw environment (no browser) on a loopback port.
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Frames, KEY, serve, wsUrl, type Served } from './support.ts';

let s: Served;
beforeAll(async () => {
  s = await serve({ openenvMaxSessions: 2, openenvIdleTimeoutS: 60, bodyLimit: 64 * 1024 });
});
afterAll(async () => {
  await s?.close();
});

const url = (env = 'claw', key = KEY) => wsUrl(s.base, `/openenv/${key}/${env}/mcp`);
const rpc = (method: string, params: Record<string, unknown> = {}, id: number | string = 1) => ({ jsonrpc: '2.0', method, params, id });

/** Sessions open, as /metrics counts them. */
async function openSessions(): Promise<number> {
  const text = (await s.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': KEY } })).body;
  return [...text.matchAll(/^grove_openenv_sessions_open\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

async function settled(): Promise<void> {
  await expect.poll(() => s.app.grove.registry.list().length).toBe(0);
  await expect.poll(openSessions).toBe(0);
}

function handshake(u: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((ok, fail) => {
    const ws = new WebSocket(u, { headers });
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

describe('WebSocket /mcp', () => {
  it('tools/list, tools/call in one episode kept for the connection, session methods; closing frees the sandbox', async () => {
    const ws = await Frames.open(url());
    const list = await ws.send(rpc('tools/list', {}, 10));
    expect(list).toMatchObject({ jsonrpc: '2.0', id: 10 });
    expect(list.result.tools.map((t: { name: string }) => t.name)).toContain('todo_create');
    expect(list).not.toHaveProperty('error');
    // The first call starts the episode (a sandbox); the next calls see its state.
    const made = await ws.send(rpc('tools/call', { name: 'todo_create', arguments: { title: 'over ws mcp' } }, 'a'));
    expect(made).toMatchObject({ jsonrpc: '2.0', id: 'a', result: { is_error: false } });
    expect(s.app.grove.registry.list()).toHaveLength(1);
    const listed = await ws.send(rpc('tools/call', { name: 'todo_list', arguments: {} }, 'b'));
    expect(JSON.stringify(listed.result.data)).toContain('over ws mcp');
    expect(s.app.grove.registry.list()).toHaveLength(1);
    // openenv/session/create answers the connection's own session; closing it through MCP is refused.
    const own = await ws.send(rpc('openenv/session/create', {}, 3));
    expect(typeof own.result.session_id).toBe('string');
    const closeOwn = await ws.send(rpc('openenv/session/close', { session_id: own.result.session_id }, 4));
    expect(closeOwn).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'Cannot close active WebSocket-managed session via MCP method', data: null } });
    expect((await ws.send(rpc('no/such', {}, 5))).error.code).toBe(-32601);
    expect((await ws.send(rpc('tools/call', { arguments: {} }, 6))).error).toMatchObject({ code: -32602, message: "Missing 'name' in params" });
    // Answers come in the order the requests were sent, even when sent at once.
    ws.ws.send(JSON.stringify(rpc('tools/call', { name: 'todo_list', arguments: {} }, 7)));
    ws.ws.send(JSON.stringify(rpc('tools/list', {}, 8)));
    expect([(await ws.next()).id, (await ws.next()).id]).toEqual([7, 8]);
    await ws.close();
    await settled();
  });

  it('attacker: malformed frames answer JSON-RPC errors with id null and the session goes on', async () => {
    const ws = await Frames.open(url());
    const parse = await ws.send('{"jsonrpc": "2.0", ');
    expect(parse).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(parse.error.message).toMatch(/^Parse error: /);
    for (const bad of ['42', '"x"', 'null', '[]', '{"method": "tools/list"}', JSON.stringify({ jsonrpc: '1.0', method: 'tools/list', id: 1 }), JSON.stringify({ ...rpc('tools/list'), params: [] }), JSON.stringify({ ...rpc('tools/list'), extra: 1 })]) {
      const r = await ws.send(bad);
      expect(r, bad).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(r.error.message).not.toMatch(/at \w+ \(|node_modules/);
    }
    const hostile = await ws.send(rpc('tools/call', { name: 'x'.repeat(5000), arguments: { a: 1 } }, 9));
    expect(hostile.id).toBe(9);
    expect(hostile.error ?? hostile.result.is_error).toBeTruthy();
    expect(JSON.stringify(hostile).length).toBeLessThan(2000);
    expect((await ws.send(rpc('tools/list', {}, 11))).result.tools.length).toBeGreaterThan(3);
    await ws.close();
    await settled();
  });

  it('attacker: wrong or missing key, unknown environment are refused at the handshake', async () => {
    expect(await handshake(url('claw', 'wrong-key-0123456789'))).toBe(403);
    expect(await handshake(wsUrl(s.base, '/openenv/claw/mcp'))).toBe(401);
    expect(await handshake(wsUrl(s.base, '/openenv/claw/mcp'), { 'x-api-key': KEY })).toBe(101);
    expect(await handshake(wsUrl(s.base, `/openenv/claw/mcp?api_key=${KEY}`))).toBe(101);
    expect(await handshake(url('nope'))).toBe(404);
    await settled();
  });

  it('attacker: the connection\'s session is not reachable by id from HTTP /mcp or another environment', async () => {
    const ws = await Frames.open(url());
    await ws.send(rpc('tools/call', { name: 'todo_list', arguments: {} }));
    const sid = (await ws.send(rpc('openenv/session/create'))).result.session_id as string;
    for (const env of ['claw', 'shell']) {
      const r = await s.app.inject({ method: 'POST', url: `/openenv/${KEY}/${env}/mcp`, payload: rpc('tools/call', { name: 'todo_list', arguments: {}, session_id: sid }) });
      expect(r.json().error).toMatchObject({ code: -32602, message: `Unknown session_id: ${sid}` });
      const c = await s.app.inject({ method: 'POST', url: `/openenv/${KEY}/${env}/mcp`, payload: rpc('openenv/session/close', { session_id: sid }) });
      expect(c.json().error.code).toBe(-32602);
    }
    expect(s.app.grove.registry.list()).toHaveLength(1);
    await ws.close();
    await settled();
  });

  it('attacker: a frame over the body limit closes the connection (1009) and frees its session and sandbox', async () => {
    const ws = await Frames.open(url());
    await ws.send(rpc('tools/call', { name: 'todo_list', arguments: {} }));
    ws.ws.send(JSON.stringify(rpc('tools/call', { name: 'todo_create', arguments: { title: 'x'.repeat(100 * 1024) } })));
    expect((await ws.whenClosed()).code).toBe(1009);
    await settled();
  });

  it('capacity: beyond openenvMaxSessions the connection is sent -32000 with the counts and closed', async () => {
    const held = await Promise.all([Frames.open(url()), Frames.open(wsUrl(s.base, `/openenv/${KEY}/claw/ws`))]);
    const extra = await Frames.open(url());
    const err = await extra.next();
    expect(err).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { active_sessions: 2, max_sessions: 2 } } });
    expect(err.error.message).toMatch(/capacity/i);
    await extra.whenClosed();
    await Promise.all(held.map((w) => w.close()));
    await settled();
  });
});
