// A Claw sandbox reset to another task (POST /sandboxes/{id}/claw/reset {task_id}, issue 35): the sandbox then is
// what a fresh sandbox of that task is (same tools, same state, empty audit, graded against the new task) on the
// same origin; bad resets answer 400/404 with a stable code. And the runner's reuse path (remoteEnv reuse) runs
// tasks back to back in a few sandboxes, every one passing, with no sandbox left after dispose().
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTask } from '../../claw-env/tasks/index.ts';
import { remoteEnv } from '../../runner/claw/env.ts';
import { ScriptedToolPolicy } from '../../runner/claw/policy.ts';
import { runClaw } from '../../runner/claw/run.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';

const KEY = 'claw-test-key-0123456789';
const H = { 'x-api-key': KEY };
let app: FastifyInstance;

const inject = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => app.inject({ method, url, headers: H, ...(payload === undefined ? {} : { payload: payload as object }) });
async function create(taskId: string): Promise<any> {
  const res = await inject('POST', '/sandboxes', { type: 'claw', task_id: taskId });
  expect(res.statusCode, res.body).toBe(201);
  const w = await inject('GET', `/sandboxes/${res.json().sandbox_id}/wait?timeout=10`);
  expect(w.json().status).toBe('ready');
  return w.json();
}
const view = async (id: string) => ({
  tools: (await inject('GET', `/sandboxes/${id}/claw/tools`)).json().tools,
  state: (await inject('GET', `/sandboxes/${id}/claw/state`)).json().state,
  audit: (await inject('GET', `/sandboxes/${id}/claw/audit`)).json().entries,
});

beforeAll(async () => {
  app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY, host: '127.0.0.1', port: 0 } }), environments: {} });
  await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
});

describe('a Claw sandbox reset to another task', () => {
  it('is what a fresh sandbox of that task is, on the same origin, and grades against the new task', async () => {
    const a = builtinTask('hand-triage-urgent')!;
    const b = builtinTask('hand-sched-berlin-overlap')!;
    const info = await create(a.id);
    const id = info.sandbox_id;
    for (const s of a.solution!) await inject('POST', `/sandboxes/${id}/claw/call`, { tool: s.tool, arguments: s.args });
    expect((await view(id)).audit.length).toBeGreaterThan(0);

    const reset = await inject('POST', `/sandboxes/${id}/claw/reset`, { task_id: b.id });
    expect(reset.statusCode, reset.body).toBe(200);
    const fresh = await create(b.id);
    expect(await view(id)).toEqual(await view(fresh.sandbox_id));
    const after = (await inject('GET', `/sandboxes/${id}`)).json();
    expect(after.claw).toMatchObject({ origin: info.claw.origin, token: info.claw.token, task_id: b.id, apps: b.apps });
    for (const s of b.solution!) await inject('POST', `/sandboxes/${id}/claw/call`, { tool: s.tool, arguments: s.args });
    const grade = (await inject('POST', `/sandboxes/${id}/claw/grade`, { answer: '' })).json();
    expect(grade).toMatchObject({ task_id: b.id, passed: true });
    // A plain reset now restores task b's seed, not a's.
    await inject('POST', `/sandboxes/${id}/claw/reset`);
    expect((await view(id)).state).toEqual((await view(fresh.sandbox_id)).state);
  });

  it('answers bad resets with a stable code and leaves the sandbox as it was', async () => {
    const a = builtinTask('hand-triage-urgent')!;
    const id = (await create(a.id)).sandbox_id;
    const before = await view(id);
    for (const [body, status, code] of [
      [{ task_id: 'no-such-task' }, 400, 'invalid_request'],
      [{ task_id: '' }, 400, 'invalid_request'],
      [{ task_id: 'x'.repeat(201) }, 400, 'invalid_request'],
      [{ task_id: '../../etc/passwd' }, 400, 'invalid_request'],
      [{ task_id: a.id, state: { mail: [] } }, 400, 'invalid_request'],
      [{ task_id: 7 }, 400, 'invalid_request'],
    ] as const) {
      const r = await inject('POST', `/sandboxes/${id}/claw/reset`, body);
      expect({ status: r.statusCode, code: r.json().error?.code }, JSON.stringify(body)).toEqual({ status, code });
    }
    expect(await view(id)).toEqual(before);
    const missing = await inject('POST', '/sandboxes/nope/claw/reset', { task_id: a.id });
    expect({ status: missing.statusCode, code: missing.json().error.code }).toEqual({ status: 404, code: 'sandbox_not_found' });
    const noKey = await app.inject({ method: 'POST', url: `/sandboxes/${id}/claw/reset`, payload: { task_id: a.id } });
    expect(noKey.statusCode).toBe(401);
  });

  it('the runner reuses sandboxes across tasks (remoteEnv reuse): every task passes, none is left after dispose', async () => {
    const { port } = app.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const ids = ['hand-triage-urgent', 'hand-triage-label-project', 'hand-triage-newsletters-read', 'hand-sched-berlin-overlap', 'gen-mail_reply-1', 'gen-mail_reply-2'];
    const tasks = ids.map((i) => builtinTask(i)!);
    const before = new Set((await inject('GET', '/sandboxes')).json().sandboxes.map((s: any) => s.sandbox_id));
    const env = remoteEnv(base, KEY, { reuse: true });
    const { report } = await runClaw({ tasks, policy: new ScriptedToolPolicy(), env, trials: 1, concurrency: 2 });
    expect(report.rows.map((r) => [r.task_id, r.passes]).sort()).toEqual(ids.map((i) => [i, 1]).sort());
    const during = (await inject('GET', '/sandboxes')).json().sandboxes.filter((s: any) => !before.has(s.sandbox_id));
    // Two workers: two sandboxes for six tasks.
    expect(during.length).toBe(2);
    await env.dispose();
    const left = (await inject('GET', '/sandboxes')).json().sandboxes.filter((s: any) => !before.has(s.sandbox_id) && s.status !== 'closed');
    expect(left).toEqual([]);
  });
});
