// The Kubernetes backend as the environments the server composes (buildApp's `environments`): the server wraps
// them as it wraps the local browser environment, so `record: true` episodes are recorded on the orchestrator,
// where the raw model output is known, and the routes, clients and recordings do not change.
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { BrowserCreateOptions, CreateSandboxBody } from '../protocol/sandbox.ts';
import type { EnvironmentFactory, LocalEnvironments } from '../sandbox/local-backend.ts';
import type { Logger } from '../sandbox/log.ts';
import { podShellRefusal, type PodNetwork } from '../sandbox/pod-isolation.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { KubernetesBackend } from './backend.ts';
import type { RemoteHar } from './remote-files.ts';
import type { K8sConfig } from './config.ts';
import { loadKubeConfig } from './kube.ts';
import { shellImageRefusal } from './pod-image.ts';
import { admitClawEval, type ClawEvalOnOrchestrator } from './remote-claw-eval.ts';

/**
 * Create options that cannot work when the sandbox runs on a worker pod, refused up front with a stable 400. The
 * offline sites and the Claw apps run beside the sandboxes on their pods (k8s/beside.ts), a shell paired with a
 * claw sandbox in an ephemeral container of its pod (k8s/paired-shell.ts); what needs a process a pod may not run
 * (bubblewrap) is refused. Everything else
 * is relayed (docs/kubernetes.md, "What runs where").
 */
export function refuseUnrelayable(spec: CreateSandboxBody, config: Pick<K8sConfig, 'network' | 'shellImages' | 'templates'>, clawEval?: ClawEvalOnOrchestrator): void {
  // A shell paired with a claw sandbox runs in an ephemeral container of the claw sandbox's pod (k8s/paired-shell.ts):
  // its network is that pod's (the apps on its loopback), not the opened allow list the pairing wrote, and its image
  // is the worker image.
  if (spec.type === 'shell' && spec.claw_sandbox !== undefined) {
    if (spec.image !== undefined) throw new GroveError('not_supported_on_backend', PAIRED_IMAGE);
    // The pairing opened exactly the claw origin (server/routes/claw.ts); anything more the pod cannot open.
    if ((spec.allow?.length ?? 0) > 1) throw new GroveError('not_supported_on_backend', podShellRefusal({ allow: spec.allow, block_network: config.network === 'deny' }, config.network)!);
    return;
  }
  // On a claw-eval template's pod, graded here (k8s/remote-claw-eval.ts).
  if (spec.type === 'claw' && spec.claw_eval_task !== undefined) admitClawEval(spec, config.templates, clawEval);
  const network: PodNetwork = config.network;
  // Shell pods are pod-isolated (the restricted defaults forbid bubblewrap): their network is the install's.
  const why = spec.type === 'shell' ? podShellRefusal(spec, network) : null;
  if (why) throw new GroveError('not_supported_on_backend', why);
  if (spec.type === 'shell' && spec.image !== undefined) {
    const refused = shellImageRefusal(config, spec.image);
    if (refused) throw new GroveError('not_supported_on_backend', refused);
  }
}

const PAIRED_IMAGE =
  "image is not available for a shell paired with a claw sandbox on the kubernetes backend: the shell runs in an " +
  "ephemeral container of the claw sandbox's pod, on the worker image.";

export function kubernetesEnvironments(backend: KubernetesBackend): LocalEnvironments {
  const admit = (spec: CreateSandboxBody) => {
    refuseUnrelayable(spec, backend.config, backend.clawEval);
    backend.admit(spec);
  };
  const browser: EnvironmentFactory<BrowserCreateOptions> & { create(id: string, spec: BrowserCreateOptions, extras?: unknown): Promise<Sandbox> } = {
    async create(id, spec, extras?: { contextOptions?: unknown; prepare?: unknown; har?: RemoteHar }) {
      // The recording layer's HAR extras are Playwright hooks for a browser in this process; the worker gets the
      // same files instead (uploaded for replay, fetched back after recording: remote-sandbox.ts).
      if ((extras?.contextOptions || extras?.prepare) && !extras.har) {
        throw new GroveError('not_supported_on_backend', 'These browser context extras need the browser in this process.');
      }
      return backend.create(id, spec, extras?.har ? { har: extras.har } : {});
    },
    admit,
    // The offline sites of `offline` tasks are served by each worker pod on its loopback (k8s/beside.ts).
    sitesBesideSandboxes: true,
    shutdown: () => backend.shutdown(),
    stats: () => backend.stats(),
  };
  // Shell sandboxes on pods of their own; claw sandboxes on browser workers, whose worker serves the apps on the
  // pod's loopback (k8s/remote-claw.ts). Their gauges are reported once, under browser_ (the backend's, not per type).
  const plain = <S extends CreateSandboxBody>(): EnvironmentFactory<S> => ({
    create: (id, spec) => backend.create(id, spec),
    admit,
    shutdown: () => backend.shutdown(),
    stats: () => ({}),
  });
  const shell: NonNullable<LocalEnvironments['shell']> = plain();
  const claw: NonNullable<LocalEnvironments['claw']> = plain();
  // The records every replica shares: sandboxes created on another replica are served here too.
  // Claw sandboxes run on browser workers; Claw-Eval episodes on claw-eval pods (either template makes `claw` served).
  const clawEvalPods = Object.values(backend.config.templates).some((t) => t.type === 'claw-eval');
  const browsers = { ...(backend.supports('browser') ? { browser } : {}), ...(backend.supports('browser') || clawEvalPods ? { claw } : {}) };
  return { ...browsers, ...(backend.supports('shell') ? { shell } : {}), shared: backend.shared };
}

export interface KubernetesSetup {
  config: K8sConfig;
  replicaId: string;
  tokenSecret: string;
  defaultTtlSeconds: number;
  /** The registry's idle timeout for sandboxes that ask for none (written in their records). */
  defaultIdleSeconds?: number;
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
    defaultIdleSeconds: s.defaultIdleSeconds,
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
