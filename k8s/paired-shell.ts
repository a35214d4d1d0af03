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
// (POST /worker/exit), so the container stops.
// Limits: an ephemeral container may not declare resources (the API refuses them: "Ephemeral containers use spare
// resources already allocated to the pod"). Its processes run in the pod's cgroup, whose limits bound them (memory:
// the sum of the pod's containers' limits; CPU: the sum of their CPU limits), and, as a container without requests,
// with the kubelet's smallest CPU weight (cpu.shares 2 beside the worker's request): under contention the claw app
// gets the CPU. Memory is shared with the worker, so the shell's worker sets its oom_score_adj to 1000
// (GROVE_OOM_SCORE_ADJ, unprivileged: a process may always raise its own): when the pod runs out of memory the kernel
// kills the shell's processes first, the worker and its apps go on. Forks: the pod's pids limit (the kubelet's
// podPidsLimit), and each command's RLIMIT_CPU (shell-env/pod-exec.ts). Size a claw template's limits for its worker
// plus the shells paired with it (test: shell-pairing-pods.slow).
import type { V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import { GroveError } from '../protocol/errors.ts';
import type { K8sConfig } from './config.ts';
import { KubeApi, KubeError } from './kube.ts';
import type { PodCache } from './pod-cache.ts';
import { fresh, updatePod } from './pod-writer.ts';
import { podCondition } from './pods.ts';
import { closedRecord, encodeRecord, isLive, podRecords, recordKey, safeName, type SandboxRecord } from './records.ts';
import type { Placement } from './remote-placement.ts';
import { workerToken } from './token.ts';

/** The paired shell's user: not the worker's (10001), so the worker's files and processes are not its own. */
export const PAIRED_SHELL_UID = 10002;
/** Ephemeral containers a claw pod takes (each paired shell adds one for good; the ports the NetworkPolicy opens). */
export const MAX_PAIRED_SHELLS = 8;
/** The paired shell's worker and its commands: killed first when the pod runs out of memory. */
export const PAIRED_SHELL_OOM_SCORE_ADJ = 1000;
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
      // The pod's first OOM victims are the shell's processes, not the claw pod's worker and apps (limits, below).
      { name: 'GROVE_OOM_SCORE_ADJ', value: String(PAIRED_SHELL_OOM_SCORE_ADJ) },
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

/** The names and ports a claw pod's paired shells hold: its ephemeral containers' (for good) and those of live
 * records written before their container (addPairedShell's reservation). */
function heldSlots(pod: V1Pod): { names: Set<string>; ports: Set<number> } {
  const names = new Set<string>();
  const ports = new Set<number>();
  for (const c of pod.spec?.ephemeralContainers ?? []) {
    names.add(c.name);
    const port = Number(c.env?.find((e) => e.name === 'GROVE_PORT')?.value);
    if (port) ports.add(port);
  }
  for (const r of podRecords(pod).values()) {
    if (r.paired && isLive(r)) {
      names.add(r.paired.container);
      ports.add(r.paired.port);
    }
  }
  return { names, ports };
}

/** 400 when the claw pod has had all its paired shells (their containers stay: the ports are taken for good). */
export function checkPairedShellRoom(pod: V1Pod | undefined): void {
  if (pod && heldSlots(pod).names.size >= MAX_PAIRED_SHELLS) {
    throw new GroveError('invalid_request', `claw_sandbox: the claw sandbox has had ${MAX_PAIRED_SHELLS} paired shells (each stays in its pod until the claw sandbox closes); create another claw sandbox.`);
  }
}

/**
 * Adds the shell's ephemeral container to the claw pod, crash-safe by its order: first the shell's record (`rec`,
 * `creating`, its container and port in `paired`) is written on the claw pod, reserving them; only then the PATCH
 * adds the container. A replica dying in between leaves a record the leader closes (sandbox-expiry.ts: `creating`
 * for a replica that is gone), whose shell it ends; an ephemeral container running with no live record is an orphan
 * the leader ends too (paired-orphans.ts): none can exist but by a crash, since no container precedes its record.
 */
export async function addPairedShell(d: PairingDeps, podName: string, rec: SandboxRecord, clawId: string): Promise<PairedShell> {
  const base = `shell-${safeName(rec.id).toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63).replace(/-+$/, '');
  let shell: PairedShell | undefined;
  let why = '';
  const reserved = await updatePod(d.api, d.cache, podName, (p) => {
    const host = podRecords(p).get(clawId);
    if (!host || !isLive(host)) return void (why = 'was closed'), null;
    if (podCondition(p).state !== 'ready') return void (why = 'is not running'), null;
    checkPairedShellRoom(p);
    const held = heldSlots(p);
    let port = d.cfg.workerPort + 1;
    while (held.ports.has(port)) port++;
    shell = { container: held.names.has(base) ? `${base.slice(0, 58)}-${held.names.size}` : base, port };
    return { annotations: { [recordKey(rec.id)]: encodeRecord({ ...rec, paired: shell }) } };
  });
  if (!reserved || !shell) throw new GroveError('invalid_request', `claw_sandbox: the claw sandbox ${clawId.slice(0, 200)} ${why || 'is gone'}.`);
  rec.paired = shell;
  try {
    await patchContainer(d, podName, reserved, rec.id, shell);
    return shell;
  } catch (err) {
    // The reservation is closed (no container was added, or the pod is gone): its slot is free again.
    await updatePod(d.api, d.cache, podName, (p) => {
      const r = podRecords(p).get(rec.id);
      return r && isLive(r) && !p.spec?.ephemeralContainers?.some((c) => c.name === shell!.container) ? { annotations: { [recordKey(rec.id)]: encodeRecord(closedRecord(r, 'deleted', d.now())) } } : null;
    }).catch(() => undefined);
    throw err;
  }
}

/** The PATCH of the reserved container (guarded by resourceVersion; done when the container is there). */
async function patchContainer(d: PairingDeps, podName: string, reserved: V1Pod, id: string, shell: PairedShell): Promise<void> {
  let pod: V1Pod | null = reserved;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (!pod) pod = await fresh(d.api, d.cache, podName);
    if (!pod || podCondition(pod).state !== 'ready') throw new GroveError('invalid_request', `claw_sandbox: the claw sandbox's pod ${podName} is not running.`);
    const r = podRecords(pod).get(id);
    if (!r || !isLive(r)) throw new GroveError('sandbox_closed', `Sandbox ${id} was closed while its shell container was added.`);
    if (pod.spec?.ephemeralContainers?.some((c) => c.name === shell.container)) return;
    try {
      const spec = pairedShellContainer(d.cfg, pod, shell, workerToken(d.tokenSecret, `${podName}/${shell.container}`));
      d.cache.remember(await d.api.addEphemeralContainer(podName, spec, pod.metadata!.resourceVersion));
      return;
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
