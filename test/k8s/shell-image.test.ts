// A shell sandbox's `image` as its pod's image (k8s/pod-image.ts), through the orchestrator's REST API against the
// simulated API server with stub workers: the pod runs the image with the worker runtime copied in by an init
// container (validated against the Kubernetes schema), never a warm pod of the template; images the install does
// not list, and strings that are no image reference, are refused before any pod is made.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseK8sConfig } from '../../k8s/config.ts';
import { L } from '../../k8s/labels.ts';
import { RUNTIME_DIR, shellImageRefusal } from '../../k8s/pod-image.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

let sim: KubeSim;
let o: Orchestrator | null = null;

beforeEach(async () => {
  const kubelet = new StubKubelet();
  sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  await sim.start();
});

afterEach(async () => {
  await o?.close();
  o = null;
  await sim.close();
  expect(sim.invalid).toEqual([]);
});

const SWE = 'registry.example/swe/sweb.eval.x86_64.django__django-11099:v1';
const CONFIG = { shellImages: ['registry.example/swe/*', 'registry.example/tools:1'], templates: { s: { type: 'shell' as const, placement: 'pod' as const, warmPool: 1 } } };

describe('shell sandbox image on the pod backend', () => {
  test('the pod runs the image, the worker runtime copied in; the warm pod stays warm', async () => {
    o = await startOrchestrator(sim, CONFIG);
    await until(() => sim.listPodObjects().some((p) => p.metadata.labels[L.state] === 'warm' && p.status?.phase === 'Running'), 'a warm shell pod');
    const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'shell', image: SWE } });
    expect(res.statusCode).toBe(201);
    const id = res.json().sandbox_id as string;
    const info = (await o.app.inject({ method: 'GET', url: `/sandboxes/${id}/wait?timeout=30` })).json();
    expect(info.status).toBe('ready');
    const [pod] = sim.listPodObjects().filter((p) => p.metadata.labels[L.sandbox] === id);
    validateK8sObject(pod);
    const [c] = pod.spec.containers;
    expect(c.image).toBe(SWE);
    expect(c.command).toEqual([`${RUNTIME_DIR}/node`, `${RUNTIME_DIR}/grove/bin/grove.mjs`]);
    expect(c.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(pod.spec.initContainers[0]).toMatchObject({ name: 'grove-runtime', image: parseK8sConfig({}).workerImage });
    // SWE-bench's /testbed (root's in their images) copied by the image itself, as the pod's user, into an emptyDir
    // mounted where it was: the pod's non-root user owns the repository (containers.slow grades an instance so).
    const owned = pod.spec.initContainers[1];
    expect(owned).toMatchObject({ name: 'grove-owned', image: SWE, securityContext: { runAsNonRoot: true, capabilities: { drop: ['ALL'] } } });
    expect(owned.command.slice(-2)).toEqual(['/testbed', '/mnt/grove-owned-0']);
    expect(owned.volumeMounts).toEqual([{ name: 'grove-owned-0', mountPath: '/mnt/grove-owned-0' }]);
    expect(c.volumeMounts).toContainEqual({ name: 'grove-owned-0', mountPath: '/testbed', subPath: 'd' });
    expect(pod.spec.volumes).toContainEqual({ name: 'grove-owned-0', emptyDir: { sizeLimit: '4Gi' } });
    expect(pod.spec.securityContext).toMatchObject({ runAsUser: 10001, runAsNonRoot: true });
    expect(o.backend.stats()).toMatchObject({ k8s_warm_hits: 0, k8s_warm_misses: 1 });
    expect(sim.listPodObjects().filter((p) => p.metadata.labels[L.state] === 'warm')).toHaveLength(1);
    expect((await o.app.inject({ method: 'DELETE', url: `/sandboxes/${id}` })).statusCode).toBe(204);
  });

  test('attacker: unlisted images and strings that are no image reference answer 400 before any pod', async () => {
    o = await startOrchestrator(sim, { ...CONFIG, templates: { s: { type: 'shell', placement: 'pod' } } });
    const creates = () => sim.count('CREATE pods');
    const before = creates();
    for (const image of ['registry.example/other:1', 'registry.example/tools:2', 'registry.example/swe/x --privileged', 'registry.example/swe/x\nEvil: 1', 'registry.example/swe/../../x', 'REGISTRY.example/swe/x', '-v/:/host']) {
      const res = await o.app.inject({ method: 'POST', url: '/sandboxes', payload: { type: 'shell', image } });
      expect(res.statusCode, image).toBe(400);
      expect(res.json().error.code).toBe('not_supported_on_backend');
    }
    expect(creates()).toBe(before);
    expect(shellImageRefusal({ shellImages: [] }, SWE)).toMatch(/not enabled/);
    expect(shellImageRefusal({ shellImages: ['registry.example/tools:1'] }, 'registry.example/tools:1')).toBeNull();
    expect(shellImageRefusal({ shellImages: ['docker.io/swebench/*'] }, `docker.io/swebench/sweb.eval.x86_64.astropy__astropy-12907@sha256:${'a'.repeat(64)}`)).toBeNull();
    // The owned folders are the operator's config, checked at load: plain absolute paths only (they reach a shell's argv).
    for (const bad of ['testbed', '/testbed/../etc', '/a b', '/x;rm -rf /', '/$(id)', '/', '/./x']) {
      expect(() => parseK8sConfig({ shellImageOwnedPaths: [bad] }), bad).toThrow(/shellImageOwnedPaths/);
    }
    expect(parseK8sConfig({ shellImageOwnedPaths: ['/testbed', '/opt/miniconda3/envs'] }).shellImageOwnedPaths).toHaveLength(2);
  });
});
