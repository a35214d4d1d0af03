// The podman kubelet's translation of a pod spec into `podman run` arguments: the worker pod's secure defaults
// arrive as podman flags, and nothing in a pod spec becomes a podman option, a host path or a copy of the host's
// environment (no child process runs here).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { parseK8sConfig } from '../../k8s/config.ts';
import { workerPod } from '../../k8s/pods.ts';
import { pairedShellContainer } from '../../k8s/paired-shell.ts';
import { cpuShares, podLimits } from '../../k8s/sim/pod-cgroup.ts';
import { cpuCores, memoryBytes, podmanRunArgs } from '../../k8s/sim/podman-kubelet.ts';

const podDir = mkdtempSync(path.join(os.tmpdir(), 'grove-podman-args-'));
afterAll(() => rmSync(podDir, { recursive: true, force: true }));

const cfg = parseK8sConfig({ workerImage: 'localhost/grove-worker:dev' });
const opts = { name: 'grove-sim-x-main', ip: '127.3.0.7', run: 'run-1', podDir };
const podOf = (template: string) => JSON.parse(JSON.stringify(workerPod(cfg, template, `grove-${template}-0123456789`, 'gwt_token')));

describe('podman kubelet: pod spec to podman run', () => {
  test('a browser worker pod: non-root, read-only, no capabilities, no_new_privs, shm and limits, its address', () => {
    const pod = podOf('browser');
    const args = podmanRunArgs(pod, pod.spec.containers[0], opts);
    expect(args.slice(0, 4)).toEqual(['run', '--rm', '--pull=never', '--network=host']);
    expect(args).toEqual(expect.arrayContaining(['--user=10001:10001', '--read-only', '--read-only-tmpfs=false', '--cap-drop=all', '--security-opt=no-new-privileges', `--shm-size=${512 * 2 ** 20}`, `--memory=${2 * 2 ** 30}`, '--cpus=2']));
    expect(args).toContain('GROVE_HOST=127.3.0.7');
    expect(args).toContain('GROVE_API_KEY=gwt_token');
    expect(args).toContain(`--volume=${path.join(podDir, 'vol-tmp')}:/tmp:rw`);
    expect(statSync(path.join(podDir, 'vol-tmp')).mode & 0o777).toBe(0o777);
    expect(args.slice(-2)).toEqual(['localhost/grove-worker:dev', 'worker']);
  });

  test("the pod's cgroup as the kubelet sizes it: its containers' limits summed; an ephemeral container below it with the smallest CPU weight", () => {
    const pod = podOf('browser');
    expect(podLimits(pod)).toEqual({ memory: 2 * 2 ** 30, cpus: 2 });
    expect(podLimits({ spec: { containers: [pod.spec.containers[0], { name: 'x', image: 'x:1' }] } })).toEqual({}); // one without limits: none
    expect(cpuShares(pod.spec.containers[0])).toBe(1024); // its request, 1 CPU
    const shell = pairedShellContainer(cfg, pod, { container: 'shell-sb-1', port: cfg.workerPort + 1 }, 'gwt_shell');
    expect(cpuShares(shell)).toBe(2);
    const args = podmanRunArgs(pod, shell, { ...opts, name: 'grove-sim-x-eph-shell-sb-1', network: 'container:grove-sim-x-main', cgroupParent: '/grove-sim/run-1/grove-browser-0123456789' });
    expect(args).toEqual(expect.arrayContaining(['--network=container:grove-sim-x-main', '--cgroup-parent=/grove-sim/run-1/grove-browser-0123456789', '--cpu-shares=2', 'GROVE_OOM_SCORE_ADJ=1000', '--user=10002:10002']));
    expect(args.some((a) => a.startsWith('--memory') || a.startsWith('--cpus'))).toBe(false);
  });

  test('quantities as Kubernetes reads them', () => {
    expect(memoryBytes('512Mi')).toBe(536870912);
    expect(memoryBytes('1G')).toBe(1e9);
    expect(cpuCores('500m')).toBe(0.5);
    expect(() => memoryBytes('1 GB')).toThrow();
  });

  test('refused: an image that reads as an option, a globbing or option-like env name, a privileged pod, a mount path out of bounds', () => {
    const mutate = (f: (pod: any) => void) => {
      const pod = podOf('shell');
      f(pod);
      return () => podmanRunArgs(pod, pod.spec.containers[0], opts);
    };
    expect(mutate((p) => (p.spec.containers[0].image = '--privileged'))).toThrow(/image reference refused/);
    expect(mutate((p) => (p.spec.containers[0].image = 'x y'))).toThrow(/image reference refused/);
    expect(mutate((p) => p.spec.containers[0].env.push({ name: 'GROVE*', value: '' }))).toThrow(/environment variable name refused/);
    expect(mutate((p) => p.spec.containers[0].env.push({ name: 'A=B', value: 'c' }))).toThrow(/environment variable name refused/);
    expect(mutate((p) => (p.spec.containers[0].securityContext.privileged = true))).toThrow(/privileged/);
    expect(mutate((p) => (p.spec.containers[0].volumeMounts[1].mountPath = '/workspace/../etc'))).toThrow(/mount path refused/);
    expect(mutate((p) => (p.spec.volumes[1] = { name: 'workspace', hostPath: { path: '/' } }))).toThrow(/only emptyDir/);
    for (const sub of ['..', '../x', 'a/b', '/etc', '']) expect(mutate((p) => (p.spec.containers[0].volumeMounts[1].subPath = sub)), sub).toThrow(/subPath refused/);
    // A value is one argument, whatever it holds.
    const pod = podOf('shell');
    pod.spec.containers[0].env.push({ name: 'X', value: '--privileged --volume=/:/host' });
    const args = podmanRunArgs(pod, pod.spec.containers[0], opts);
    expect(args).toContain('X=--privileged --volume=/:/host');
    expect(args).not.toContain('--privileged');
  });

  test("a shell pod on an image of its own: the image's /testbed copied by its own init container, mounted by subPath", () => {
    const pod = JSON.parse(JSON.stringify(workerPod(cfg, 'shell', 'grove-shell-0123456789', 'gwt_token', { owner: 'o', sandboxId: 'sb_1' }, 'localhost/swe:1')));
    const init = pod.spec.initContainers[1];
    const initArgs = podmanRunArgs(pod, init, { ...opts, name: 'grove-sim-x-init1' });
    expect(initArgs).toEqual(expect.arrayContaining(['--user=10001:10001', '--cap-drop=all', `--volume=${path.join(podDir, 'vol-grove-owned-0')}:/mnt/grove-owned-0:rw`]));
    expect(initArgs.slice(-1)).toEqual(['localhost/swe:1']);
    const main = podmanRunArgs(pod, pod.spec.containers[0], opts);
    expect(main).toContain(`--volume=${path.join(podDir, 'vol-grove-owned-0', 'd')}:/testbed:rw`);
  });
});
