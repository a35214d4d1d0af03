// Recording options and step-route format handling at the edge (no browser): replay_har confinement to the
// recordings directory, record_har needing record, format aliases, som_overlay in the wire schemas.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObservationQuery, StepRequest } from '../../protocol/api.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { episodeDirFor } from '../../server/recording.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

const KEY = 'test-key-0123456789';
const auth = { 'x-api-key': KEY };
let app: FastifyInstance;
let root: string;
let recordings: string;
let outsideHar: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'grove-rec-fast-'));
  recordings = path.join(root, 'recordings');
  mkdirSync(path.join(recordings, 'sb_old'), { recursive: true });
  writeFileSync(path.join(recordings, 'sb_old', 'network.har'), '{"log":{"entries":[]}}');
  outsideHar = path.join(root, 'secret.har');
  writeFileSync(outsideHar, '{"log":{"entries":[]}}');
  symlinkSync(outsideHar, path.join(recordings, 'link.har'));
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir: root, recordingsDir: recordings } });
  app = await buildApp({ config, backend: new MemoryBackend() });
});

afterAll(async () => {
  await app?.close();
  rmSync(root, { recursive: true, force: true });
});

const create = (extra: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/sandboxes', headers: auth, payload: { type: 'browser', ...extra } });

describe('replay_har / record_har at create', () => {
  it.each([
    ['an absolute path outside', () => outsideHar],
    ['a relative path climbing out', () => '../secret.har'],
    ['a symlink inside pointing outside', () => 'link.har'],
    ['a missing file inside', () => 'sb_old/nope.har'],
    ['the recordings directory itself', () => recordings],
  ])('rejects %s with 400 invalid_request', async (_what, p) => {
    const res = await create({ replay_har: p() });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    expect(res.json().error.message).toMatch(/replay_har/);
  });

  it('accepts a HAR inside the recordings directory (relative or absolute)', async () => {
    // The memory backend has no browsers: passing the HAR check is what gets the request that far.
    for (const p of ['sb_old/network.har', path.join(recordings, 'sb_old', 'network.har')]) {
      const res = await create({ replay_har: p });
      expect(res.json().error.code, res.body).toBe('unsupported_sandbox_type');
    }
  });

  it('record_har without record → 400', async () => {
    const res = await create({ record_har: true });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('record_har needs record: true');
  });

  it('episode directories are named by sandbox id and never escape', () => {
    expect(episodeDirFor('/data/rec', 'sb_0123abcd')).toBe('/data/rec/sb_0123abcd');
    expect(() => episodeDirFor('/data/rec', '../etc')).toThrow(/cannot name a recording directory/);
  });
});

describe('step route formats', () => {
  it('an alias format name passes the format check (the unknown sandbox is what fails)', async () => {
    for (const format of ['UI-TARS', 'Qwen3-VL', 'openai-cua', 'som']) {
      const res = await app.inject({
        method: 'POST',
        url: '/sandboxes/sb_missing/step',
        headers: auth,
        payload: { model_output: 'click(start_box="(1,2)")', format },
      });
      expect(res.statusCode, format).toBe(404);
      expect(res.json().error.code).toBe('sandbox_not_found');
    }
    const bad = await app.inject({
      method: 'POST',
      url: '/sandboxes/sb_missing/step',
      headers: auth,
      payload: { model_output: 'x', format: 'ui-tars-9000' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('unknown_format');
  });

  it('som_overlay is part of the step body and the observation query', () => {
    expect(StepRequest.parse({ action: { action: 'wait', ms: 10 }, som: true, som_overlay: true }).som_overlay).toBe(true);
    expect(ObservationQuery.parse({ som_overlay: '1' }).som_overlay).toBe(true);
    expect(() => StepRequest.parse({ action: { action: 'wait', ms: 10 }, som_overlay: 'yes' })).toThrow();
  });
});
