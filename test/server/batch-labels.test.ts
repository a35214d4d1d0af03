// Batch create and the label filter of GET /sandboxes, through inject() with the in-memory backend (shell
// sandboxes: it makes no browsers).
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'test-key-0123456789';
const auth = { 'x-api-key': KEY };
const apps: FastifyInstance[] = [];

async function make(maxSandboxes = 8) {
  const app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY, maxSandboxes } }), backend: new MemoryBackend() });
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const ids = (body: { sandboxes: { sandbox_id: string }[] }) => body.sandboxes.map((s) => s.sandbox_id);

describe('batch create', () => {
  it('creates count copies or one per list entry, answering every id at once', async () => {
    const app = await make();
    const a = await app.inject({ method: 'POST', url: '/sandboxes/batch', headers: auth, payload: { count: 3, sandbox: { type: 'shell', labels: { g: '1' } } } });
    expect(a.statusCode).toBe(201);
    expect(new Set(ids(a.json())).size).toBe(3);
    expect(a.json().sandboxes.every((s: { labels: Record<string, string> }) => s.labels.g === '1')).toBe(true);
    const b = await app.inject({
      method: 'POST',
      url: '/sandboxes/batch',
      headers: auth,
      payload: { sandboxes: [{ type: 'shell', labels: { n: 'a' } }, { type: 'shell', labels: { n: 'b' } }] },
    });
    expect(b.json().sandboxes.map((s: { labels: { n: string } }) => s.labels.n)).toEqual(['a', 'b']);
  });

  it('is all or nothing at the capacity limit (503 with Retry-After, nothing created)', async () => {
    const app = await make(4);
    await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    const res = await app.inject({ method: 'POST', url: '/sandboxes/batch', headers: auth, payload: { count: 4, sandbox: { type: 'shell' } } });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('capacity_exhausted');
    expect(res.headers['retry-after']).toBe('1');
    expect((await app.inject({ method: 'GET', url: '/sandboxes', headers: auth })).json().sandboxes).toHaveLength(1);
    const tooMany = await app.inject({ method: 'POST', url: '/sandboxes/batch', headers: auth, payload: { count: 5, sandbox: { type: 'shell' } } });
    expect(tooMany.statusCode).toBe(400);
  });

  it('rejects a body that is neither count + sandbox nor a list', async () => {
    const app = await make();
    for (const payload of [{ count: 2 }, { sandbox: { type: 'shell' } }, { count: 1, sandbox: { type: 'shell' }, sandboxes: [{ type: 'shell' }] }, {}]) {
      const res = await app.inject({ method: 'POST', url: '/sandboxes/batch', headers: auth, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    }
  });
});

describe('GET /sandboxes?label=k=v', () => {
  it('keeps the sandboxes whose labels match every filter', async () => {
    const app = await make();
    const mk = async (labels: Record<string, string>) =>
      (await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell', labels } })).json().sandbox_id as string;
    const a = await mk({ run: 'r1', role: 'x' });
    const b = await mk({ run: 'r1', role: 'y' });
    await mk({ run: 'r2' });
    const list = async (q: string) => ids((await app.inject({ method: 'GET', url: `/sandboxes${q}`, headers: auth })).json());
    expect(await list('?label=run=r1')).toEqual([a, b]);
    expect(await list('?label=run=r1&label=role=y')).toEqual([b]);
    expect(await list('?label=run%3Dr3')).toEqual([]);
    expect(await list('')).toHaveLength(3);
    // a value may itself contain "="
    const c = await mk({ q: 'a=b' });
    expect(await list('?label=q=a%3Db')).toEqual([c]);
    const bad = await app.inject({ method: 'GET', url: '/sandboxes?label=novalue', headers: auth });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_request');
  });
});

describe('POST /sandboxes/{id}/evaluate', () => {
  it('409 no_task for a sandbox without a task, 404 for an unknown id, 404 task_not_found for an unknown task', async () => {
    const app = await make();
    const id = (await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } })).json().sandbox_id;
    const res = await app.inject({ method: 'POST', url: `/sandboxes/${id}/evaluate`, headers: auth, payload: {} });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('no_task');
    expect((await app.inject({ method: 'POST', url: '/sandboxes/sb_nope/evaluate', headers: auth, payload: {} })).statusCode).toBe(404);
    const unknown = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'browser', task: { suite: 'webvoyager', id: 'x' } } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'task_not_found' });
    expect(unknown.json().error.message).toMatch(/--task-files/);
    const both = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'browser', start_url: 'http://a/', task: { question: 'q', id: 't', suite: 'webvoyager' } } });
    expect(both.statusCode).toBe(400);
  });
});
