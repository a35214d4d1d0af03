// Worker pods: the manifest the orchestrator creates (and `grove k8s render` prints as a PodTemplate), and how a
// pod's status reads as a sandbox status. Secure defaults: non-root, read-only root filesystem, no capabilities,
// no service-account token, seccomp RuntimeDefault, requests and limits, optional RuntimeClass.
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { K8sConfig, Template } from './config.ts';
import { A, baseLabels, L } from './labels.ts';
import { withSandboxImage } from './pod-image.ts';

export const WORKER_SERVICE_ACCOUNT = 'grove-sandbox';
export const WORKER_UID = 10001;
/** Where a shell pod's workspace emptyDir is mounted (the path the API and commands see). */
export const SHELL_WORKSPACE = '/workspace';

/** Where scripts/claw-eval-image.sh puts a checkout and its Python environment in a Claw-Eval image. */
export const CLAW_EVAL_CHECKOUT = '/opt/grove-claw-eval/checkout';
export const CLAW_EVAL_CACHE = '/opt/grove-claw-eval/cache';

export function workerPodSpec(cfg: K8sConfig, templateName: string, token: string | null): V1PodSpec {
  const t: Template = cfg.templates[templateName]!;
  const env = [
    { name: 'GROVE_HOST', value: '0.0.0.0' },
    { name: 'GROVE_PORT', value: String(cfg.workerPort) },
    { name: 'GROVE_MAX_SANDBOXES', value: String(t.placement === 'shared' ? t.maxPerWorker : 1) },
    { name: 'GROVE_DATA_DIR', value: '/tmp/grove' },
    { name: 'GROVE_LOG_LEVEL', value: 'warn' },
  ];
  const shell = t.type === 'shell';
  // Shell pods: the pod is the sandbox's boundary under the restricted defaults (no root, no bubblewrap), commands
  // run as the pod's user in a writable /workspace emptyDir; the sandbox learns what its NetworkPolicy allows.
  if (shell) {
    env.push(
      { name: 'GROVE_SHELL_ISOLATION', value: 'pod' },
      { name: 'GROVE_SHELL_POD_WORKSPACE', value: SHELL_WORKSPACE },
      { name: 'GROVE_SHELL_POD_NETWORK', value: cfg.network },
    );
  }
  // Claw-Eval pods: one episode, its services from the image's checkout without bubblewrap (the pod is their boundary,
  // claw-env/claw-eval/services.ts), the Python environment built into the image; no judge or user-model setting.
  if (t.type === 'claw-eval') {
    env.push(
      { name: 'GROVE_CLAW_EVAL', value: t.clawEval ?? CLAW_EVAL_CHECKOUT },
      { name: 'GROVE_CLAW_EVAL_CACHE', value: t.clawEvalCache ?? CLAW_EVAL_CACHE },
      { name: 'GROVE_CLAW_EVAL_ISOLATION', value: 'pod' },
    );
  }
  // The per-pod token (an HMAC of the pod name under the orchestrators' secret); absent in the rendered template.
  if (token !== null) env.push({ name: 'GROVE_API_KEY', value: token });
  return {
    serviceAccountName: WORKER_SERVICE_ACCOUNT,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    restartPolicy: 'Never',
    terminationGracePeriodSeconds: 10,
    ...(cfg.runtimeClassName ? { runtimeClassName: cfg.runtimeClassName } : {}),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: WORKER_UID,
      runAsGroup: WORKER_UID,
      fsGroup: WORKER_UID,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [
      {
        name: 'worker',
        image: t.image ?? cfg.workerImage,
        imagePullPolicy: cfg.imagePullPolicy,
        args: ['worker'],
        env,
        ports: [{ name: 'http', containerPort: cfg.workerPort, protocol: 'TCP' }],
        readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 2, failureThreshold: 3 },
        resources: { requests: { ...t.resources.requests }, limits: { ...t.resources.limits } },
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
        },
        volumeMounts: shell
          ? [
              { name: 'tmp', mountPath: '/tmp' },
              { name: 'workspace', mountPath: SHELL_WORKSPACE },
            ]
          : [
              { name: 'tmp', mountPath: '/tmp' },
              { name: 'dshm', mountPath: '/dev/shm' },
            ],
      },
    ],
    volumes: shell
      ? [
          { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
          { name: 'workspace', emptyDir: { sizeLimit: t.workspaceSize ?? '4Gi' } },
        ]
      : [
          { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
          // Chromium needs more shared memory than a container's default 64 MiB.
          { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '512Mi' } },
        ],
  };
}

export function workerLabels(cfg: K8sConfig, templateName: string): Record<string, string> {
  const t = cfg.templates[templateName]!;
  return { ...baseLabels(cfg.instance, 'worker'), [L.template]: templateName, [L.placement]: t.placement };
}

/** A warm (unclaimed) worker pod, or one created already claimed for a sandbox (cold start). */
export function workerPod(
  cfg: K8sConfig,
  templateName: string,
  name: string,
  token: string,
  claim?: { owner: string; sandboxId?: string; expiresAt?: string; sandboxes?: string[] },
  /** A shell sandbox's own image (k8s/pod-image.ts). */
  image?: string,
): V1Pod {
  const labels: Record<string, string> = { ...workerLabels(cfg, templateName), [L.state]: claim ? 'claimed' : 'warm' };
  const annotations: Record<string, string> = {};
  if (claim) {
    labels[L.owner] = claim.owner;
    if (claim.sandboxId) labels[L.sandbox] = claim.sandboxId;
    if (claim.expiresAt) annotations[A.expiresAt] = claim.expiresAt;
    if (claim.sandboxes) annotations[A.sandboxes] = JSON.stringify(claim.sandboxes);
    annotations[A.claimedAt] = new Date().toISOString();
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: cfg.namespace, labels, annotations },
    spec: image
      ? withSandboxImage(workerPodSpec(cfg, templateName, token), image, cfg.shellImageOwnedPaths, cfg.templates[templateName]!.workspaceSize)
      : workerPodSpec(cfg, templateName, token),
  };
}

export type PodCondition =
  | { state: 'pending' }
  | { state: 'ready'; ip: string }
  | { state: 'failed'; code: 'pod_unschedulable' | 'image_pull_failed' | 'worker_lost'; message: string }
  | { state: 'gone' };

const IMAGE_PULL = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

/** How a pod's status reads: starting, ready (with its IP), or failed for a reason a person can act on. */
export function podCondition(pod: V1Pod): PodCondition {
  if (pod.metadata?.deletionTimestamp) return { state: 'gone' };
  const st = pod.status;
  if (st?.phase === 'Failed' || st?.phase === 'Succeeded') {
    return { state: 'failed', code: 'worker_lost', message: `Worker pod ${pod.metadata?.name} stopped (phase ${st.phase}${st.reason ? `, ${st.reason}` : ''}).` };
  }
  for (const cs of st?.containerStatuses ?? []) {
    const w = cs.state?.waiting;
    if (w?.reason && IMAGE_PULL.has(w.reason)) {
      return { state: 'failed', code: 'image_pull_failed', message: `Worker image ${cs.image} cannot be pulled (${w.reason}${w.message ? `: ${w.message}` : ''}).` };
    }
    if (cs.state?.terminated) {
      return { state: 'failed', code: 'worker_lost', message: `Worker container exited (${cs.state.terminated.reason ?? 'exit ' + cs.state.terminated.exitCode}).` };
    }
  }
  const sched = st?.conditions?.find((c) => c.type === 'PodScheduled');
  if (sched?.status === 'False' && sched.reason === 'Unschedulable') {
    return { state: 'failed', code: 'pod_unschedulable', message: `No node can run the worker pod: ${sched.message ?? 'unschedulable'}.` };
  }
  const ready = st?.conditions?.find((c) => c.type === 'Ready');
  if (st?.phase === 'Running' && ready?.status === 'True' && st.podIP) return { state: 'ready', ip: st.podIP };
  return { state: 'pending' };
}
