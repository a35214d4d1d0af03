// Recordings on storage every replica reads (k8s config `recordings`: one ReadWriteMany volume mounted at every
// orchestrator's recordings directory), against the simulated API server with stub workers and two replicas with
// their own data directories and one recordings directory: an episode recorded through replica A and deleted
// through B is closed there, readable by any replica (or `grove view`). The manifests mount the volume.
import { mkdtempSync, rmSync } from 'node:fs';
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
  test('recorded through A, deleted through B: the episode is closed in the shared directory, readable by every replica', async () => {
    const shared = path.join(root, 'recordings');
    const grove = (name: string) => ({ dataDir: path.join(root, name), recordingsDir: shared });
    const a = await startOrchestrator(sim, POD, 'orch-a', grove('a'));
    orchestrators.push(a);
    const b = await startOrchestrator(sim, POD, 'orch-b', grove('b'));
    orchestrators.push(b);
    const res = await a.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'browser', record: true } });
    expect(res.statusCode).toBe(201);
    const id = res.json().sandbox_id as string;
    const ready = (await a.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json();
    expect(ready.error).toBeNull();
    expect(ready.status).toBe('ready');
    const step = (o: Orchestrator) => o.app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, payload: { action: { action: 'wait', ms: 1 } } });
    expect((await step(a)).statusCode).toBe(200);
    expect((await step(b)).statusCode).toBe(200);
    expect((await b.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
    const episode = await until(async () => {
      const v = await readEpisode(path.join(shared, id)).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'the episode closed in the shared directory');
    // Open: the step through B is not in the episode. The recording hook lives on the replica that created the
    // sandbox (server/recording.ts); an adopted sandbox is served without one (docs/kubernetes.md, "Open").
    expect(episode.steps.map((s) => s.step)).toEqual([1]);
  });

  test('the manifests mount one ReadWriteMany volume at every replica\'s recordings directory', () => {
    const ms = renderManifests(parseK8sConfig({ recordings: { claimName: 'grove-recordings', size: '50Gi', storageClassName: 'azurefile' } }));
    // (The simulated API server's offline schemas hold no PersistentVolumeClaim.)
    for (const m of ms) if (m.kind !== 'PersistentVolumeClaim') validateK8sObject(m as never);
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
