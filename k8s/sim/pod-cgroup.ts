// The pod-level cgroup a kubelet makes for each pod (kubepods/.../pod<uid>), for the podman kubelet: every container
// of the pod, its ephemeral ones included, runs below it (`podman run --cgroup-parent`), and it carries the pod's
// limits, as the kubelet computes them: memory = the sum of its containers' memory limits and CPU quota = the sum of
// their CPU limits, each only when every container declares one. A container's CPU weight comes from its CPU request
// (cpu.shares = millicores x 1024 / 1000, at least 2): an ephemeral container, which may not declare resources, gets
// no limit of its own and the smallest weight, so it runs on what the pod has spare ("Ephemeral containers use spare
// resources already allocated to the pod", the API's own words) and yields the CPU to the pod's containers.
// cgroup v1 (a folder per controller) and v2 (one tree) both; the folders are named after the kubelet's run, and a
// run whose process is gone has its folders removed by the next kubelet (sweepStaleCgroups).
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cpuCores, memoryBytes } from './quantities.ts';
import type { Obj } from './wire.ts';

const FS = '/sys/fs/cgroup';
const ROOT = 'grove-sim';
const V2 = existsSync(path.join(FS, 'cgroup.controllers'));
const V1_CONTROLLERS = ['memory', 'cpu', 'pids'] as const;

/** The kubelet's CPU weight of a container: from its CPU request (none: the minimum, 2). */
export function cpuShares(c: Obj): number {
  const req = c.resources?.requests?.cpu ?? c.resources?.limits?.cpu;
  return req ? Math.max(2, Math.floor(cpuCores(String(req)) * 1024)) : 2;
}

/** The pod's own limits: a sum over its containers, only when every one declares it (the kubelet's rule). */
export function podLimits(pod: Obj): { memory?: number; cpus?: number } {
  const all: Obj[] = pod.spec?.containers ?? [];
  const sum = (get: (c: Obj) => number | undefined) => {
    const each = all.map(get);
    return each.length && each.every((v) => v !== undefined) ? each.reduce((a, b) => a! + b!, 0) : undefined;
  };
  const memory = sum((c) => (c.resources?.limits?.memory ? memoryBytes(String(c.resources.limits.memory)) : undefined));
  const cpus = sum((c) => (c.resources?.limits?.cpu ? cpuCores(String(c.resources.limits.cpu)) : undefined));
  return { ...(memory !== undefined ? { memory } : {}), ...(cpus !== undefined ? { cpus } : {}) };
}

/** Makes the pod's cgroup with its limits; returns the `--cgroup-parent` path (e.g. /grove-sim/<run>/<pod>). */
export function makePodCgroup(run: string, pod: Obj): string {
  const rel = path.join(ROOT, run, String(pod.metadata.name));
  const { memory, cpus } = podLimits(pod);
  const quota = cpus !== undefined ? Math.max(1000, Math.round(cpus * 100_000)) : undefined;
  if (V2) {
    // Controllers are handed down level by level (each parent's subtree_control) before a child may use them.
    let at = FS;
    for (const part of rel.split('/')) {
      writeFileSync(path.join(at, 'cgroup.subtree_control'), '+memory +cpu +pids');
      at = path.join(at, part);
      mkdirSync(at, { recursive: true });
    }
    if (memory !== undefined) writeFileSync(path.join(at, 'memory.max'), String(memory));
    if (quota !== undefined) writeFileSync(path.join(at, 'cpu.max'), `${quota} 100000`);
  } else {
    for (const c of V1_CONTROLLERS) mkdirSync(path.join(FS, c, rel), { recursive: true });
    if (memory !== undefined) writeFileSync(path.join(FS, 'memory', rel, 'memory.limit_in_bytes'), String(memory));
    if (quota !== undefined) {
      writeFileSync(path.join(FS, 'cpu', rel, 'cpu.cfs_period_us'), '100000');
      writeFileSync(path.join(FS, 'cpu', rel, 'cpu.cfs_quota_us'), String(quota));
    }
  }
  return `/${rel}`;
}

/** The host folders of a pod's cgroup (one per v1 controller, or the v2 one), for a test to read. */
export function podCgroupDirs(parent: string): string[] {
  return V2 ? [path.join(FS, parent)] : readdirSync(FS).map((c) => path.join(FS, c, parent)).filter((d) => existsSync(d));
}

/** Removes a pod's cgroup folders once its containers are gone (what podman left below them too). */
export function removePodCgroup(parent: string): void {
  for (const dir of podCgroupDirs(parent)) removeTree(dir);
}

/** Removes the folders of a kubelet's run (its pods' folders once they are empty: its removeAll). */
export function removeRunCgroup(run: string): void {
  for (const root of V2 ? [path.join(FS, ROOT)] : readdirSync(FS).map((c) => path.join(FS, c, ROOT))) {
    removeTree(path.join(root, run));
    // The common folder too once no other run uses it (rmdir refuses while one does).
    try {
      rmdirSync(root);
    } catch {
      // another run's folders are in it, or it is gone
    }
  }
}

/** Removes the cgroup folders of kubelet runs whose process is gone (their names hold its pid: run-<pid>-...). */
export function sweepStaleCgroups(alive: (pid: number) => boolean): void {
  const roots = V2 ? [path.join(FS, ROOT)] : readdirSync(FS).map((c) => path.join(FS, c, ROOT));
  for (const root of roots) {
    if (!existsSync(root)) continue;
    for (const run of readdirSync(root, { withFileTypes: true })) {
      const pid = Number(/^run-(\d+)-/.exec(run.name)?.[1]);
      if (run.isDirectory() && pid && !alive(pid)) removeTree(path.join(root, run.name));
    }
  }
}

/** rmdir bottom-up (a cgroup folder is removed by rmdir once it has no processes and no child folders). */
function removeTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(path.join(dir, e.name));
  try {
    rmdirSync(dir);
  } catch {
    // still has processes (a container being removed): the next sweep takes it
  }
}
