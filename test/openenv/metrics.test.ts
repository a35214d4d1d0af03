// /metrics for OpenEnv: sessions open (by environment and transport), resets, steps and tool calls by outcome, and
// error answers by code, on every transport (HTTP, /ws, HTTP /mcp, the /mcp WebSocket), including the refusals an
// attacker earns (wrong key, malformed frames, capacity). Claw environment, loopback port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Frames, KEY, serve, wsUrl, type Served } from './support.ts';

let s: Served;
beforeAll(async () => {
  s = await serve({ openenvMaxSessions: 2, openenvIdleTimeoutS: 60 });
});
afterAll(async () => {
  await s?.close();
});

const path = (rest: string, env = 'claw', key = KEY) => `/openenv/${key}/${env}${rest}`;

/** The openenv rows of /metrics, as `name{labels} value` lines. */
async function rows(): Promise<string[]> {
  const r = await s.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': KEY } });
  expect(r.statusCode).toBe(200);
  return r.body.split('\n').filter((l) => l.startsWith('grove_openenv_'));
}

describe('OpenEnv in /metrics', () => {
  it('counts sessions, resets, steps, tool calls and errors by code on every transport', async () => {
    expect(await rows()).toEqual([]);
    // /ws: a session with a reset, two steps (one a failed tool step), a tool call, malformed frames.
    const ws = await Frames.open(wsUrl(s.base, path('/ws')));
    await ws.send({ type: 'reset', data: { seed: 1 } });
    await ws.send({ type: 'step', data: { tool: 'todo_list', arguments: {} } });
    await ws.send({ type: 'step', data: { type: 'call_tool', tool_name: 'todo_list', arguments: {} } });
    expect((await ws.send('not json')).data.code).toBe('INVALID_JSON');
    expect((await ws.send({ type: 'step' })).data.code).toBe('VALIDATION_ERROR');
    expect((await ws.send({ type: 'reset', data: { task: 'no-such-task' } })).data.code).toBe('VALIDATION_ERROR');
    // The /mcp WebSocket: a tool call starts its episode.
    const mcp = await Frames.open(wsUrl(s.base, path('/mcp')));
    await mcp.send({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'todo_list', arguments: {} }, id: 1 });
    expect((await mcp.send('{')).error.code).toBe(-32700);
    let text = (await rows()).join('\n');
    expect(text).toContain('grove_openenv_sessions_open{env="claw",transport="ws"} 1');
    expect(text).toContain('grove_openenv_sessions_open{env="claw",transport="ws_mcp"} 1');
    // Capacity (2): a third session is refused and counted.
    const extra = await Frames.open(wsUrl(s.base, path('/ws')));
    expect((await extra.next()).data.code).toBe('CAPACITY_REACHED');
    await extra.whenClosed();
    await Promise.all([ws.close(), mcp.close()]);
    // HTTP: a stateless reset, a malformed step (422), a wrong key; HTTP /mcp: a parse error, an unknown method.
    expect((await s.app.inject({ method: 'POST', url: path('/reset'), payload: {} })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'POST', url: path('/step'), payload: { action: 'x' } })).statusCode).toBe(422);
    expect((await s.app.inject({ method: 'POST', url: path('/reset', 'claw', 'wrong-key-0123456789'), payload: {} })).statusCode).toBe(403);
    expect((await s.app.inject({ method: 'POST', url: path('/mcp'), headers: { 'content-type': 'application/json' }, payload: '{' })).json().error.code).toBe(-32700);
    expect((await s.app.inject({ method: 'POST', url: path('/mcp'), payload: { jsonrpc: '2.0', method: 'x/y', id: 2 } })).json().error.code).toBe(-32601);
    await expect.poll(async () => (await rows()).filter((l) => l.startsWith('grove_openenv_sessions_open'))).toEqual([
      'grove_openenv_sessions_open{env="claw",transport="ws"} 0',
      'grove_openenv_sessions_open{env="claw",transport="ws_mcp"} 0',
    ]);
    text = (await rows()).join('\n');
    expect(text.split('\n').filter((l) => !l.startsWith('grove_openenv_sessions_open')).sort()).toEqual([
      'grove_openenv_errors_total{code="CAPACITY_REACHED",env="claw",transport="ws"} 1',
      'grove_openenv_errors_total{code="INVALID_JSON",env="claw",transport="ws"} 1',
      'grove_openenv_errors_total{code="METHOD_NOT_FOUND",env="claw",transport="mcp"} 1',
      'grove_openenv_errors_total{code="PARSE_ERROR",env="claw",transport="mcp"} 1',
      'grove_openenv_errors_total{code="PARSE_ERROR",env="claw",transport="ws_mcp"} 1',
      'grove_openenv_errors_total{code="VALIDATION_ERROR",env="claw",transport="http"} 1',
      'grove_openenv_errors_total{code="VALIDATION_ERROR",env="claw",transport="ws"} 2',
      'grove_openenv_errors_total{code="forbidden",env="claw",transport="http"} 1',
      'grove_openenv_resets_total{env="claw",outcome="error",transport="ws"} 1',
      'grove_openenv_resets_total{env="claw",outcome="ok",transport="http"} 1',
      'grove_openenv_resets_total{env="claw",outcome="ok",transport="ws"} 1',
      'grove_openenv_resets_total{env="claw",outcome="ok",transport="ws_mcp"} 1',
      'grove_openenv_sessions_total{env="claw",transport="ws"} 1',
      'grove_openenv_sessions_total{env="claw",transport="ws_mcp"} 1',
      'grove_openenv_steps_total{env="claw",kind="step",outcome="ok",transport="ws"} 1',
      'grove_openenv_steps_total{env="claw",kind="tool",outcome="ok",transport="ws"} 1',
      'grove_openenv_steps_total{env="claw",kind="tool",outcome="ok",transport="ws_mcp"} 1',
    ]);
    expect(s.app.grove.registry.list()).toEqual([]);
  });
});
