// The Kubernetes backend as the environments the server composes (buildApp's `environments`): the server wraps
// them as it wraps the local browser environment, so `record: true` episodes are recorded on the orchestrator,
// where the raw model output is known, and the routes, clients and recordings do not change.
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { BrowserCreateOptions } from '../protocol/sandbox.ts';
import type { EnvironmentFactory, LocalEnvironments } from '../sandbox/local-backend.ts';
import type { Logger } from '../sandbox/log.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { KubernetesBackend } from './backend.ts';
import type { K8sConfig } from './config.ts';
import { loadKubeConfig } from './kube.ts';

export function kubernetesEnvironments(backend: KubernetesBackend): LocalEnvironments {
  const browser: EnvironmentFactory<BrowserCreateOptions> & { create(id: string, spec: BrowserCreateOptions, extras?: unknown): Promise<Sandbox> } = {
    async create(id, spec, extras?: { contextOptions?: unknown; prepare?: unknown }) {
      if (extras?.contextOptions || extras?.prepare) {
        throw new GroveError('invalid_request', 'record_har and replay_har need the browser in this process; the kubernetes backend supports record: true without them.');
      }
      return backend.create(id, spec);
    },
    admit: (spec) => backend.admit(spec),
    shutdown: () => backend.shutdown(),
    stats: () => backend.stats(),
  };
  const shell: NonNullable<LocalEnvironments['shell']> = {
    create: (id, spec) => backend.create(id, spec),
    admit: (spec) => backend.admit(spec),
    shutdown: () => backend.shutdown(),
    // Reported once, under browser_ (the gauges are the backend's, not per type).
    stats: () => ({}),
  };
  return { ...(backend.supports('browser') ? { browser } : {}), ...(backend.supports('shell') ? { shell } : {}) };
}

export interface KubernetesSetup {
  config: K8sConfig;
  replicaId: string;
  tokenSecret: string;
  defaultTtlSeconds: number;
  log: Logger;
  /** Defaults to config.kubeconfig, else in-cluster / $KUBECONFIG. */
  kubeConfig?: KubeConfig;
}

/** Builds the backend, lists and watches the pods and takes the replica's Lease before the server listens. */
export async function startKubernetesBackend(s: KubernetesSetup): Promise<KubernetesBackend> {
  if (s.tokenSecret.length < 16) throw new GroveError('invalid_request', 'the worker-token secret (GROVE_K8S_TOKEN_SECRET) must be at least 16 characters');
  const backend = new KubernetesBackend({
    config: s.config,
    kubeConfig: s.kubeConfig ?? loadKubeConfig(s.config.kubeconfig),
    replicaId: s.replicaId,
    tokenSecret: s.tokenSecret,
    defaultTtlSeconds: s.defaultTtlSeconds,
    log: s.log,
  });
  await backend.start();
  return backend;
}

/** The secret from a file (a mounted Secret) when the value names one that exists. */
export function readSecretValue(value: string): string {
  if (value.startsWith('/')) {
    try {
      return readFileSync(value, 'utf8').trim();
    } catch {
      return value;
    }
  }
  return value;
}
