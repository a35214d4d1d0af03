// Recordings on storage every replica reads (k8s config `recordings`: one ReadWriteMany volume mounted at every
// orchestrator's recordings directory), against the simulated API server with stub workers and two replicas with
// their own data directories and one recordings directory: an episode whose steps alternate between replica A and
// B is one recording (every step, in order, with frames and diffs), ended by A, readable by any replica (or `grove
// view`); steps through both at the same instant get each number once (claimed on storage). The manifests mount
// the volume (a PersistentVolumeClaim, schema-validated).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseK8sConfig } from '../../k8s/config.ts';
import { RECORDINGS_DIR, renderManifests } from '../../k8s/manifests.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';
import { readEpisode } from '../../recording/reader.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

let sim: KubeSim;
let root: string;
const orchestrators: Orchestrator[] = [];

beforeEach(async () => {
  const kubelet = new StubKubelet();
  sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  await sim.start();
  root = mkdtempSync(path.join(tmpdir(), 'grove-k8s-rec-'));
});

afterEach(async () => {
  for (const o of orchestrators.splice(0)) await o.close();
  await sim.close();
  rmSync(root, { recursive: true, force: true });
  expect(sim.invalid).toEqual([]);
});

const POD = { templates: { b: { type: 'browser' as const, placement: 'pod' as const } } };

describe('recordings shared by the replicas', () => {
  async function recordedOn(o: Orchestrator): Promise<string> {
    const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', record: true } });
    expect(res.statusCode).toBe(201);
    const id = res.json().sandbox_id as string;
    const ready = (await o.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json();
    expect(ready.error).toBeNull();
    expect(ready.status).toBe('ready');
    return id;
  }
  const step = (o: Orchestrator, id: string, action: Record<string, unknown>) =>
    o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action } });

  test('steps alternating between A and B make one episode: numbered in order, every frame and diff, ended by the last step', async () => {
    const shared = path.join(root, 'recordings');
    const grove = (name: string) => ({ dataDir: path.join(root, name), recordingsDir: shared });
    const a = await startOrchestrator(sim, POD, 'orch-a', grove('a'));
    orchestrators.push(a);
    const b = await startOrchestrator(sim, POD, 'orch-b', grove('b'));
    orchestrators.push(b);
    const id = await recordedOn(a);
    for (const o of [a, b, a]) expect((await step(o, id, { action: 'wait', ms: 1 })).statusCode).toBe(200);
    // The terminal step through B (not the replica that records frame 0 and ends the episode).
    const last = await step(b, id, { action: 'answer', text: 'done' });
    expect([last.statusCode, last.json().done]).toEqual([200, true]);
    expect((await a.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    const episode = await until(async () => {
      const v = await readEpisode(path.join(shared, id)).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'the episode closed in the shared directory');
    expect(episode.steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
    expect(episode.steps.map((s) => s.actions.map((x) => x.action.action))).toEqual([['wait'], ['wait'], ['wait'], ['answer']]);
    // Each step's frame, and its diff against the frame before it, whichever replica wrote the one before.
    for (const s of episode.steps) {
      expect(s.frame).toBe(`frames/000${s.step}.png`);
      expect(existsSync(path.join(shared, id, s.frame!))).toBe(true);
      expect(s.diff?.changed_share).toBe(0);
    }
    expect(episode.meta).toMatchObject({ status: 'complete', steps: 4, answer: 'done', termination: { reason: 'task_completed' } });
    expect(existsSync(path.join(shared, id, '.writer.json'))).toBe(false);
  });

  test('steps through A and B at the same instant: every step number once, the episode whole and in order at the end', async () => {
    const shared = path.join(root, 'recordings');
    const a = await startOrchestrator(sim, POD, 'orch-a', { dataDir: path.join(root, 'a'), recordingsDir: shared });
    orchestrators.push(a);
    const b = await startOrchestrator(sim, POD, 'orch-b', { dataDir: path.join(root, 'b'), recordingsDir: shared });
    orchestrators.push(b);
    const id = await recordedOn(a);
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => step(i % 2 ? b : a, id, { action: 'wait', ms: 1 })));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(16).fill(200));
    // Deleted through B this time: whichever replica closes it first ends the episode, the other only its files.
    expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    const episode = await until(async () => {
      const v = await readEpisode(path.join(shared, id)).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'the episode closed in the shared directory');
    const all = Array.from({ length: 16 }, (_, i) => i + 1);
    expect(episode.steps.map((s) => s.step)).toEqual(all);
    expect(new Set(episode.steps.map((s) => s.frame)).size).toBe(16);
    expect(readFileSync(path.join(shared, id, 'steps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step)).toEqual(all);
    expect(episode.meta).toMatchObject({ status: 'complete', steps: 16, termination: { reason: 'aborted' } });
    expect(existsSync(path.join(shared, id, '.steps'))).toBe(false);
  });

  test('deleted through B: closed by A, the replica that created it; a replica on a directory of its own records nothing and serves on', async () => {
    const a = await startOrchestrator(sim, POD, 'orch-a', { dataDir: path.join(root, 'a'), recordingsDir: path.join(root, 'rec-a') });
    orchestrators.push(a);
    const b = await startOrchestrator(sim, POD, 'orch-b', { dataDir: path.join(root, 'b'), recordingsDir: path.join(root, 'rec-b') });
    orchestrators.push(b);
    const id = await recordedOn(a);
    expect((await step(a, id, { action: 'wait', ms: 1 })).statusCode).toBe(200);
    // B cannot see A's episode: its step is served, not recorded (a warning says to mount one volume).
    expect((await step(b, id, { action: 'wait', ms: 1 })).statusCode).toBe(200);
    expect((await step(a, id, { action: 'wait', ms: 1 })).statusCode).toBe(200);
    expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    const episode = await until(async () => {
      const v = await readEpisode(path.join(root, 'rec-a', id)).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'the episode closed by A');
    expect(episode.steps.map((s) => s.step)).toEqual([1, 2]);
    expect(episode.meta.termination?.reason).toBe('aborted');
    expect(existsSync(path.join(root, 'rec-b', id))).toBe(false);
  });

  test('the manifests mount one ReadWriteMany volume at every replica\'s recordings directory', () => {
    const ms = renderManifests(parseK8sConfig({ recordings: { claimName: 'grove-recordings', size: '50Gi', storageClassName: 'azurefile' } }));
    for (const m of ms) validateK8sObject(m as never);
    const pvc = ms.find((m) => m.kind === 'PersistentVolumeClaim') as Record<string, any>;
    expect(pvc.spec).toEqual({ accessModes: ['ReadWriteMany'], resources: { requests: { storage: '50Gi' } }, storageClassName: 'azurefile' });
    const dep = ms.find((m) => m.kind === 'Deployment') as Record<string, any>;
    const pod = dep.spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'recordings', persistentVolumeClaim: { claimName: 'grove-recordings' } });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'recordings', mountPath: RECORDINGS_DIR });
    expect(pod.containers[0].env).toContainEqual({ name: 'GROVE_RECORDINGS_DIR', value: RECORDINGS_DIR });
    expect(pod.securityContext.fsGroup).toBe(10001);
    // A claim the operator made: mounted, not rendered.
    expect(renderManifests(parseK8sConfig({ recordings: { claimName: 'theirs' } })).some((m) => m.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(() => parseK8sConfig({ recordings: { claimName: '../etc' } })).toThrow(/recordings\.claimName/);
  });
});
