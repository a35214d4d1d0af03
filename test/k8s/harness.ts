// Test harness: an orchestrator (buildApp + the kubernetes backend) against the simulated API server.
import type { FastifyInstance } from 'fastify';
import { KubernetesBackend } from '../../k8s/backend.ts';
import { parseK8sConfig, type K8sConfigInput } from '../../k8s/config.ts';
import { kubernetesEnvironments } from '../../k8s/environments.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { expect } from 'vitest';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';

export const TOKEN_SECRET = 'test-worker-token-secret-0123456789';

export interface Orchestrator {
  app: FastifyInstance;
  backend: KubernetesBackend;
  close(): Promise<void>;
}

export async function startOrchestrator(sim: KubeSim, k8s: K8sConfigInput, replicaId = 'orch-a', grove: Record<string, unknown> = {}): Promise<Orchestrator> {
  const config = loadConfig({ env: {}, flags: { authDisabled: true, maxSandboxes: 2000, reaperIntervalMs: 200, dataDir: '/tmp/grove-k8s-test', ...grove } });
  const backend = new KubernetesBackend({
    config: parseK8sConfig({ leaseDurationSeconds: 2, reconcileIntervalSeconds: 1, readyTimeoutSeconds: 30, workerPort: 18321, ...k8s }),
    kubeConfig: sim.kubeConfig(),
    replicaId,
    tokenSecret: TOKEN_SECRET,
    defaultTtlSeconds: config.defaultTtlSeconds,
    defaultIdleSeconds: config.idleTimeoutSeconds,
  });
  await backend.start();
  const app = await buildApp({ config, environments: kubernetesEnvironments(backend) });
  await app.ready();
  return { app, backend, close: () => app.close() };
}

/** Polls until fn returns a truthy value (the tests wait on events, never on a fixed time). */
export async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A simulated API server whose pods are stub workers, started. */
export async function stubCluster(): Promise<{ sim: KubeSim; kubelet: StubKubelet }> {
  const kubelet = new StubKubelet();
  const sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  await sim.start();
  return { sim, kubelet };
}

/** Closes the replicas, then the API server: every object the replicas sent it must have been valid. */
export async function closeCluster(orchestrators: Orchestrator[], sim: KubeSim): Promise<void> {
  for (const o of orchestrators.splice(0)) await o.close();
  await sim.close();
  expect(sim.invalid).toEqual([]);
}
