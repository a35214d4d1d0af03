// Set-of-Mark state is the browser's, not a replica's: model output stepped through a replica that never served an
// observation of the sandbox is parsed against the worker's parse context (GET /worker/sandboxes/{id}/parse-context,
// server/worker-routes.ts), here the stub worker's one SoM element (label 3). Simulated API server, two replicas.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { registerWorkerRoutes } from '../../server/worker-routes.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { startOrchestrator, type Orchestrator } from './harness.ts';

let sim: KubeSim;
const orchestrators: Orchestrator[] = [];

beforeEach(async () => {
  const kubelet = new StubKubelet();
  sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  await sim.start();
});

afterEach(async () => {
  for (const o of orchestrators.splice(0)) await o.close();
  await sim.close();
});

const POD = { templates: { b: { type: 'browser' as const, placement: 'pod' as const } } };

describe('parse context across replicas', () => {
  test('a WebVoyager "Scroll [n]" through B, which never observed the sandbox, finds element n on the worker', async () => {
    const a = await startOrchestrator(sim, POD, 'orch-a');
    orchestrators.push(a);
    const b = await startOrchestrator(sim, POD, 'orch-b');
    orchestrators.push(b);
    const res = await a.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser' } });
    const id = res.json().sandbox_id as string;
    expect((await a.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json().status).toBe('ready');
    const say = (o: Orchestrator, text: string) =>
      o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { model_output: `Thought: look further.\nAction: ${text}`, format: 'webvoyager' } });
    const found = await say(b, 'Scroll [3]; down');
    expect(found.statusCode).toBe(200);
    expect(found.json().parse).toEqual({ ok: true, format: 'webvoyager' });
    const missing = (await say(b, 'Scroll [4]; down')).json();
    expect(missing.parse.ok).toBe(false);
    expect(missing.parse.error).toMatch(/no element with label 4/);
    expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
  });

  test('attacker: the worker route needs the token and answers only for its own sandboxes', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-parse-context-'));
    const config = loadConfig({ env: {}, flags: { apiKey: 'worker-token-0123456789', dataDir: dir } });
    const app = await buildApp({ config, environments: {} });
    registerWorkerRoutes(app, config.recordingsDir);
    try {
      expect((await app.inject({ method: 'GET', url: '/worker/sandboxes/sb_x/parse-context' })).statusCode).toBe(401);
      const other = await app.inject({ method: 'GET', url: '/worker/sandboxes/sb_x/parse-context', headers: { 'x-api-key': 'worker-token-0123456789' } });
      expect(other.statusCode).toBe(404);
      expect(other.json().error.code).toBe('sandbox_not_found');
      const odd = await app.inject({ method: 'GET', url: '/worker/sandboxes/..%2F..%2Fetc/parse-context', headers: { 'x-api-key': 'worker-token-0123456789' } });
      expect(odd.statusCode).toBe(404);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
