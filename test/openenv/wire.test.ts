// OpenEnv's wire protocol as its clients send it (written from meta-pytorch/OpenEnv's published server and client:
// env_server/http_server.py, types.py, mcp_types.py, env_client.py), against Grove's Claw environment (no browser):
// HTTP routes, the /ws session, MCP actions and JSON-RPC, errors, capacity and idle expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Frames, KEY, serve, wsUrl, type Served } from './support.ts';

let s: Served;
const TASK = 'hand-triage-urgent';

beforeAll(async () => {
  s = await serve({ openenvMaxSessions: 3, openenvIdleTimeoutS: 60 });
});
afterAll(async () => {
  await s?.close();
});

const path = (p: string) => `/openenv/${KEY}/claw${p}`;

describe('HTTP', () => {
  it('health, metadata, schema, state, tasks', async () => {
    expect((await s.app.inject({ url: path('/health') })).json()).toEqual({ status: 'healthy' });
    const meta = (await s.app.inject({ url: path('/metadata') })).json();
    expect(meta.name).toBe('grove-claw');
    const schema = (await s.app.inject({ url: path('/schema') })).json();
    expect(Object.keys(schema).sort()).toEqual(['action', 'observation', 'state']);
    expect(schema.state.properties.step_count.type).toBe('integer');
    expect((await s.app.inject({ url: path('/state') })).json()).toEqual({ episode_id: null, step_count: 0 });
    const tasks = (await s.app.inject({ url: path('/tasks') })).json();
    expect(tasks.count).toBeGreaterThan(100);
    expect(tasks.tasks[0]).toMatchObject({ suite: 'claw' });
  });

  it('the key travels in X-API-Key too', async () => {
    expect((await s.app.inject({ url: '/openenv/claw/metadata', headers: { 'x-api-key': KEY } })).statusCode).toBe(200);
    expect((await s.app.inject({ url: '/openenv/claw/metadata' })).statusCode).toBe(401);
  });

  it('reset and step are stateless: each runs in a fresh episode and leaves no sandbox', async () => {
    const r = await s.app.inject({ method: 'POST', url: path('/reset'), payload: { seed: 3 } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ reward: null, done: false, observation: { step: 0 } });
    const st = await s.app.inject({ method: 'POST', url: path('/step'), payload: { action: { tool: 'todo_list', arguments: {} } } });
    expect(st.statusCode).toBe(200);
    expect(st.json().observation).toMatchObject({ tool: 'todo_list', status: 200 });
    expect(s.app.grove.registry.list()).toEqual([]);
  });

  it('a malformed action is 422 with a pydantic-shaped detail', async () => {
    const r = await s.app.inject({ method: 'POST', url: path('/step'), payload: { action: 'click' } });
    expect(r.statusCode).toBe(422);
    expect(r.json().detail[0]).toMatchObject({ loc: ['body', 'action'] });
    const missing = await s.app.inject({ method: 'POST', url: path('/step'), payload: {} });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'action'] });
    const bad = await s.app.inject({ method: 'POST', url: path('/step'), payload: { action: { tool: 7 } } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc.slice(0, 2)).toEqual(['body', 'action']);
    const notJson = await s.app.inject({ method: 'POST', url: path('/step'), headers: { 'content-type': 'application/json' }, payload: '{"action":' });
    expect(notJson.statusCode).toBe(422);
    expect(notJson.json().detail[0].type).toBe('json_invalid');
  });

  it('JSON-RPC on /mcp: tools/list without a session, sessions by id, errors by code', async () => {
    const rpc = async (method: string, params: Record<string, unknown> = {}, id = 1) =>
      (await s.app.inject({ method: 'POST', url: path('/mcp'), payload: { jsonrpc: '2.0', method, params, id } })).json();
    const list = await rpc('tools/list');
    expect(list.result.tools.length).toBeGreaterThan(10);
    expect(list.result.tools[0]).toHaveProperty('inputSchema');
    const created = await rpc('openenv/session/create');
    const sid = created.result.session_id as string;
    const call = await rpc('tools/call', { name: 'todo_list', arguments: {}, session_id: sid });
    expect(call.result.is_error).toBe(false);
    expect(call.result.content[0].type).toBe('text');
    expect(call.result).toHaveProperty('data');
    expect((await rpc('tools/call', { name: 'todo_list', session_id: 'nope' })).error.code).toBe(-32602);
    expect((await rpc('no/such')).error.code).toBe(-32601);
    expect((await rpc('openenv/session/close', { session_id: sid })).result).toEqual({ session_id: sid, closed: true });
    expect(s.app.grove.registry.list()).toEqual([]);
    const parse = await s.app.inject({ method: 'POST', url: path('/mcp'), headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(parse.json().error.code).toBe(-32700);
  });
});

describe('WebSocket sessions', () => {
  it('reset, step, state, MCP actions and the terminal reward; the sandbox closes with the session', async () => {
    const ws = await Frames.open(wsUrl(s.base, path('/ws')));
    const reset = await ws.send({ type: 'reset', data: { task: TASK, episode_id: 'ep-1' } });
    expect(reset.type).toBe('observation');
    expect(reset.data.observation.goal).toMatch(/\w/);
    const state = await ws.send({ type: 'state' });
    expect(state).toMatchObject({ type: 'state', data: { episode_id: 'ep-1', step_count: 0 } });
    const tools = await ws.send({ type: 'step', data: { type: 'list_tools' } });
    expect(tools.data.observation.tools.length).toBeGreaterThan(3);
    const call = await ws.send({ type: 'step', data: { type: 'call_tool', tool_name: 'mail_list_folders', arguments: {}, metadata: {} } });
    expect(call.data.observation).toMatchObject({ tool_name: 'mail_list_folders', error: null });
    expect(call.data.observation.result.is_error).toBe(false);
    const step = await ws.send({ type: 'step', data: { tool: 'mail_list_folders', arguments: {}, metadata: {} } });
    expect(step.data).toMatchObject({ reward: null, done: false, observation: { tool: 'mail_list_folders', status: 200 } });
    const end = await ws.send({ type: 'step', data: { answer: 'done' } });
    expect(end.data.done).toBe(true);
    expect(typeof end.data.reward).toBe('number');
    expect(end.data.observation.grade).toHaveProperty('score');
    const mcp = await ws.send({ type: 'mcp', data: { jsonrpc: '2.0', method: 'tools/list', id: 7 } });
    expect(mcp).toMatchObject({ type: 'mcp', data: { jsonrpc: '2.0', id: 7 } });
    expect(s.app.grove.registry.list()).toHaveLength(1);
    ws.ws.send(JSON.stringify({ type: 'close' }));
    expect(await ws.whenClosed()).toEqual({ code: 1000 });
    await expect.poll(() => s.app.grove.registry.list().length).toBe(0);
  });

  it('errors as {"type":"error","data":{message, code}} and the session goes on', async () => {
    const ws = await Frames.open(wsUrl(s.base, path('/ws')));
    expect((await ws.send('not json')).data.code).toBe('INVALID_JSON');
    expect((await ws.send({ type: 'dance' })).data.code).toBe('UNKNOWN_TYPE');
    const v = await ws.send({ type: 'step' });
    expect(v).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    expect(Array.isArray(v.data.errors)).toBe(true);
    expect((await ws.send({ type: 'step', data: { tool: 'todo_list' } })).data.code).toBe('EXECUTION_ERROR');
    expect((await ws.send({ type: 'reset', data: { task: 'no-such-task' } })).data.code).toBe('VALIDATION_ERROR');
    expect((await ws.send({ type: 'reset', data: {} })).type).toBe('observation');
    await ws.close();
  });

  it('capacity: beyond openenvMaxSessions a connection is told CAPACITY_REACHED and closed', async () => {
    const open = await Promise.all([0, 1, 2].map(() => Frames.open(wsUrl(s.base, path('/ws')))));
    await Promise.all(open.map((w) => w.send({ type: 'reset', data: { seed: 1 } })));
    const extra = await Frames.open(wsUrl(s.base, path('/ws')));
    const err = await extra.next();
    expect(err).toMatchObject({ type: 'error', data: { code: 'CAPACITY_REACHED', active_sessions: 3, max_sessions: 3 } });
    await extra.whenClosed();
    await Promise.all(open.map((w) => w.close()));
    await expect.poll(() => s.app.grove.registry.list().length).toBe(0);
  });

  it('concurrent sessions keep their own episodes', async () => {
    const a = await Frames.open(wsUrl(s.base, path('/ws')));
    const b = await Frames.open(wsUrl(s.base, path('/ws')));
    await Promise.all([a.send({ type: 'reset', data: { episode_id: 'a' } }), b.send({ type: 'reset', data: { episode_id: 'b' } })]);
    await Promise.all([a.send({ type: 'step', data: { tool: 'todo_list' } }), a.send({ type: 'step', data: { tool: 'todo_list' } }).catch(() => undefined)]);
    const [sa, sb] = await Promise.all([a.send({ type: 'state' }), b.send({ type: 'state' })]);
    expect(sa.data).toMatchObject({ episode_id: 'a', step_count: 2 });
    expect(sb.data).toMatchObject({ episode_id: 'b', step_count: 0 });
    expect(sa.data.sandbox_id).not.toBe(sb.data.sandbox_id);
    await Promise.all([a.close(), b.close()]);
  });

  it('an idle session is closed with its sandbox (SESSION_ERROR, then the socket closes)', async () => {
    const idle = await serve({ openenvIdleTimeoutS: 1, reaperIntervalMs: 200 });
    try {
      await idleCase(idle);
    } finally {
      await idle.close();
    }
  });
});

async function idleCase(s: Served): Promise<void> {
  {
    const ws = await Frames.open(wsUrl(s.base, path('/ws')));
    await ws.send({ type: 'reset', data: {} });
    expect(s.app.grove.registry.list()).toHaveLength(1);
    const note = await ws.next();
    expect(note).toMatchObject({ type: 'error', data: { code: 'SESSION_ERROR' } });
    expect(note.data.message).toMatch(/idle/);
    // The socket stays open for the client's next frame (which then reads the error above), then closes.
    ws.ws.send(JSON.stringify({ type: 'state' }));
    expect(await ws.whenClosed()).toEqual({ code: 1000 });
    await expect.poll(() => s.app.grove.registry.list().length).toBe(0);
  }
}
