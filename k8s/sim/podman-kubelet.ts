// A kubelet that runs each pod as a real container of the pod's image (podman, --pull=never): the end-to-end tests
// with the images scripts/images.sh builds. Start = `podman run` of the pod's image with the pod's address,
// environment, user, read-only root, dropped capabilities, no_new_privs, emptyDirs as tmpfs mounts and resource
// limits; the pod is Ready once GET /health answers on its address. Stop = `podman rm -f` with the pod's grace
// period; kill = `podman kill` (the pod stays, its status turns Failed as when a node's container dies).
// Pods share the host's network namespace, each on a loopback address of its own (127.x.y.z, the pod IP): the
// pod spec's GROVE_HOST (0.0.0.0 in a pod's own namespace) becomes that address, as it would be on a cluster.
// Every container carries the label grove.sim=<run> and grove.sim.pid=<this process>; containers of a process
// that is gone are removed when the next kubelet starts, so a crashed test run leaks nothing for long.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { KubeSim } from './api-server.ts';
import { PodIps, type PodFate } from './kubelets.ts';
import type { Kubelet, KubeletResult } from './pod-status.ts';
import type { Obj } from './wire.ts';

const PODMAN = '/usr/bin/podman';
/** An image reference (registry/path:tag@digest); nothing that podman could read as an option. */
const IMAGE_REF = /^[a-z0-9][a-z0-9._-]*(:[0-9]+)?(\/[a-z0-9][a-z0-9._-]*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;
/** An environment variable name podman takes literally (no `*` glob over the host's environment, no `=`). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL = 'grove.sim';

/** Whether podman runs here and has `image` (the tests skip with this reason otherwise). */
export function podmanImageMissing(image: string): string | null {
  const v = spawnSync(PODMAN, ['image', 'exists', image], { stdio: 'ignore' });
  if (v.error) return `podman is not installed (${PODMAN})`;
  if (process.getuid?.() !== 0) return 'podman needs root here (its storage holds the images scripts/images.sh builds)';
  return v.status === 0 ? null : `image ${image} is missing: run scripts/images.sh`;
}

/** Removes the containers of kubelets whose process is gone (a test run that crashed). */
export function sweepStaleContainers(): void {
  const r = spawnSync(PODMAN, ['ps', '-a', '--filter', `label=${LABEL}`, '--format', `{{.ID}} {{index .Labels "${LABEL}.pid"}}`], { encoding: 'utf8' });
  const stale = (r.stdout ?? '').split('\n').map((l) => l.trim().split(' ')).filter(([id, pid]) => id && !alive(Number(pid))).map(([id]) => id!);
  if (stale.length) spawnSync(PODMAN, ['rm', '-f', '-t', '0', ...stale], { stdio: 'ignore' });
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A Kubernetes memory quantity in bytes (Ki/Mi/Gi/Ti binary, k/M/G/T decimal). */
export function memoryBytes(q: string): number {
  const m = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`not a memory quantity: ${q}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.floor(Number(m[1]) * unit);
}

/** A Kubernetes CPU quantity in cores ("500m" is 0.5). */
export function cpuCores(q: string): number {
  const m = /^([0-9.]+)(m)?$/.exec(q);
  if (!m) throw new Error(`not a CPU quantity: ${q}`);
  return Number(m[1]) / (m[2] ? 1000 : 1);
}

/**
 * The `podman run` arguments for a pod (everything from the pod spec, checked: a pod this kubelet cannot run
 * faithfully is refused rather than run differently). `name` is the container's name, `ip` the pod's address.
 */
export function podmanRunArgs(pod: Obj, opts: { name: string; ip: string; run: string }): string[] {
  const spec = pod.spec;
  const c = spec.containers[0];
  if (!IMAGE_REF.test(c.image ?? '')) throw new Error(`image reference refused: ${JSON.stringify(c.image)}`);
  const args = ['run', '--rm', '--pull=never', '--network=host', `--name=${opts.name}`, `--label=${LABEL}=${opts.run}`, `--label=${LABEL}.pid=${process.pid}`, `--label=${LABEL}.pod=${pod.metadata.name}`];
  args.push(`--stop-timeout=${spec.terminationGracePeriodSeconds ?? 30}`);
  const psc = spec.securityContext ?? {};
  const sc = c.securityContext ?? {};
  const uid = sc.runAsUser ?? psc.runAsUser;
  const gid = sc.runAsGroup ?? psc.runAsGroup ?? uid;
  if ((sc.runAsNonRoot ?? psc.runAsNonRoot) && !uid) throw new Error('runAsNonRoot without a non-zero runAsUser');
  if (uid !== undefined) args.push(`--user=${Number(uid)}:${Number(gid)}`);
  if (psc.fsGroup !== undefined) args.push(`--group-add=${Number(psc.fsGroup)}`);
  if (sc.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  if ((sc.capabilities?.drop ?? []).includes('ALL')) args.push('--cap-drop=all');
  for (const cap of sc.capabilities?.add ?? []) args.push(`--cap-add=${String(cap).replace(/[^A-Z_]/g, '')}`);
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt=no-new-privileges');
  if (sc.privileged) throw new Error('privileged pods are refused');
  // emptyDirs: a tmpfs at each mount (size from sizeLimit); /dev/shm of medium Memory is the container's shm.
  const vols = new Map<string, Obj>((spec.volumes ?? []).map((v: Obj) => [v.name, v]));
  for (const m of c.volumeMounts ?? []) {
    const v = vols.get(m.name);
    if (!v?.emptyDir) throw new Error(`volume ${m.name}: only emptyDir volumes are simulated`);
    const size = v.emptyDir.sizeLimit ? memoryBytes(v.emptyDir.sizeLimit) : undefined;
    if (!/^\/[A-Za-z0-9._/-]*$/.test(m.mountPath) || m.mountPath.split('/').includes('..')) throw new Error(`mount path refused: ${m.mountPath}`);
    if (m.mountPath === '/dev/shm') args.push(`--shm-size=${size ?? 64 * 2 ** 20}`);
    else args.push(`--tmpfs=${m.mountPath}:rw,exec,nosuid,nodev,mode=1777${size ? `,size=${size}` : ''}`);
  }
  const limits = c.resources?.limits ?? {};
  if (limits.memory) args.push(`--memory=${memoryBytes(limits.memory)}`);
  if (limits.cpu) args.push(`--cpus=${cpuCores(limits.cpu)}`);
  for (const e of c.env ?? []) {
    if (typeof e.value !== 'string') continue; // valueFrom (Secrets, fields) is not simulated
    if (!ENV_NAME.test(e.name)) throw new Error(`environment variable name refused: ${JSON.stringify(e.name)}`);
    if (e.value.includes('\0')) throw new Error(`environment variable ${e.name}: NUL in its value`);
    args.push('--env', `${e.name}=${e.name === 'GROVE_HOST' ? opts.ip : e.value}`);
  }
  if (c.command) args.push(`--entrypoint=${JSON.stringify(c.command)}`);
  args.push(c.image, ...(c.args ?? []).map(String));
  return args;
}

interface Container {
  name: string;
  proc: ChildProcess;
  exited: Promise<void>;
}

export class PodmanKubelet implements Kubelet {
  readonly ips = new PodIps();
  private readonly containers = new Map<string, Container>();
  /** Every container this kubelet ran (by pod name), for the tests to inspect. */
  readonly started: string[] = [];
  /** The label value of this kubelet's containers. */
  readonly run = `run-${process.pid}-${randomBytes(4).toString('hex')}`;
  sim: KubeSim | null = null;
  fate: (pod: Obj) => PodFate = () => 'ok';

  constructor(private readonly opts: { readyTimeoutMs?: number } = {}) {
    sweepStaleContainers();
  }

  /** The container running a pod now (undefined once stopped or exited). */
  container(pod: string): string | undefined {
    return this.containers.get(pod)?.name;
  }

  async start(pod: Obj): Promise<KubeletResult> {
    const fate = this.fate(pod);
    if (fate !== 'ok') return { fail: fate };
    const image = pod.spec.containers[0].image as string;
    if (!IMAGE_REF.test(image) || (await podman(['image', 'exists', image])) !== 0) return { fail: 'image_pull' };
    const podName = pod.metadata.name as string;
    const ip = this.ips.next();
    const name = `grove-sim-${podName}-${randomBytes(3).toString('hex')}`.slice(0, 120);
    const args = podmanRunArgs(pod, { name, ip, run: this.run });
    const proc = spawn(PODMAN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
    const exited = new Promise<void>((r) => proc.once('close', () => r()));
    const c: Container = { name, proc, exited };
    this.containers.set(podName, c);
    this.started.push(podName);
    proc.once('close', (code, signal) => {
      if (this.containers.get(podName) !== c) return;
      this.containers.delete(podName);
      this.sim?.workerExited(pod.metadata.namespace, podName, code ?? 137, signal);
    });
    // Readiness probe: GET /health on the pod's address until it answers, the container exits, or time runs out.
    const url = `http://${ip}:${pod.spec.containers[0].ports[0].containerPort}/health`;
    const end = Date.now() + (this.opts.readyTimeoutMs ?? 180_000);
    while (Date.now() < end) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`container ${name} exited: ${stderr}`);
      if (await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false)) return { ip };
      await new Promise((r) => setTimeout(r, 200));
    }
    return { fail: 'never_ready' };
  }

  async stop(pod: Obj): Promise<void> {
    const c = this.containers.get(pod.metadata.name);
    this.containers.delete(pod.metadata.name);
    if (!c) return;
    const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
    await podman(['rm', '-f', '-t', String(grace), c.name]);
    await c.exited;
  }

  /** The container is SIGKILLed (`podman kill`); the pod stays and its status turns Failed. */
  async kill(podName: string): Promise<void> {
    const c = this.containers.get(podName);
    if (c) await podman(['kill', '--signal', 'KILL', c.name]);
  }

  /** Removes every container of this kubelet, running or not (the tests' afterAll). */
  async removeAll(): Promise<void> {
    const all = [...this.containers.values()];
    this.containers.clear();
    const ids = (await podmanOut(['ps', '-aq', '--filter', `label=${LABEL}=${this.run}`])).split('\n').filter(Boolean);
    if (ids.length) await podman(['rm', '-f', '-t', '0', ...ids]);
    await Promise.all(all.map((c) => c.exited));
  }
}

// Asynchronous on purpose: the simulated API server usually lives in the same process and must keep answering.
function podman(args: string[]): Promise<number | null> {
  return new Promise((resolve) => spawn(PODMAN, args, { stdio: 'ignore' }).once('close', (code) => resolve(code)));
}

function podmanOut(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const p = spawn(PODMAN, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (d) => (out += String(d)));
    p.once('close', () => resolve(out));
  });
}
