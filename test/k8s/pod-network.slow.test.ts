// "A worker pod cannot reach the orchestrator", for real: worker pods as podman containers on networks of their own
// (PodmanKubelet network 'policy', k8s/sim/pod-network.ts) with the worker egress NetworkPolicy the install renders
// (k8s/manifests.ts, network "deny": no egress) enforced on the host as a CNI's policy engine does. The orchestrator
// runs in this process and listens on the host's every address; it creates shell sandboxes on two pods and runs their
// commands (its connections into the pods pass). From a pod's shell: the orchestrator at the host's address on the
// pod's network, the host's loopback, and the other pod are all unreachable; the pod's own loopback answers.
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { podRecords } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodmanKubelet } from '../../k8s/sim/podman-kubelet.ts';
import { containersMissing, WORKER_IMAGE } from './containers.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const missing = containersMissing();

describe.skipIf(missing !== null)(`the worker egress policy enforced on container pods${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let kubelet: PodmanKubelet;
  let sim: KubeSim;
  let orch: Orchestrator;
  let orchPort = 0;
  const workerPort = 20000 + Math.floor(Math.random() * 1000);
  const api = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => {
    const r = await orch.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Obj }) });
    return { status: r.statusCode, json: r.body ? (r.json() as Obj) : {} };
  };
  const podOf = (id: string) => sim.listPodObjects().find((p) => podRecords(p as never).has(id))!;
  const ours = (what: 'network' | 'rules') =>
    what === 'network'
      ? spawnSync('podman', ['network', 'ls', '--filter', `label=grove.sim=${kubelet.run}`, '--format', '{{.Name}}'], { encoding: 'utf8' }).stdout.trim()
      : spawnSync('iptables', ['-t', 'mangle', '-S', 'PREROUTING'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l.includes(kubelet.run)).join('\n');

  beforeAll(async () => {
    kubelet = new PodmanKubelet({ readyTimeoutMs: 240_000, network: 'policy' });
    sim = new KubeSim(kubelet);
    kubelet.sim = sim;
    await sim.start();
    orch = await startOrchestrator(sim, {
      workerImage: WORKER_IMAGE,
      imagePullPolicy: 'Never',
      workerPort,
      readyTimeoutSeconds: 240,
      network: 'deny',
      templates: { browser: { type: 'browser', placement: 'shared', maxPerWorker: 4, warmPool: 0 }, shell: { type: 'shell', placement: 'pod', warmPool: 0 } },
    });
    await orch.app.listen({ host: '0.0.0.0', port: 0 });
    orchPort = (orch.app.server.address() as AddressInfo).port;
  }, 300_000);

  afterAll(async () => {
    await orch?.close();
    await sim?.close();
    await kubelet?.removeAll();
    if (kubelet) expect([ours('network'), ours('rules')]).toEqual(['', '']);
  }, 120_000);

  test('from a pod: the orchestrator, the host and another pod are unreachable; the orchestrator reaches the pods', async () => {
    const ready = async () => {
      const c = await api('POST', '/sandboxes', { type: 'shell' });
      expect(c.status, JSON.stringify(c.json)).toBe(201);
      for (;;) {
        const w = await api('GET', `/sandboxes/${c.json.sandbox_id}/wait?timeout=30`);
        if (w.json.status !== 'creating') {
          expect(w.json.status, JSON.stringify(w.json)).toBe('ready');
          return w.json.sandbox_id as string;
        }
      }
    };
    const [a, b] = await Promise.all([ready(), ready()]);
    const ipA = podOf(a).status.podIP as string;
    const ipB = podOf(b).status.podIP as string;
    expect(ipA).toMatch(/^10\.89\./);
    const hostOnA = ipA.replace(/\.\d+$/, (d) => `.${Number(d.slice(1)) - 1}`);
    // The orchestrator listens on the host's every address: this process reaches it at the host's address on A's
    // network (the route a pod would take), so only the policy stands between the pod and it.
    expect((await fetch(`http://${hostOnA}:${orchPort}/health`)).status).toBe(200);
    const probe = async (url: string) => {
      const r = await api('POST', `/sandboxes/${a}/exec`, {
        command: `node -e 'fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(3000) }).then((r) => console.log("reached", r.status), (e) => console.log("blocked", e.name, e.cause?.code ?? ""))'`,
        timeout_s: 60,
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200); // the orchestrator reached pod A
      return (r.json.stdout as string).trim();
    };
    const seen: Record<string, string> = {};
    for (const [what, url] of [
      ['the orchestrator at the host', `http://${hostOnA}:${orchPort}/health`],
      ["the host's loopback (the pod's own)", `http://127.0.0.1:${orchPort}/health`],
      ["another pod's worker", `http://${ipB}:${workerPort}/health`],
      ["the pod's own worker over its loopback", `http://127.0.0.1:${workerPort}/health`],
    ]) seen[what!] = await probe(url!);
    console.log(seen);
    expect(seen['the orchestrator at the host']).toMatch(/^blocked/);
    expect(seen["the host's loopback (the pod's own)"]).toMatch(/^blocked/);
    expect(seen["another pod's worker"]).toMatch(/^blocked/);
    expect(seen["the pod's own worker over its loopback"]).toMatch(/^reached/);
    // The control: without pod A's rule the same probes reach the orchestrator and pod B, so the policy (not a route
    // or a firewall of this machine) is what stopped them.
    const ruleA = ours('rules').split('\n').find((l) => l.includes(`-s ${ipA}/32`));
    expect(ruleA, ours('rules')).toBeDefined();
    expect(spawnSync('iptables', ['-t', 'mangle', ...ruleA!.replace(/^-A /, '-D ').replace(/"/g, '').split(' ')]).status).toBe(0);
    expect(await probe(`http://${hostOnA}:${orchPort}/health`)).toBe('reached 200');
    expect(await probe(`http://${ipB}:${workerPort}/health`)).toMatch(/^reached/);
    // Pod B is served too (the orchestrator's connections into each pod pass).
    expect((await api('POST', `/sandboxes/${b}/exec`, { command: 'echo b', timeout_s: 30 })).json.stdout).toBe('b\n');
    for (const id of [a, b]) expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    await until(() => sim.listPodObjects().length === 0, 'the pods deleted', 120_000);
    await until(() => ours('network') === '' && ours('rules') === '', "the pods' networks and rules removed", 60_000);
  }, 600_000);
});
