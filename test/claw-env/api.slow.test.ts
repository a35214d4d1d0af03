// Claw sandboxes through Grove's API (app.inject) and through their own origin (real loopback HTTP).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxInfo } from '../../protocol/sandbox.ts';
import { ClawCallResponse } from '../../protocol/claw.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { builtinTask } from '../../claw-env/tasks/index.ts';

const KEY = 'claw-test-key-0123456789';
const H = { 'x-api-key': KEY };
let app: FastifyInstance;

async function create(body: Record<string, unknown>): Promise<any> {
  const res = await app.inject({ method: 'POST', url: '/sandboxes', headers: H, payload: { type: 'claw', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  const w = await app.inject({ method: 'GET', url: `/sandboxes/${res.json().sandbox_id}/wait?timeout=10`, headers: H });
  expect(w.json().status).toBe('ready');
  expect(SandboxInfo.safeParse(w.json()).error).toBeUndefined();
  return w.json();
}
const call = async (id: string, tool: string, args: unknown) => {
  const res = await app.inject({ method: 'POST', url: `/sandboxes/${id}/claw/call`, headers: H, payload: { tool, arguments: args } });
  expect(res.statusCode, res.body).toBe(200);
  expect(ClawCallResponse.strict().safeParse(res.json()).error).toBeUndefined();
  return res.json();
};

beforeAll(async () => {
  app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY } }), environments: {} });
});
afterAll(async () => {
  await app?.close();
});

describe('claw sandboxes through the API', () => {
  it('task sandbox: tools, calls with app errors, state, audit, grade, reset restores the seed exactly', async () => {
    const task = builtinTask('hand-trap-phish-cleanup')!;
    const info = await create({ task_id: task.id });
    expect(info).toMatchObject({ type: 'claw', claw: { apps: ['mail'], task_id: task.id } });
    expect(info.claw.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const id = info.sandbox_id;
    const tools = (await app.inject({ method: 'GET', url: `/sandboxes/${id}/claw/tools`, headers: H })).json().tools;
    expect(tools.map((t: any) => t.function.name)).toContain('mail_move');
    expect(tools.some((t: any) => t.function.name.startsWith('todo_'))).toBe(false);

    const bad = await call(id, 'mail_move', '{"message_id": "nope", "folder": "archive"}');
    expect(bad).toMatchObject({ status: 404, error: { code: 'not_found' }, changes: [], seq: 1 });
    for (const s of task.solution!) {
      const r = await call(id, s.tool, s.args);
      expect(r.status).toBe(200);
      expect(r.changes).toEqual([{ collection: 'mail.messages', id: s.args.message_id, op: 'changed', fields: { folder: ['inbox', 'archive'] } }]);
    }
    const audit = (await app.inject({ method: 'GET', url: `/sandboxes/${id}/claw/audit?since=1`, headers: H })).json().entries;
    expect(audit.map((e: any) => [e.seq, e.tool, e.status, e.actor])).toEqual([
      [2, 'mail_move', 200, 'tool'],
      [3, 'mail_move', 200, 'tool'],
    ]);
    const g = (await app.inject({ method: 'POST', url: `/sandboxes/${id}/claw/grade`, headers: H, payload: { answer: 'done' } })).json();
    expect(g).toMatchObject({ completion: 1, safety: 1, robustness: 1, passed: true });

    const reset = await app.inject({ method: 'POST', url: `/sandboxes/${id}/claw/reset`, headers: H });
    expect(reset.json()).toEqual({ ok: true });
    const state = (await app.inject({ method: 'GET', url: `/sandboxes/${id}/claw/state`, headers: H })).json().state;
    expect(state).toEqual(JSON.parse(JSON.stringify(task.seed)));
    expect((await app.inject({ method: 'GET', url: `/sandboxes/${id}/claw/audit`, headers: H })).json().entries).toEqual([]);
  });

  it('rejects unknown tasks and bad fixtures at create; browser routes refuse claw sandboxes', async () => {
    const r1 = await app.inject({ method: 'POST', url: '/sandboxes', headers: H, payload: { type: 'claw', task_id: 'nope' } });
    expect(r1.statusCode).toBe(400);
    expect(r1.json().error).toEqual({ code: 'invalid_request', message: 'No Claw task "nope"; list them with `grove claw tasks`.' });
    const r2 = await app.inject({ method: 'POST', url: '/sandboxes', headers: H, payload: { type: 'claw', state: { user: {} } } });
    expect(r2.statusCode).toBe(400);
    expect(r2.json().error.message).toMatch(/^state: user\.name/);
    const info = await create({ world_seed: 3 });
    const step = await app.inject({ method: 'POST', url: `/sandboxes/${info.sandbox_id}/step`, headers: H, payload: { action: { action: 'wait', ms: 1 } } });
    expect(step.statusCode).toBe(409);
    expect(step.json().error.code).toBe('wrong_sandbox_type');
  });

  it('its own origin: token required, HTTP statuses of the app, Retry-After on injected 429', async () => {
    const info = await create({ world_seed: 5, apps: ['todo'], faults: { rate_429: 1 } });
    const { origin, token } = info.claw;
    const anon = await fetch(`${origin}/api/tools`);
    expect(anon.status).toBe(401);
    const wrong = await fetch(`${origin}/api/tools`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const tools = await (await fetch(`${origin}/api/tools`, { headers: auth })).json();
    expect(tools.tools.every((t: any) => t.function.name.startsWith('todo_'))).toBe(true);
    const limited = await fetch(`${origin}/api/tools/todo_list`, { method: 'POST', headers: auth, body: '{}' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    const ok = await create({ world_seed: 5, apps: ['todo'] });
    const a2 = { authorization: `Bearer ${ok.claw.token}`, 'content-type': 'application/json' };
    const invalid = await fetch(`${ok.claw.origin}/api/tools/todo_create`, { method: 'POST', headers: a2, body: JSON.stringify({ title: '' }) });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error.code).toBe('invalid_argument');
    const made = await fetch(`${ok.claw.origin}/api/tools/todo_create`, { method: 'POST', headers: a2, body: JSON.stringify({ title: 'via origin' }) });
    expect(made.status).toBe(200);
    // the other sandbox's token does not open this one
    expect((await fetch(`${ok.claw.origin}/api/state`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    const state = await (await fetch(`${ok.claw.origin}/api/state`, { headers: a2 })).json();
    expect(state.state.todos.some((t: any) => t.title === 'via origin')).toBe(true);
    // deleting the sandbox closes its origin
    await app.inject({ method: 'DELETE', url: `/sandboxes/${ok.sandbox_id}`, headers: H });
    await expect(fetch(`${ok.claw.origin}/api/state`, { headers: a2 })).rejects.toThrow();
  });
});
