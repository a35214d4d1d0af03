// The REST app through fastify's inject(): auth, validation, error mapping, lifecycle, metrics, OpenAPI.
// Sandboxes here come from the in-memory backend (registry-level object, no browser): browser routes are
// exercised with real Chromium in app.slow.test.ts.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { StepRequest } from '../../protocol/api.ts';
import { loadConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import type { Logger } from '../../sandbox/log.ts';
import { buildApp, type BuildAppOptions } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'test-key-0123456789';
const apps: FastifyInstance[] = [];

async function make(flags: Partial<GroveConfigInput> = {}, extra: Partial<BuildAppOptions> = {}) {
  const backend = new MemoryBackend();
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, ...flags } });
  const app = await buildApp({ config, backend, ...extra });
  apps.push(app);
  return { app, backend };
}
const auth = { 'x-api-key': KEY };

afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

describe('auth', () => {
  it('/health needs no key', async () => {
    const { app } = await make();
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', sandboxes: 0 });
  });

  it('401 without a key, 403 with a wrong one of any length, 200 with the right one', async () => {
    const { app } = await make();
    const missing = await app.inject({ method: 'GET', url: '/sandboxes' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ error: { code: 'unauthorized', message: 'Missing API key: send it in the X-API-Key header.' } });
    // Shorter, equal-length and longer keys all take the same hashed comparison path (no length leak, no throw).
    for (const wrong of ['x', KEY.slice(0, -1) + 'X', KEY + 'extra-characters-after-it']) {
      const res = await app.inject({ method: 'GET', url: '/sandboxes', headers: { 'x-api-key': wrong } });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
    expect((await app.inject({ method: 'GET', url: '/sandboxes', headers: auth })).statusCode).toBe(200);
    // Unknown routes do not reveal themselves to unauthenticated callers.
    expect((await app.inject({ method: 'GET', url: '/nope' })).statusCode).toBe(401);
  });

  it('auth can be disabled explicitly', async () => {
    const { app } = await make({ apiKey: undefined, authDisabled: true });
    expect((await app.inject({ method: 'GET', url: '/sandboxes' })).statusCode).toBe(200);
  });
});

describe('validation and errors', () => {
  it('bad JSON → 400 invalid_request', async () => {
    const { app } = await make();
    const res = await app.inject({
      method: 'POST',
      url: '/sandboxes',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"type": "browser",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    expect(res.json().error.message).toMatch(/JSON/);
  });

  it('wrong types → 400 with a message naming the field', async () => {
    const { app } = await make();
    const res = await app.inject({
      method: 'POST',
      url: '/sandboxes',
      headers: auth,
      payload: { type: 'browser', viewport: { width: 'wide', height: 100 } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: {
        code: 'invalid_request',
        message:
          'Invalid body: body.viewport.width: Invalid input: expected number, received string; ' +
          'body.viewport.height: Too small: expected number to be >=200',
      },
    });
  });

  it('an invalid step action → 400 invalid_action naming the field, before any sandbox lookup', async () => {
    const { app } = await make();
    const res = await app.inject({
      method: 'POST',
      url: '/sandboxes/sb_0000/step',
      headers: auth,
      payload: { action: { action: 'click', x: 'ten' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      code: 'invalid_action',
      message: 'Invalid body: body.action.x: Invalid input: expected number, received string; body.action.y: required (number)',
    });
    const both = await app.inject({
      method: 'POST',
      url: '/sandboxes/sb_0000/step',
      headers: auth,
      payload: { action: { action: 'back' }, actions: [{ action: 'reload' }] },
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.code).toBe('invalid_request');
    expect(both.json().error.message).toContain('give exactly one of "action", "actions" or "model_output" (got action and actions)');
  });

  it('model_output with an unknown format → 400 unknown_format', async () => {
    const { app } = await make();
    const res = await app.inject({
      method: 'POST',
      url: '/sandboxes/sb_0000/step',
      headers: auth,
      payload: { model_output: 'click(1,2)', format: 'no-such-format' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('unknown_format');
    expect(res.json().error.message).toContain('"no-such-format"');
  });

  it('unknown sandbox → 404 sandbox_not_found; unknown route → 404 not_found', async () => {
    const { app } = await make();
    for (const [method, url] of [
      ['GET', '/sandboxes/sb_missing'],
      ['GET', '/sandboxes/sb_missing/observation'],
      ['DELETE', '/sandboxes/sb_missing'],
      ['POST', '/sandboxes/sb_missing/heartbeat'],
    ] as const) {
      const res = await app.inject({ method, url, headers: auth });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('sandbox_not_found');
    }
    const step = await app.inject({ method: 'POST', url: '/sandboxes/sb_missing/step', headers: auth, payload: { action: { action: 'back' } } });
    expect(step.json().error.code).toBe('sandbox_not_found');
    const route = await app.inject({ method: 'GET', url: '/nope?x=1', headers: auth });
    expect(route.statusCode).toBe(404);
    expect(route.json()).toEqual({ error: { code: 'not_found', message: 'No route GET /nope.' } });
  });

  it('too large a body → 413 payload_too_large', async () => {
    const { app } = await make({ bodyLimit: 2048 });
    const res = await app.inject({
      method: 'POST',
      url: '/sandboxes',
      headers: auth,
      payload: { type: 'browser', start_url: 'http://x/' + 'a'.repeat(4000) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
  });

  it('an internal error answers a generic 500 and logs the stack, never sends it', async () => {
    const logged: unknown[] = [];
    const log: Logger = { debug() {}, info() {}, warn() {}, error: (o) => logged.push(o) };
    const { app, backend } = await make({}, { log });
    backend.statsError = new TypeError('secret detail: /srv/grove/internal/path');
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'internal_error', message: 'Internal Server Error' } });
    expect(res.body).not.toMatch(/secret|TypeError|\bat /);
    expect(logged).toHaveLength(1);
    expect(String((logged[0] as { stack: string }).stack)).toMatch(/TypeError: secret detail[\s\S]*\bat /);
  });
});

describe('sandbox lifecycle over HTTP', () => {
  it('shell sandboxes are unsupported on a server without a shell environment', async () => {
    const config = loadConfig({ env: {}, flags: { apiKey: KEY } });
    const app = await buildApp({ config, environments: {} });
    apps.push(app);
    const res = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('unsupported_sandbox_type');
  });

  it('create → wait → get → heartbeat → list → delete (idempotent) → closed', async () => {
    const { app, backend } = await make();
    const created = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell', labels: { a: 'b' } } });
    expect(created.statusCode).toBe(201);
    const id = created.json().sandbox_id as string;
    expect(created.json()).toMatchObject({ type: 'shell', labels: { a: 'b' }, steps: 0, error: null });
    const waited = await app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=5`, headers: auth });
    expect(waited.json().status).toBe('ready');
    expect((await app.inject({ method: 'GET', url: `/sandboxes/${id}`, headers: auth })).json().sandbox_id).toBe(id);
    expect((await app.inject({ method: 'POST', url: `/sandboxes/${id}/heartbeat`, headers: auth })).statusCode).toBe(200);
    const list = await app.inject({ method: 'GET', url: '/sandboxes', headers: auth });
    expect(list.json().sandboxes.map((s: { sandbox_id: string }) => s.sandbox_id)).toEqual([id]);
    // A browser route on a shell sandbox.
    const step = await app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, headers: auth, payload: { action: { action: 'back' } } });
    expect(step.statusCode).toBe(409);
    expect(step.json().error.code).toBe('wrong_sandbox_type');
    expect((await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth })).statusCode).toBe(204);
    expect((await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth })).statusCode).toBe(204);
    expect(backend.made[0].closeCalls).toBe(1);
    expect((await app.inject({ method: 'GET', url: `/sandboxes/${id}`, headers: auth })).json().status).toBe('closed');
    const gone = await app.inject({ method: 'POST', url: `/sandboxes/${id}/heartbeat`, headers: auth });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.code).toBe('sandbox_closed');
    expect((await app.inject({ method: 'GET', url: '/sandboxes/x/wait?timeout=abc', headers: auth })).json().error.code).toBe('invalid_request');
  });

  it('over the limit → 503 capacity_exhausted with Retry-After', async () => {
    const { app } = await make({ maxSandboxes: 1 });
    expect((await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } })).statusCode).toBe(201);
    const res = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('capacity_exhausted');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('closing the app closes every sandbox and the backend', async () => {
    const { app, backend } = await make();
    await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    await app.close();
    expect(backend.made.map((s) => s.closeCalls)).toEqual([1, 1]);
    expect(backend.shutdownCalls).toBe(1);
  });
});

describe('metrics and OpenAPI', () => {
  it('/metrics counts sandboxes, errors and backend stats', async () => {
    const { app } = await make({ maxSandboxes: 1 });
    const id = (await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } })).json().sandbox_id;
    await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    await app.inject({ method: 'GET', url: `/sandboxes/${id}/wait`, headers: auth });
    await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: auth });
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0.0.4/);
    const lines = res.body.split('\n');
    expect(lines).toContain('grove_sandboxes_created_total{type="shell"} 1');
    expect(lines).toContain('grove_sandboxes_deleted_total{type="shell"} 1');
    expect(lines).toContain('grove_errors_total{code="capacity_exhausted"} 1');
    expect(lines).toContain('grove_backend{backend="memory",stat="made"} 1');
    expect(lines).toContain('grove_step_duration_seconds_count 0');
    for (const g of ['grove_process_resident_memory_bytes', 'grove_process_heap_used_bytes', 'grove_process_external_memory_bytes']) {
      const line = lines.find((l) => l.startsWith(`${g} `));
      expect(Number(line?.split(' ')[1])).toBeGreaterThan(0);
    }
  });

  it('serves the committed OpenAPI document, covering every route', async () => {
    const { app } = await make();
    const res = await app.inject({ method: 'GET', url: '/openapi.json', headers: auth });
    expect(res.statusCode).toBe(200);
    const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
    expect(res.json()).toEqual(committed);
    expect(committed.openapi).toBe('3.1.0');
    expect(Object.keys(committed.paths).sort()).toEqual(
      [
        '/health',
        '/metrics',
        '/openapi.json',
        '/sandboxes',
        '/sandboxes/{id}',
        '/sandboxes/{id}/downloads',
        '/sandboxes/{id}/downloads/{download_id}',
        '/sandboxes/{id}/heartbeat',
        '/sandboxes/{id}/observation',
        '/sandboxes/{id}/reset',
        '/sandboxes/{id}/screenshot',
        '/sandboxes/{id}/step',
        '/sandboxes/{id}/wait',
        '/tasks',
        '/sandboxes/{id}/exec',
        '/sandboxes/{id}/jobs/{job_id}',
        '/sandboxes/{id}/files',
        '/sandboxes/{id}/files/list',
        '/sandboxes/{id}/apply_patch',
        '/sandboxes/{id}/claw/tools',
        '/sandboxes/{id}/claw/call',
        '/sandboxes/{id}/claw/state',
        '/sandboxes/{id}/claw/audit',
        '/sandboxes/{id}/claw/reset',
        '/sandboxes/{id}/claw/grade',
        '/sandboxes/{id}/claw-eval/tools',
        '/sandboxes/{id}/claw-eval/call',
        '/sandboxes/{id}/claw-eval/reply',
        '/sandboxes/{id}/claw-eval/grade',
        '/sandboxes/batch',
        '/sandboxes/{id}/evaluate',
        '/sandboxes/{id}/execute',
        '/sandboxes/{id}/mcp/token',
      ].sort(),
    );
    expect(committed.paths['/health'].get.security).toEqual([]);
    expect(committed.paths['/sandboxes/{id}/step'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/StepRequest',
    });
    // The step body schema in the document accepts what the zod schema accepts.
    expect(StepRequest.safeParse({ action: { action: 'back' } }).success).toBe(true);
  });
});
