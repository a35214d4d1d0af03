// /metrics for OpenEnv: sessions open (by environment and transport), resets, steps and tool calls by outcome, and
// error answers by code, on every transport (HTTP, /ws, HTTP /mcp, the /mcp WebSocket), including the refusals an
// attacker earns (wrong key, malformed frames, capacity). Claw environment, loopback port. And OpenEnv's steps in
// Grove's own grove_steps_total (and the step latency histogram) beside REST steps, labelled by transport, and Grove's
// own surfaces counted the same way: REST exec and /execute, a sandbox's MCP server (the SDK's client).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../sandbox/config.ts';
import { shellEnvironment } from '../../server/server.ts';
import { Frames, KEY, serve, wsUrl, type Served } from './support.ts';
import { connect, INIT, rawPost } from '../mcp/support.ts';

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

describe('OpenEnv steps in grove_steps_total', () => {
  let g: Served;
  let dataDir: string;
  beforeAll(async () => {
    // Claw in process, and a shell environment (real bubblewrap) for the shell steps.
    dataDir = mkdtempSync(join(os.tmpdir(), 'grove-openenv-metrics-'));
    const flags = { openenvMaxSessions: 4, openenvIdleTimeoutS: 60, dataDir };
    const config = loadConfig({ env: {}, flags: { apiKey: KEY, ...flags } });
    g = await serve(flags, { environments: async (log) => ({ shell: await shellEnvironment(config, log) }) });
  });
  afterAll(async () => {
    await g?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const steps = async () => {
    const r = await g.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': KEY } });
    const lines = r.body.split('\n');
    return { rows: lines.filter((l) => l.startsWith('grove_steps_total')).sort(), count: Number(lines.find((l) => l.startsWith('grove_step_duration_seconds_count'))?.split(' ')[1]) };
  };

  it('counts a step through OpenEnv like a REST step: sandbox type, outcome, and the transport (grove for REST)', async () => {
    expect((await steps()).rows).toEqual([]);
    // REST: a claw call on a sandbox of Grove's own API.
    const created = await g.app.inject({ method: 'POST', url: '/sandboxes', headers: { 'x-api-key': KEY }, payload: { type: 'claw', world_seed: 1 } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().sandbox_id as string;
    await g.app.inject({ url: `/sandboxes/${id}/wait?timeout=20`, headers: { 'x-api-key': KEY } });
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${id}/claw/call`, headers: { 'x-api-key': KEY }, payload: { tool: 'todo_list' } })).json().status).toBe(200);
    await g.app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: { 'x-api-key': KEY } });
    // /ws: two steps (one the app answers 404: an error outcome), a tool call; a malformed step runs nothing.
    const ws = await Frames.open(wsUrl(g.base, `/openenv/${KEY}/claw/ws`));
    await ws.send({ type: 'reset', data: { seed: 1 } });
    expect((await ws.send({ type: 'step', data: { tool: 'todo_list', arguments: {} } })).data.observation.status).toBe(200);
    expect((await ws.send({ type: 'step', data: { tool: 'no_such_tool', arguments: {} } })).data.observation.status).toBe(404);
    expect((await ws.send({ type: 'step', data: { type: 'call_tool', tool_name: 'todo_list', arguments: {} } })).type).toBe('observation');
    expect((await ws.send({ type: 'step', data: { tool: 7 } })).data.code).toBe('VALIDATION_ERROR');
    await ws.close();
    // HTTP /step (stateless), HTTP /mcp tools/call (stateless), the /mcp WebSocket.
    expect((await g.app.inject({ method: 'POST', url: `/openenv/${KEY}/claw/step`, payload: { action: { tool: 'todo_list', arguments: {} } } })).statusCode).toBe(200);
    const rpc = await g.app.inject({ method: 'POST', url: `/openenv/${KEY}/claw/mcp`, payload: { jsonrpc: '2.0', method: 'tools/call', params: { name: 'todo_list', arguments: {} }, id: 1 } });
    expect(rpc.json().result.is_error).toBe(false);
    const mcp = await Frames.open(wsUrl(g.base, `/openenv/${KEY}/claw/mcp`));
    expect((await mcp.send({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'todo_list', arguments: {} }, id: 1 })).result.is_error).toBe(false);
    await mcp.close();
    const after = await steps();
    expect(after.rows).toEqual([
      'grove_steps_total{outcome="error",transport="openenv_ws",type="claw"} 1',
      'grove_steps_total{outcome="ok",transport="grove",type="claw"} 1',
      'grove_steps_total{outcome="ok",transport="openenv_http",type="claw"} 1',
      'grove_steps_total{outcome="ok",transport="openenv_mcp",type="claw"} 1',
      'grove_steps_total{outcome="ok",transport="openenv_ws",type="claw"} 2',
      'grove_steps_total{outcome="ok",transport="openenv_ws_mcp",type="claw"} 1',
    ]);
    // The step latency histogram holds them all.
    expect(after.count).toBe(7);
    await expect.poll(() => g.app.grove.registry.list().filter((i) => i.status !== 'closed')).toEqual([]);
  });

  it('a shell step through OpenEnv counts under the shell type; a timed-out command is an error outcome', async () => {
    const before = await steps();
    const ws = await Frames.open(wsUrl(g.base, `/openenv/${KEY}/shell/ws`));
    expect((await ws.send({ type: 'reset', data: {} })).type).toBe('observation');
    expect((await ws.send({ type: 'step', data: { command: 'echo hi' } })).data.observation.stdout).toBe('hi\n');
    expect((await ws.send({ type: 'step', data: { command: 'sleep 5', timeout_s: 0.5 } })).data.observation.timed_out).toBe(true);
    await ws.close();
    const after = await steps();
    expect(after.rows.filter((l) => l.includes('type="shell"'))).toEqual([
      'grove_steps_total{outcome="error",transport="openenv_ws",type="shell"} 1',
      'grove_steps_total{outcome="ok",transport="openenv_ws",type="shell"} 1',
    ]);
    expect(after.count - before.count).toBe(2);
  }, 60_000);

  it("Grove's own surfaces count the same way: REST exec and /execute (grove), a sandbox's MCP tool calls (mcp); refusals count nothing", async () => {
    const before = await steps();
    const h = { 'x-api-key': KEY };
    const shell = await g.app.inject({ method: 'POST', url: '/sandboxes', headers: h, payload: { type: 'shell' } });
    const claw = await g.app.inject({ method: 'POST', url: '/sandboxes', headers: h, payload: { type: 'claw', world_seed: 1 } });
    const [sid, cid] = [shell.json().sandbox_id as string, claw.json().sandbox_id as string];
    for (const id of [sid, cid]) expect((await g.app.inject({ url: `/sandboxes/${id}/wait?timeout=30`, headers: h })).json().status).toBe('ready');
    // REST: an exec, a timed-out exec (error), mini-swe-agent's /execute; a background job is not a finished step.
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${sid}/exec`, headers: h, payload: { command: 'echo hi' } })).json().stdout).toBe('hi\n');
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${sid}/exec`, headers: h, payload: { command: 'sleep 5', timeout_s: 0.5 } })).json().timed_out).toBe(true);
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${sid}/execute`, headers: h, payload: { command: 'echo x' } })).json().returncode).toBe(0);
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${sid}/exec`, headers: h, payload: { command: 'true', background: true } })).statusCode).toBe(202);
    // Attacker: refused before anything ran (bad body, wrong sandbox type, unknown sandbox, no key): nothing counted.
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${sid}/exec`, headers: h, payload: { command: 7 } })).json().error.code).toBe('invalid_request');
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${cid}/exec`, headers: h, payload: { command: 'id' } })).json().error.code).toBe('wrong_sandbox_type');
    expect((await g.app.inject({ method: 'POST', url: '/sandboxes/sb_nope/exec', headers: h, payload: { command: 'id' } })).statusCode).toBe(404);
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${sid}/exec`, payload: { command: 'id' } })).statusCode).toBe(401);
    expect((await g.app.inject({ method: 'POST', url: `/sandboxes/${cid}/claw/call`, headers: h, payload: { tool: 7 } })).statusCode).toBe(400);
    // A sandbox's MCP server, the SDK's own client: shell and claw tool calls; an unknown tool is an error result.
    const sdk = async (id: string) => {
      const t = (await g.app.inject({ url: `/sandboxes/${id}/mcp/token`, headers: h })).json();
      return connect(`${g.base}${t.path}`, t.token);
    };
    const [ms, mc] = [await sdk(sid), await sdk(cid)];
    try {
      expect((await ms.callTool({ name: 'exec', arguments: { command: 'echo mcp' } })).isError).toBeFalsy();
      // A command past its time comes back as a result with its partial output; the step counts as an error.
      expect(((await ms.callTool({ name: 'exec', arguments: { command: 'sleep 5', timeout_s: 0.5 } })).structuredContent as { timed_out?: boolean } | undefined)?.timed_out).toBe(true);
      expect((await mc.callTool({ name: 'todo_list', arguments: {} })).isError).toBeFalsy();
      expect((await mc.callTool({ name: 'no_such_tool', arguments: {} })).isError).toBe(true);
    } finally {
      await Promise.all([ms.close(), mc.close()]);
    }
    // A wrong token opens nothing and counts nothing.
    const denied = await rawPost(`${g.base}/sandboxes/${cid}/mcp`, INIT, { authorization: 'Bearer not-the-token' });
    expect(denied.status).toBe(403);
    expect(denied.text).not.toMatch(/at .*\.ts:\d+/);
    for (const id of [sid, cid]) await g.app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: h });
    const after = await steps();
    const added = after.rows.filter((r) => !before.rows.includes(r));
    expect(added).toEqual([
      'grove_steps_total{outcome="error",transport="grove",type="shell"} 1',
      'grove_steps_total{outcome="error",transport="mcp",type="claw"} 1',
      'grove_steps_total{outcome="error",transport="mcp",type="shell"} 1',
      'grove_steps_total{outcome="ok",transport="grove",type="shell"} 2',
      'grove_steps_total{outcome="ok",transport="mcp",type="claw"} 1',
      'grove_steps_total{outcome="ok",transport="mcp",type="shell"} 1',
    ]);
    expect(after.count - before.count).toBe(7);
  }, 90_000);
});
