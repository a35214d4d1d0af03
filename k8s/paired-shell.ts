// A shell sandbox paired with a claw sandbox (`claw_sandbox` on a shell create) on the kubernetes backend: its own
// `grove worker` (shell mode, pod isolation) in an EPHEMERAL CONTAINER added to the claw sandbox's running pod
// (PATCH pods/{name}/ephemeralcontainers). The container shares the pod's network namespace, so the shell's
// loopback reaches the Claw apps as it does on one machine, and nothing else of the pod: not its file system (no
// volume of the pod is mounted: the worker's /tmp, its data dir with the apps' state and audit log, stays the
// worker's), not its processes (no shareProcessNamespace: the worker's environment, its token, is not in the shell's
// /proc), not its user (uid 10002, the worker is 10001). The shell's worker listens on a port of its own
// (workerPort + 1 + n, n = the pod's ephemeral containers before it) with a token of its own (derived from
// `pod/container`); its record on the claw pod says so (`paired`), so every replica reaches it.
// An ephemeral container cannot be removed: it stays until the pod is deleted; closing the shell ends its worker
// (POST /worker/exit), so the container stops. It declares no resources (the API forbids them): it runs within the
// pod's own cgroup limits (the sum of its containers' limits), beside the worker it shares them with.
import type { V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { K8sConfig } from './config.ts';
import { KubeApi, KubeError } from './kube.ts';
import type { PodCache } from './pod-cache.ts';
import { fresh } from './pod-writer.ts';
import { podCondition } from './pods.ts';
import { safeName } from './records.ts';
import type { Placement } from './remote-placement.ts';
import { workerToken } from './token.ts';

/** The paired shell's user: not the worker's (10001), so the worker's files and processes are not its own. */
export const PAIRED_SHELL_UID = 10002;
/** Ephemeral containers a claw pod takes (each paired shell adds one for good; the ports the NetworkPolicy opens). */
export const MAX_PAIRED_SHELLS = 8;
/** Where the paired shell's workspace is: in its container's own writable layer (no volume of the pod). */
export const PAIRED_SHELL_WORKSPACE = '/tmp/workspace';

export interface PairedShell {
  container: string;
  port: number;
}

/** The ephemeral container of one paired shell: the claw pod's worker image, `grove worker` in shell mode. */
export function pairedShellContainer(cfg: K8sConfig, pod: V1Pod, shell: PairedShell, token: string): V1EphemeralContainer {
  const main = pod.spec!.containers[0]!;
  return {
    name: shell.container,
    image: main.image,
    imagePullPolicy: main.imagePullPolicy,
    args: ['worker'],
    env: [
      { name: 'GROVE_HOST', value: '0.0.0.0' },
      { name: 'GROVE_PORT', value: String(shell.port) },
      { name: 'GROVE_MAX_SANDBOXES', value: '1' },
      { name: 'GROVE_DATA_DIR', value: '/tmp/grove' },
      { name: 'GROVE_LOG_LEVEL', value: 'warn' },
      { name: 'GROVE_SHELL_ISOLATION', value: 'pod' },
      { name: 'GROVE_SHELL_POD_WORKSPACE', value: PAIRED_SHELL_WORKSPACE },
      { name: 'GROVE_SHELL_POD_NETWORK', value: cfg.network },
      // The orchestrator ends this worker when its sandbox closes (the container cannot be removed).
      { name: 'GROVE_WORKER_EXIT_ROUTE', value: '1' },
      { name: 'GROVE_API_KEY', value: token },
    ],
    securityContext: {
      runAsUser: PAIRED_SHELL_UID,
      runAsGroup: PAIRED_SHELL_UID,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      // Its own layer (nothing of the pod's volumes): the workspace and the worker's data dir live there.
      readOnlyRootFilesystem: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
}

export interface PairingDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  tokenSecret: string;
  now(): number;
}

/** 400 when the claw pod has had all its paired shells (their containers stay: the ports are taken for good). */
export function checkPairedShellRoom(pod: V1Pod | undefined): void {
  if ((pod?.spec?.ephemeralContainers?.length ?? 0) >= MAX_PAIRED_SHELLS) {
    throw new GroveError('invalid_request', `claw_sandbox: the claw sandbox has had ${MAX_PAIRED_SHELLS} paired shells (each stays in its pod until the claw sandbox closes); create another claw sandbox.`);
  }
}

/** Adds the shell's ephemeral container to the claw pod (a guarded patch: two pairings never take one port). */
export async function addPairedShell(d: PairingDeps, podName: string, sandboxId: string): Promise<PairedShell> {
  const container = `shell-${safeName(sandboxId).toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63).replace(/-+$/, '');
  let pod: V1Pod | null | undefined = d.cache.get(podName);
  for (let attempt = 0; attempt < 8; attempt++) {
    if (!pod) pod = await fresh(d.api, d.cache, podName);
    if (!pod || podCondition(pod).state !== 'ready') throw new GroveError('invalid_request', `claw_sandbox: the claw sandbox's pod ${podName} is not running.`);
    checkPairedShellRoom(pod);
    const taken = pod.spec?.ephemeralContainers ?? [];
    const shell = { container: taken.some((c) => c.name === container) ? `${container.slice(0, 58)}-${taken.length}` : container, port: d.cfg.workerPort + 1 + taken.length };
    try {
      const spec = pairedShellContainer(d.cfg, pod, shell, workerToken(d.tokenSecret, `${podName}/${shell.container}`));
      d.cache.remember(await d.api.addEphemeralContainer(podName, spec, pod.metadata!.resourceVersion));
      return shell;
    } catch (err) {
      if (!(err instanceof KubeError)) throw err;
      if (err.status === 404) throw new GroveError('invalid_request', `claw_sandbox: the claw sandbox's pod ${podName} is gone.`);
      if (err.status !== 409) throw new GroveError('internal_error', `Adding the paired shell's container to pod ${podName} failed: ${err.message}`, { cause: err });
      pod = null;
    }
  }
  throw new GroveError('capacity_exhausted', `Pod ${podName} kept changing while a paired shell was added; retry shortly.`, { retryAfter: 1 });
}

/** Waits until the shell's container runs and its worker answers /health; rejects when it ended or at the deadline. */
export async function waitPairedShell(d: PairingDeps, placement: Placement, shell: PairedShell, deadline: number, signal: AbortSignal): Promise<void> {
  for (;;) {
    if (signal.aborted) throw new GroveError('sandbox_closed', 'Sandbox closed while its shell container was starting.');
    const pod = d.cache.get(placement.pod);
    const st = pod?.status?.ephemeralContainerStatuses?.find((s) => s.name === shell.container)?.state;
    if (!pod || podCondition(pod).state !== 'ready') throw new GroveError('worker_lost', `The claw sandbox's pod ${placement.pod} went away.`);
    if (st?.terminated) throw new GroveError('worker_lost', `The paired shell's container ${shell.container} exited (${st.terminated.reason ?? `exit ${st.terminated.exitCode}`}).`);
    const waiting = st?.waiting?.reason;
    if (waiting && /ImagePull|InvalidImageName/.test(waiting)) throw new GroveError('image_pull_failed', `The paired shell's image cannot be pulled (${waiting}).`);
    if (st?.running) {
      const left = Math.max(1, deadline - d.now());
      const ok = await fetch(`${placement.url}/health`, { signal: AbortSignal.any([signal, AbortSignal.timeout(left)]) }).then((r) => r.ok, () => false);
      if (ok) return;
    }
    if (d.now() >= deadline) throw new GroveError('pod_start_timeout', `The paired shell's container ${shell.container} was not serving in time.`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Ends the paired shell's worker (its container stops; the container itself stays until the pod goes). */
export async function endPairedShell(placement: Placement, timeoutMs: number): Promise<void> {
  await fetch(`${placement.url}/worker/exit`, { method: 'POST', headers: { 'x-api-key': placement.token }, signal: AbortSignal.timeout(timeoutMs) }).then(
    (r) => r.body?.cancel(),
    () => undefined,
  );
}
