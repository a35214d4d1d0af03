// A kubelet that runs each pod as a real container of the pod's image (podman, --pull=never): the end-to-end tests
// with the images scripts/images.sh builds. Start = `podman run` of the pod's image with the pod's address,
// environment, user, read-only root, dropped capabilities, no_new_privs, emptyDirs as per-pod folders and resource
// limits, init containers first, all below the pod's own cgroup with the pod's limits (pod-cgroup.ts); the pod is
// Ready once GET /health answers on its address. Stop = `podman rm -f` with the pod's grace period; kill =
// `podman kill` (the pod stays, its status turns Failed as when a node's container dies).
// Pods share the host's network namespace, each on a loopback address of its own (127.x.y.z, the pod IP): the
// pod spec's GROVE_HOST (0.0.0.0 in a pod's own namespace) becomes that address, as it would be on a cluster.
// Every container carries the label grove.sim=<run> and grove.sim.pid=<this process>; containers of a process
// that is gone are removed when the next kubelet starts, so a crashed test run leaks nothing for long.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeSim } from './api-server.ts';
import { PodIps, type PodFate } from './kubelets.ts';
import { cpuShares, makePodCgroup, removePodCgroup, removeRunCgroup, sweepStaleCgroups } from './pod-cgroup.ts';
import { PolicyNetworks, sweepStaleNetworks, type PodNetwork } from './pod-network.ts';
import { cpuCores, memoryBytes } from './quantities.ts';
import type { Kubelet, KubeletResult } from './pod-status.ts';
import type { Obj } from './wire.ts';

export { cpuCores, memoryBytes };

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

/** Removes the containers, pod folders, cgroups and networks of kubelets whose process is gone (a test run that crashed). */
export function sweepStaleContainers(): void {
  const r = spawnSync(PODMAN, ['ps', '-a', '--filter', `label=${LABEL}`, '--format', `{{.ID}} {{index .Labels "${LABEL}.pid"}}`], { encoding: 'utf8' });
  const stale = (r.stdout ?? '').split('\n').map((l) => l.trim().split(' ')).filter(([id, pid]) => id && !alive(Number(pid))).map(([id]) => id!);
  if (stale.length) spawnSync(PODMAN, ['rm', '-f', '-t', '0', ...stale], { stdio: 'ignore' });
  for (const f of readdirSync(os.tmpdir())) {
    const pid = /^grove-pod-(\d+)-/.exec(f)?.[1];
    if (pid && !alive(Number(pid))) rmSync(path.join(os.tmpdir(), f), { recursive: true, force: true });
  }
  sweepStaleCgroups(alive);
  sweepStaleNetworks(alive);
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

/**
 * The `podman run` arguments for one of a pod's containers (everything from the pod spec, checked: a pod this kubelet
 * cannot run faithfully is refused rather than run differently). `name` is the container's name, `ip` the pod's
 * address, `podDir` the host folder holding the pod's emptyDirs (shared by its init and main containers, created
 * world-writable as a kubelet does; a sizeLimit is not enforced here, a kubelet evicts for it).
 */
export function podmanRunArgs(pod: Obj, c: Obj, opts: { name: string; ip: string; run: string; podDir: string; /** an ephemeral container: the pod's main container's */ network?: string; /** the pod's cgroup (pod-cgroup.ts) */ cgroupParent?: string; /** the pod's address on `network` (pod-network.ts) */ staticIp?: string }): string[] {
  const spec = pod.spec;
  if (!IMAGE_REF.test(c.image ?? '')) throw new Error(`image reference refused: ${JSON.stringify(c.image)}`);
  const args = ['run', '--rm', '--pull=never', `--network=${opts.network ?? 'host'}`, ...(opts.staticIp ? [`--ip=${opts.staticIp}`] : []), `--name=${opts.name}`, `--label=${LABEL}=${opts.run}`, `--label=${LABEL}.pid=${process.pid}`, `--label=${LABEL}.pod=${pod.metadata.name}`];
  args.push(`--stop-timeout=${Number(spec.terminationGracePeriodSeconds ?? 30)}`);
  // Below the pod's cgroup (its limits), with the CPU weight of the container's request (none: the minimum).
  if (opts.cgroupParent) args.push(`--cgroup-parent=${opts.cgroupParent}`);
  args.push(`--cpu-shares=${cpuShares(c)}`);
  const psc = spec.securityContext ?? {};
  const sc = c.securityContext ?? {};
  const uid = sc.runAsUser ?? psc.runAsUser;
  const gid = sc.runAsGroup ?? psc.runAsGroup ?? uid;
  if ((sc.runAsNonRoot ?? psc.runAsNonRoot) && !uid) throw new Error('runAsNonRoot without a non-zero runAsUser');
  if (sc.privileged) throw new Error('privileged pods are refused');
  if (uid !== undefined) args.push(`--user=${Number(uid)}:${Number(gid)}`);
  if (psc.fsGroup !== undefined) args.push(`--group-add=${Number(psc.fsGroup)}`);
  if (sc.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  if ((sc.capabilities?.drop ?? []).includes('ALL')) args.push('--cap-drop=all');
  for (const cap of sc.capabilities?.add ?? []) args.push(`--cap-add=${String(cap).replace(/[^A-Z_]/g, '')}`);
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt=no-new-privileges');
  const vols = new Map<string, Obj>((spec.volumes ?? []).map((v: Obj) => [v.name, v]));
  for (const m of c.volumeMounts ?? []) {
    const v = vols.get(m.name);
    if (!v?.emptyDir) throw new Error(`volume ${m.name}: only emptyDir volumes are simulated`);
    if (!/^\/[A-Za-z0-9._/-]*$/.test(m.mountPath) || m.mountPath.split('/').includes('..')) throw new Error(`mount path refused: ${m.mountPath}`);
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(m.name)) throw new Error(`volume name refused: ${m.name}`);
    // /dev/shm of medium Memory is the container's shared memory, sized by its limit.
    if (m.mountPath === '/dev/shm' && v.emptyDir.medium === 'Memory') {
      args.push(`--shm-size=${v.emptyDir.sizeLimit ? memoryBytes(v.emptyDir.sizeLimit) : 64 * 2 ** 20}`);
      continue;
    }
    let src = path.join(opts.podDir, `vol-${m.name}`);
    mkdirSync(src, { recursive: true });
    chmodSync(src, 0o777);
    if (m.subPath !== undefined) {
      // A folder of the volume (made by the kubelet when missing; else left as an init container made it).
      if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(m.subPath) || m.subPath === '..') throw new Error(`subPath refused: ${m.subPath}`);
      src = path.join(src, m.subPath);
      if (!existsSync(src)) mkdirSync(src);
    }
    args.push(`--volume=${src}:${m.mountPath}:${m.readOnly ? 'ro' : 'rw'}`);
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
  if (c.command) args.push(`--entrypoint=${JSON.stringify(c.command.map(String))}`);
  args.push(c.image, ...(c.args ?? []).map(String));
  return args;
}

/** A pod this kubelet runs: its emptyDir folder and the container running now (an init container, then the main one). */
interface Running {
  podDir: string;
  name: string;
  proc: ChildProcess | null;
  exited: Promise<void>;
  /** The main container's stderr tail (why it exited). */
  stderr: string;
  stopped: boolean;
  /** Ephemeral containers added to the running pod (`podman run --network container:<main>`), by container name. */
  ephemeral: Map<string, { name: string; exited: Promise<void> }>;
  /** The pod's cgroup, parent of all its containers (pod-cgroup.ts). */
  cgroup: string;
  /** Its own network (network: 'policy', pod-network.ts). */
  net: PodNetwork | null;
}

export class PodmanKubelet implements Kubelet {
  readonly ips = new PodIps();
  private readonly pods = new Map<string, Running>();
  /** The label value of this kubelet's containers. */
  readonly run = `run-${process.pid}-${randomBytes(4).toString('hex')}`;
  /** Containers that ended on their own (killed, crashed, podman failed), with the tail of their stderr. */
  readonly exits: Array<{ pod: string; container: string; code: number | null; stderr: string }> = [];
  sim: KubeSim | null = null;
  fate: (pod: Obj) => PodFate = () => 'ok';

  /** Per-pod networks enforcing the worker egress policy (network: 'policy'); else pods share the host's network. */
  private readonly nets: PolicyNetworks | null;

  constructor(private readonly opts: { readyTimeoutMs?: number; /** 'host' (default): pods on 127.x addresses of the host's network; 'policy': pod-network.ts */ network?: 'host' | 'policy' } = {}) {
    sweepStaleContainers();
    this.nets = opts.network === 'policy' ? new PolicyNetworks(this.run) : null;
  }

  /** The main container running a pod now (undefined before it starts and once it stopped or exited). */
  container(pod: string): string | undefined {
    const r = this.pods.get(pod);
    return r?.proc && r.name.endsWith('-main') ? r.name : undefined;
  }

  async start(pod: Obj): Promise<KubeletResult> {
    const fate = this.fate(pod);
    if (fate !== 'ok') return { fail: fate };
    const spec = pod.spec;
    const all: Obj[] = [...(spec.initContainers ?? []), spec.containers[0]];
    for (const c of all) if (!IMAGE_REF.test(c.image ?? '') || (await podman(['image', 'exists', c.image])) !== 0) return { fail: 'image_pull' };
    const podName = pod.metadata.name as string;
    const r: Running = { podDir: mkdtempSync(path.join(os.tmpdir(), `grove-pod-${process.pid}-${podName}-`)), name: '', proc: null, exited: Promise.resolve(), stderr: '', stopped: false, ephemeral: new Map(), cgroup: makePodCgroup(this.run, pod), net: null };
    this.pods.set(podName, r);
    r.net = this.nets ? await this.nets.create(podName) : null;
    const ip = r.net?.ip ?? this.ips.next();
    // On a network of its own the pod listens on its namespace's 0.0.0.0, as in a cluster.
    const where = r.net ? { ip: '0.0.0.0', network: r.net.name, staticIp: r.net.ip } : { ip };
    const prefix = `grove-sim-${podName}-${randomBytes(3).toString('hex')}`;
    // Init containers, one after the other, each to a clean exit; then the main container.
    for (const [i, c] of (spec.initContainers ?? []).entries()) {
      const code = await this.runContainer(r, podmanRunArgs(pod, c, { name: `${prefix}-init${i}`, ...where, run: this.run, podDir: r.podDir, cgroupParent: r.cgroup }), `${prefix}-init${i}`);
      if (r.stopped) return { fail: 'never_ready' };
      if (code !== 0) throw new Error(`init container ${c.name} exited ${code}: ${r.stderr}`);
    }
    const main = `${prefix}-main`;
    void this.runContainer(r, podmanRunArgs(pod, spec.containers[0], { name: main, ...where, run: this.run, podDir: r.podDir, cgroupParent: r.cgroup }), main).then((code) => {
      // A main container that ends on its own (killed, crashed): the pod's status turns Failed.
      if (this.pods.get(podName) !== r || r.stopped) return;
      this.exits.push({ pod: podName, container: main, code, stderr: r.stderr });
      this.sim?.workerExited(pod.metadata.namespace, podName, code ?? 137, code === 0 ? null : 'Error');
    });
    // Readiness probe: GET /health on the pod's address until it answers, the container exits, or time runs out.
    const url = `http://${ip}:${spec.containers[0].ports[0].containerPort}/health`;
    const end = Date.now() + (this.opts.readyTimeoutMs ?? 180_000);
    while (Date.now() < end && !r.stopped) {
      if (!r.proc) throw new Error(`container ${main} exited: ${r.stderr}`);
      if (await fetch(url, { signal: AbortSignal.timeout(2000) }).then((res) => res.ok, () => false)) return { ip };
      await new Promise((res) => setTimeout(res, 200));
    }
    return { fail: 'never_ready' };
  }

  /**
   * An ephemeral container (k8s/sim/ephemeral.ts): `podman run --network container:<the pod's main container>`, so it
   * shares the pod's network and its cgroup (the pod's limits, with the smallest CPU weight) and nothing else (no volume of the pod unless it mounts one, its own user, processes and
   * root file system). Resolves once its worker answers /health at the pod's address on its GROVE_PORT.
   */
  async startEphemeral(pod: Obj, c: Obj, exited: (code: number) => void): Promise<void> {
    const podName = pod.metadata.name as string;
    const r = this.pods.get(podName);
    const main = this.container(podName);
    if (!r || !main || r.stopped) throw new Error(`pod ${podName} is not running`);
    if (!IMAGE_REF.test(c.image ?? '') || (await podman(['image', 'exists', c.image])) !== 0) throw new Error(`image ${c.image} is missing`);
    const name = `${main.slice(0, -'-main'.length)}-eph-${c.name}`;
    const ip = pod.status.podIP as string;
    const proc = spawn(PODMAN, podmanRunArgs(pod, c, { name, ip, run: this.run, podDir: r.podDir, network: `container:${main}`, cgroupParent: r.cgroup }), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
    const code = new Promise<number>((res) => proc.once('close', (n) => res(n ?? 137)));
    r.ephemeral.set(c.name, { name, exited: code.then(() => undefined) });
    void code.then((n) => {
      if (!r.stopped) exited(n);
    });
    const port = Number((c.env ?? []).find((e: Obj) => e.name === 'GROVE_PORT')?.value);
    const end = Date.now() + (this.opts.readyTimeoutMs ?? 180_000);
    while (Date.now() < end && !r.stopped) {
      if (proc.exitCode !== null) throw new Error(`ephemeral container ${name} exited: ${stderr}`);
      if (await fetch(`http://${ip}:${port}/health`, { signal: AbortSignal.timeout(2000) }).then((res) => res.ok, () => false)) return;
      await new Promise((res) => setTimeout(res, 200));
    }
    throw new Error(`ephemeral container ${name} did not serve in time`);
  }

  /** Runs one container in the foreground (`podman run --rm`); resolves with its exit code. */
  private runContainer(r: Running, args: string[], name: string): Promise<number | null> {
    const proc = spawn(PODMAN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    r.name = name;
    r.proc = proc;
    r.stderr = '';
    proc.stderr!.on('data', (d) => (r.stderr = (r.stderr + String(d)).slice(-4000)));
    const code = new Promise<number | null>((res) => proc.once('close', (c) => res(c)));
    r.exited = code.then(() => undefined);
    return code.then((c) => {
      if (r.proc === proc) r.proc = null;
      return c;
    });
  }

  async stop(pod: Obj): Promise<void> {
    const r = this.pods.get(pod.metadata.name);
    this.pods.delete(pod.metadata.name);
    if (!r) return;
    r.stopped = true;
    const eph = [...r.ephemeral.values()];
    if (eph.length) await podman(['rm', '-f', '-t', '0', ...eph.map((e) => e.name)]);
    await Promise.all(eph.map((e) => e.exited));
    try {
      if (r.proc) await podman(['rm', '-f', '-t', String(Number(pod.spec.terminationGracePeriodSeconds ?? 30)), r.name]);
      await r.exited;
      rmSync(r.podDir, { recursive: true, force: true });
      removePodCgroup(r.cgroup);
    } finally {
      if (r.net) await this.nets?.remove(r.net);
    }
  }

  /** The main container is SIGKILLed (`podman kill`); the pod stays and its status turns Failed. */
  async kill(podName: string): Promise<void> {
    const name = this.container(podName);
    if (name) await podman(['kill', '--signal', 'KILL', name]);
  }

  /** Removes every container of this kubelet, running or not, and the pods' folders (the tests' afterAll). */
  async removeAll(): Promise<void> {
    const all = [...this.pods.values()];
    this.pods.clear();
    for (const r of all) r.stopped = true;
    const ids = (await podmanOut(['ps', '-aq', '--filter', `label=${LABEL}=${this.run}`])).split('\n').filter(Boolean);
    if (ids.length) await podman(['rm', '-f', '-t', '0', ...ids]);
    await Promise.all(all.flatMap((r) => [r.exited, ...[...r.ephemeral.values()].map((e) => e.exited)]));
    for (const r of all) rmSync(r.podDir, { recursive: true, force: true });
    removeRunCgroup(this.run);
    for (const r of all) if (r.net) await this.nets?.remove(r.net);
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
