// A sandbox's own MCP server (Streamable HTTP, /sandboxes/{id}/mcp, the official SDK's client) on the kubernetes
// backend: the orchestrator serves the endpoint and relays every tool call to the sandbox on its worker pod (the
// simulated API server; real `grove worker` processes started by ProcessKubelet run Chromium, the shell and the Claw
// apps). Browser computer-use tools on a shared worker pod, shell tools on a pod of its own, a Claw task's tools on
// its own pod (audited by the worker, graded by the orchestrator), and the attacker's side: tokens, ids, sessions,
// frames, and a worker killed under a session.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { builtinTask } from '../../claw-env/tasks/index.ts';
import { L } from '../../k8s/labels.ts';
import { podRecords } from '../../k8s/records.ts';
import { api, connect, createSandbox, INIT, mcpAccess, rawPost, type Served } from '../mcp/support.ts';
import { until, type Orchestrator } from './harness.ts';
import { ProcessCluster } from './process-cluster.ts';

const KEY = 'k8s-mcp-key-0123456789abcdef';
const cluster = new ProcessCluster('mcp');
const { sim, kubelet } = cluster;
let orch: Orchestrator;
let s: Served;
let siteHost = '';

const PAGE = `<!doctype html><title>start</title>
<button style="position:absolute;left:0;top:0;width:400px;height:200px" onclick="document.title='clicked'">go</button>
<input style="position:absolute;left:0;top:250px;width:400px;height:40px" oninput="document.title='typed:'+this.value">`;

beforeAll(async () => {
  await cluster.start({
    replica: 'orch-mcp',
    workerPortBase: 21000,
    readyTimeoutSeconds: 90,
    grove: { authDisabled: false, apiKey: KEY },
    site: (req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/two' ? '<title>two</title>' : PAGE),
  });
  orch = cluster.orch;
  siteHost = cluster.siteHost;
  s = { url: cluster.url, key: KEY };
}, 60_000);

afterAll(() => cluster.close());

const podOf = (sandboxId: string) => sim.listPodObjects().find((p) => p.metadata.labels?.[L.sandbox] === sandboxId);
const recordedOn = (sandboxId: string) => sim.listPodObjects().find((p) => podRecords(p as never).has(sandboxId));
const text = (r: any) => r.content.find((c: any) => c.type === 'text')?.text as string;
const image = (r: any) => r.content.find((c: any) => c.type === 'image');
const NO_LEAK = /at \w+ \(|node_modules|\.ts:\d+|127\.191\./;

async function session(id: string): Promise<Client> {
  const a = await mcpAccess(s, id);
  return connect(a.url, a.token);
}

describe('MCP servers of sandboxes on worker pods', () => {
  test('browser: computer-use tools relayed to a shared worker pod; the screenshot as image content', async () => {
    const info = await createSandbox(s, { type: 'browser', start_url: `http://${siteHost}/`, network: { allow: [siteHost] }, viewport: { width: 640, height: 400 } });
    const id = info.sandbox_id as string;
    const pod = recordedOn(id);
    expect(pod?.status?.phase).toBe('Running');
    const c = await session(id);
    try {
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['screenshot', 'click', 'hover', 'drag', 'type', 'key', 'scroll', 'goto', 'navigate', 'tab', 'wait']);
      const shot = await c.callTool({ name: 'screenshot', arguments: {} });
      expect(image(shot).mimeType).toMatch(/^image\/(png|jpeg)$/);
      expect(Buffer.from(image(shot).data, 'base64').length).toBeGreaterThan(500);
      const { width } = (shot.structuredContent as any).screenshot;
      const scale = width / 640;
      const clicked = await c.callTool({ name: 'click', arguments: { x: 100 * scale, y: 100 * scale } });
      expect(JSON.parse(text(clicked)).title).toBe('clicked');
      const typed = await c.callTool({ name: 'type', arguments: { text: 'pod', x: 100 * scale, y: 270 * scale } });
      expect(JSON.parse(text(typed)).title).toBe('typed:pod');
      const nav = await c.callTool({ name: 'goto', arguments: { url: `http://${siteHost}/two` } });
      expect(JSON.parse(text(nav)).title).toBe('two');
      // The network rules are the worker's: a host outside the allow-list is an action error; Grove's limits hold.
      expect((await c.callTool({ name: 'goto', arguments: { url: 'http://127.0.0.2:9/' } })).isError).toBe(true);
      const far = await c.callTool({ name: 'scroll', arguments: { direction: 'down', amount: 10_000 } });
      expect([far.isError, text(far).includes('invalid_arguments')]).toEqual([true, true]);
      // Every action is a step of the sandbox, through the orchestrator's step path.
      expect((await api(s, 'GET', `/sandboxes/${id}`)).steps).toBeGreaterThanOrEqual(3);
    } finally {
      await c.close();
    }
    await api(s, 'DELETE', `/sandboxes/${id}`);
  }, 180_000);

  test('shell: exec, files and patches on a pod of its own; path tricks refused by the worker', async () => {
    const info = await createSandbox(s, { type: 'shell' });
    const id = info.sandbox_id as string;
    expect(podOf(id)).toBeDefined();
    const c = await session(id);
    try {
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['exec', 'read_file', 'write_file', 'list_files', 'apply_patch']);
      const e = await c.callTool({ name: 'exec', arguments: { command: 'echo out; echo err >&2; exit 3' } });
      expect(e.structuredContent).toMatchObject({ exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
      expect(await c.callTool({ name: 'write_file', arguments: { path: 'a/b.txt', content: 'one\ntwo\n' } })).toMatchObject({ structuredContent: { path: '/workspace/a/b.txt', size: 8 } });
      expect(text(await c.callTool({ name: 'list_files', arguments: { path: 'a' } }))).toContain('b.txt');
      const patch = '--- a/a/b.txt\n+++ b/a/b.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n';
      expect((await c.callTool({ name: 'apply_patch', arguments: { patch } })).isError).toBeFalsy();
      expect(text(await c.callTool({ name: 'read_file', arguments: { path: 'a/b.txt' } }))).toBe('one\nthree\n');
      // The file really is on the pod: the shell there reads it.
      expect((await c.callTool({ name: 'exec', arguments: { command: 'cat /workspace/a/b.txt' } })).structuredContent).toMatchObject({ stdout: 'one\nthree\n' });
      for (const p of ['../etc/passwd', '/etc/passwd', '/workspace/../etc/passwd', 'a\0b']) {
        const r = await c.callTool({ name: 'read_file', arguments: { path: p } });
        expect(r.isError, p).toBe(true);
        expect(text(r), p).toMatch(/path_not_allowed|invalid_arguments|not_found/);
        expect(text(r), p).not.toContain('root:x:0:0');
      }
      // Fault: the worker killed under the session: a tool error with a stable code, never the pod's address.
      kubelet.kill(podOf(id)!.metadata.name);
      const lost = await until(async () => {
        const r = await c.callTool({ name: 'exec', arguments: { command: 'true' } }).catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
        return r.isError ? r : null;
      }, 'a call on the dead pod to fail', 60_000);
      expect(text(lost)).toMatch(/worker_lost|sandbox_closed|sandbox_not_found/);
      expect(text(lost)).not.toMatch(NO_LEAK);
    } finally {
      await c.close().catch(() => undefined);
    }
    await fetch(`${s.url}/sandboxes/${id}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
    await until(() => !podOf(id), 'the shell pod to be deleted', 60_000);
  }, 180_000);

  test('claw: a task\'s tools on its own pod, audited as mcp by the worker, graded by the orchestrator; the app token opens it too', async () => {
    const task = builtinTask('hand-triage-urgent')!;
    const info = await createSandbox(s, { type: 'claw', task_id: task.id });
    const id = info.sandbox_id as string;
    expect(podOf(id)).toBeDefined();
    const c = await session(id);
    let names: string[] = [];
    try {
      names = (await c.listTools()).tools.map((t) => t.name);
      const rest = (await api(s, 'GET', `/sandboxes/${id}/claw/tools`)).tools.map((t: any) => t.function.name);
      expect(names).toEqual(rest);
      for (const st of task.solution!) expect((await c.callTool({ name: st.tool, arguments: st.args })).isError, st.tool).toBeFalsy();
      const missing = await c.callTool({ name: 'no_such_tool', arguments: {} });
      expect([missing.isError, text(missing).includes('unknown_tool')]).toEqual([true, true]);
    } finally {
      await c.close();
    }
    const audit = (await api(s, 'GET', `/sandboxes/${id}/claw/audit`)).entries as { tool: string; actor: string }[];
    expect(audit.map((e) => [e.tool, e.actor])).toEqual(task.solution!.map((st) => [st.tool, 'mcp']));
    expect(await api(s, 'POST', `/sandboxes/${id}/claw/grade`, { answer: task.answer })).toMatchObject({ passed: true, score: 1 });
    // The sandbox's own app token (what a harness beside it holds) opens its MCP server here too.
    const appToken = info.claw.token as string;
    const viaApp = await connect(`${s.url}/sandboxes/${id}/mcp`, appToken);
    expect((await viaApp.listTools()).tools.map((t) => t.name)).toEqual(names);
    await viaApp.close();
    await api(s, 'DELETE', `/sandboxes/${id}`);
    await until(() => !podOf(id), 'the claw pod to be deleted', 60_000);
  }, 180_000);

  test('attacker: tokens, ids, sessions and frames answer stable codes; nothing reaches a worker unchecked', async () => {
    const a = await createSandbox(s, { type: 'claw', world_seed: 1 });
    const b = await createSandbox(s, { type: 'claw', world_seed: 2 });
    const access = await mcpAccess(s, a.sandbox_id);
    const other = await mcpAccess(s, b.sandbox_id);
    const url = access.url;
    const cases: [string, Awaited<ReturnType<typeof rawPost>>, number, string][] = [
      ['no token', await rawPost(url, INIT), 401, 'unauthorized'],
      ['wrong token', await rawPost(url, INIT, { authorization: 'Bearer gmcp_nope' }), 403, 'forbidden'],
      ["another sandbox's token", await rawPost(url, INIT, { authorization: `Bearer ${other.token}` }), 403, 'forbidden'],
      ["Grove's API key", await rawPost(url, INIT, { authorization: `Bearer ${KEY}` }), 403, 'forbidden'],
      ['unknown session id', await rawPost(url, INIT.replace('"initialize"', '"tools/list"'), { authorization: `Bearer ${access.token}`, 'mcp-session-id': 'no-such-session' }), 404, 'session_not_found'],
      ['not JSON', await rawPost(url, '{"jsonrpc":', { authorization: `Bearer ${access.token}` }), 400, 'invalid_request'],
      ['no session, not initialize', await rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { authorization: `Bearer ${access.token}` }), 400, 'invalid_request'],
      ['an over-long id', await rawPost(`${s.url}/sandboxes/${'x'.repeat(300)}/mcp`, INIT, { authorization: `Bearer ${access.token}` }), 400, 'invalid_request'],
    ];
    for (const [what, r, status, code] of cases) {
      expect([what, r.status, r.json?.error?.data?.code]).toEqual([what, status, code]);
      expect(r.text, what).not.toMatch(NO_LEAK);
    }
    // A session of sandbox b is not reachable on a's endpoint.
    const cb = await connect(other.url, other.token);
    const sid = (cb as unknown as { transport?: { sessionId?: string } }).transport?.sessionId;
    expect(sid).toBeTruthy();
    const cross = await rawPost(url, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', { authorization: `Bearer ${access.token}`, 'mcp-session-id': sid! });
    expect([cross.status, cross.json?.error?.data?.code]).toEqual([404, 'session_not_found']);
    await cb.close();
    // A deleted sandbox's endpoint: its registry code (gone), with its own token.
    await api(s, 'DELETE', `/sandboxes/${a.sandbox_id}`);
    const gone = await rawPost(url, INIT, { authorization: `Bearer ${access.token}` });
    expect([410, 404]).toContain(gone.status);
    expect(['sandbox_closed', 'sandbox_not_found']).toContain(gone.json?.error?.data?.code);
    await api(s, 'DELETE', `/sandboxes/${b.sandbox_id}`);
    await until(() => !podOf(a.sandbox_id) && !podOf(b.sandbox_id), 'the claw pods to be deleted', 60_000);
  }, 180_000);
});
