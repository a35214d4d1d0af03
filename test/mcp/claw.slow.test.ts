// A Claw sandbox's MCP server, driven by the MCP SDK's own client (Client + StreamableHTTPClientTransport) over
// real loopback HTTP: the same tools as the REST route, calls that change the apps' state and land in the audit
// log (actor "mcp"), app errors as tool errors, and the task graded afterwards as a REST run is.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTask } from '../../claw-env/tasks/index.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { api, connect, createSandbox, mcpAccess, type Served } from './support.ts';

const KEY = 'mcp-claw-test-key-0123456789';
let app: FastifyInstance;
let s: Served;

beforeAll(async () => {
  app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY } }), environments: {} });
  s = { url: await app.listen({ host: '127.0.0.1', port: 0 }), key: KEY };
});
afterAll(async () => {
  await app?.close();
});

describe('Claw tools over MCP (SDK client)', () => {
  it('lists the REST route\'s tools, runs the task\'s solution, and the task grades as solved', async () => {
    const task = builtinTask('hand-trap-phish-cleanup')!;
    const info = await createSandbox(s, { type: 'claw', task_id: task.id });
    const id = info.sandbox_id;
    const access = await mcpAccess(s, id);
    expect(access.server).toBe('grove-claw');
    const client = await connect(access.url, access.token);
    try {
      expect(client.getServerVersion()?.name).toBe('grove-claw');
      const { tools } = await client.listTools();
      const rest = (await api(s, 'GET', `/sandboxes/${id}/claw/tools`)).tools;
      expect(tools.map((t) => t.name)).toEqual(rest.map((t: any) => t.function.name));
      expect(tools.find((t) => t.name === 'mail_move')?.inputSchema).toEqual(rest.find((t: any) => t.function.name === 'mail_move').function.parameters);

      const bad = await client.callTool({ name: 'mail_move', arguments: { message_id: 'nope', folder: 'archive' } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as any)[0].text)).toMatchObject({ status: 404, error: { code: 'not_found' } });
      for (const step of task.solution!) {
        const r = await client.callTool({ name: step.tool, arguments: step.args });
        expect(r.isError, JSON.stringify(r)).toBeFalsy();
      }
      const unknown = await client.callTool({ name: 'rm_rf', arguments: {} });
      expect(unknown).toMatchObject({ isError: true });
      expect((unknown.content as any)[0].text).toContain('unknown_tool');

      const audit = (await api(s, 'GET', `/sandboxes/${id}/claw/audit`)).entries;
      expect(audit.map((e: any) => [e.tool, e.status, e.actor])).toEqual([['mail_move', 404, 'mcp'], ...task.solution!.map((x) => [x.tool, 200, 'mcp'])]);
      const g = await api(s, 'POST', `/sandboxes/${id}/claw/grade`, { answer: 'done' });
      expect(g).toMatchObject({ passed: true });
    } finally {
      await client.close();
      await api(s, 'DELETE', `/sandboxes/${id}`);
    }
  });

  it('the Claw sandbox\'s own app token opens its MCP server too', async () => {
    const info = await createSandbox(s, { type: 'claw', world_seed: 3, apps: ['todo'] });
    const client = await connect(`${s.url}/sandboxes/${info.sandbox_id}/mcp`, info.claw.token);
    try {
      const { tools } = await client.listTools();
      expect(tools.every((t) => t.name.startsWith('todo_'))).toBe(true);
    } finally {
      await client.close();
      await api(s, 'DELETE', `/sandboxes/${info.sandbox_id}`);
    }
  });
});
