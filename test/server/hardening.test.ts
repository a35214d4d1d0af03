// Server-side hardening (issue 8, points 3, 8, 9, 10): the no-auth Host guard and startup refusal, create-time
// validation, framework errors through auth and the one error handler, empty JSON bodies accepted.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../protocol/errors.ts';
import { ConfigError, loadConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import { hostAllowedWithoutAuth, isLoopbackBind } from '../../sandbox/host-guard.ts';
import { buildApp } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'test-key-0123456789';
const auth = { 'x-api-key': KEY };
const apps: FastifyInstance[] = [];
let recDir: string;

beforeAll(async () => {
  recDir = await mkdtemp(join(tmpdir(), 'grove-hard-'));
  await writeFile(join(recDir, 'broken.har'), '{"log": ');
  await writeFile(join(recDir, 'notahar.har'), '{"hello": 1}');
});
afterAll(async () => {
  await rm(recDir, { recursive: true, force: true });
});

async function make(flags: Partial<GroveConfigInput> = { apiKey: KEY }) {
  const backend = new MemoryBackend();
  const config = loadConfig({ env: {}, flags: { recordingsDir: recDir, ...flags } });
  const app = await buildApp({ config, backend });
  apps.push(app);
  return { app, backend };
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function expectError(res: LightMyRequestResponse, status: number, code: string): { code: string; message: string } {
  expect(res.statusCode).toBe(status);
  const body = res.json() as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG].status).toBe(status);
  expect(typeof body.error.message).toBe('string');
  expect(res.body).not.toMatch(/at .*\.ts:\d+/); // no stack
  return body.error;
}

describe('framework errors go through auth and the one error handler', () => {
  it('an undecodable URL: 401 without the key, 400 in the error shape with it', async () => {
    const { app } = await make();
    expectError(await app.inject({ method: 'GET', url: '/sandboxes/%ZZ' }), 401, 'unauthorized');
    expectError(await app.inject({ method: 'GET', url: '/sandboxes/%ZZ', headers: { 'x-api-key': 'nope' } }), 403, 'forbidden');
    expectError(await app.inject({ method: 'GET', url: '/sandboxes/%ZZ', headers: auth }), 400, 'invalid_request');
  });

  it('an id over 100 characters: auth first, then a 400 naming the parameter', async () => {
    const { app } = await make();
    const long = `/sandboxes/${'a'.repeat(150)}`;
    expectError(await app.inject({ method: 'GET', url: long }), 401, 'unauthorized');
    const e = expectError(await app.inject({ method: 'GET', url: long, headers: auth }), 400, 'invalid_request');
    expect(e.message).toContain('params.id');
    expectError(await app.inject({ method: 'DELETE', url: `/sandboxes/${'b'.repeat(5000)}`, headers: auth }), 400, 'invalid_request');
  });
});

describe('empty bodies with a JSON content type', () => {
  it('DELETE and heartbeat accept content-type: application/json with no body', async () => {
    const { app } = await make();
    const created = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { sandbox_id: string }).sandbox_id;
    const json = { ...auth, 'content-type': 'application/json' };
    expect((await app.inject({ method: 'POST', url: `/sandboxes/${id}/heartbeat`, headers: json })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: `/sandboxes/${id}/heartbeat`, headers: json, payload: '  ' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `/sandboxes/${id}`, headers: json })).statusCode).toBe(204);
    // Malformed JSON is still a 400 in the error shape.
    expectError(await app.inject({ method: 'POST', url: '/sandboxes', headers: json, payload: '{"type":' }), 400, 'invalid_request');
  });
});

describe('create-time validation', () => {
  const create = async (app: FastifyInstance, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'browser', ...body } });

  it.each([
    [{ timezone: 'Mars/Olympus_Mons' }, 'body.timezone'],
    [{ locale: 'not a locale!' }, 'body.locale'],
    [{ user_agent: 'Mozilla/5.0\r\nX-Evil: 1' }, 'body.user_agent'],
    [{ unknown_option: true }, 'unknown field(s) "unknown_option"'],
    [{ viewport: { width: 800, height: 600, depth: 3 } }, 'body.viewport'],
    [{ network: { allow: [], blok_network: true } }, 'body.network'],
    [{ replay_har: 'broken.har' }, 'replay_har'],
    [{ replay_har: 'notahar.har' }, 'log.entries'],
  ])('%j → 400 naming %s', async (body, field) => {
    const { app, backend } = await make();
    const e = expectError(await create(app, body), 400, 'invalid_request');
    expect(e.message).toContain(field);
    expect(backend.made).toHaveLength(0);
  });

  it('unknown fields on shell and claw creates are 400 too', async () => {
    const { app } = await make();
    for (const type of ['shell', 'claw']) {
      const res = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type, bogus: 1 } });
      expect(expectError(res, 400, 'invalid_request').message).toContain('"bogus"');
    }
  });

  it('valid values pass', async () => {
    const { app } = await make();
    const res = await app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'shell' } });
    expect(res.statusCode).toBe(201);
    const { BrowserCreateOptions } = await import('../../protocol/sandbox.ts');
    expect(BrowserCreateOptions.safeParse({ type: 'browser', timezone: 'Europe/Berlin', locale: 'de-DE', user_agent: 'Grove/1.0 (X11)' }).success).toBe(true);
  });
});

describe('no-auth servers', () => {
  it('refuse a non-loopback host at startup unless explicitly overridden', () => {
    expect(() => loadConfig({ env: {}, flags: { authDisabled: true, host: '0.0.0.0' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, flags: { authDisabled: true, host: '10.1.2.3' } })).toThrow(/unsafe-no-auth-remote/);
    expect(() => loadConfig({ env: { GROVE_AUTH_DISABLED: '1', GROVE_HOST: '0.0.0.0' } })).toThrow(ConfigError);
    expect(loadConfig({ env: {}, flags: { authDisabled: true, host: '127.0.0.1' } }).authDisabled).toBe(true);
    expect(loadConfig({ env: {}, flags: { authDisabled: true, host: '0.0.0.0', unsafeNoAuthRemote: true } }).unsafeNoAuthRemote).toBe(true);
    // With a key any bind address is fine: the key is the guard.
    expect(loadConfig({ env: {}, flags: { apiKey: KEY, host: '0.0.0.0' } }).host).toBe('0.0.0.0');
  });

  it('serve only loopback Host headers when auth is off (DNS-rebinding guard)', async () => {
    const { app } = await make({ authDisabled: true });
    for (const host of ['127.0.0.1:8321', 'localhost:8321', 'localhost', '[::1]:8321', '127.0.0.2']) {
      expect((await app.inject({ method: 'GET', url: '/sandboxes', headers: { host } })).statusCode).toBe(200);
    }
    for (const host of ['evil.example:8321', 'rebind.attacker.test', '127.0.0.1.nip.io', '0.0.0.0:8321']) {
      expectError(await app.inject({ method: 'GET', url: '/sandboxes', headers: { host } }), 403, 'forbidden_host');
    }
    expectError(await app.inject({ method: 'GET', url: '/sandboxes/%ZZ', headers: { host: 'evil.example' } }), 403, 'forbidden_host');
    // /health stays open (load balancers).
    expect((await app.inject({ method: 'GET', url: '/health', headers: { host: 'evil.example' } })).statusCode).toBe(200);
  });

  it('with a key, Host is not checked (workers are reached by pod IP)', async () => {
    const { app } = await make();
    expect((await app.inject({ method: 'GET', url: '/sandboxes', headers: { ...auth, host: '10.244.1.7:8321' } })).statusCode).toBe(200);
  });

  it('host helpers', () => {
    expect(isLoopbackBind('127.0.0.1')).toBe(true);
    expect(isLoopbackBind('[::1]')).toBe(true);
    expect(isLoopbackBind('0.0.0.0')).toBe(false);
    expect(hostAllowedWithoutAuth('10.0.0.5:80', '10.0.0.5')).toBe(true);
    expect(hostAllowedWithoutAuth('10.0.0.6:80', '10.0.0.5')).toBe(false);
    expect(hostAllowedWithoutAuth(undefined, '127.0.0.1')).toBe(false);
  });
});
