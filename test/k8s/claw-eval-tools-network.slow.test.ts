// The agent's Bash of a Claw-Eval sandbox-tool episode on pods, on networks of their own: the podman kubelet with
// network 'policy' (k8s/sim/pod-network.ts: each pod its own network namespace, the rendered worker egress policy of
// a `deny` install enforced on the host). From the tools shell's Bash, the claw-eval pod's worker (the services' pod)
// and the orchestrator are unreachable; the orchestrator still drives both pods. Needs root, podman, iptables and the
// fixture's images (scripts/claw-eval-image.sh test/claw-env/fixtures/claw-eval-checkout).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClawEvalHost } from '../../claw-env/claw-eval/host.ts';
import { clawEvalImageName, clawEvalSandboxImageName } from '../../k8s/claw-eval-image.ts';
import { podRecords } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodmanKubelet, podmanImageMissing } from '../../k8s/sim/podman-kubelet.ts';
import { clawEvalPodHooks } from '../../server/claw-eval-pods.ts';
import { createReady, injectCaller, type Caller } from './claw-eval-drive.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const ROOT = path.resolve(__dirname, '../claw-env/fixtures/claw-eval-checkout');
const IMAGE = clawEvalImageName(ROOT);
const SANDBOX_IMAGE = clawEvalSandboxImageName(ROOT);
const missing = podmanImageMissing(IMAGE) ?? podmanImageMissing(SANDBOX_IMAGE) ?? (spawnSync('iptables', ['-V']).status === 0 ? null : 'no iptables');

describe.skipIf(missing !== null)(`the sandbox tools' Bash on networked pods${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let kubelet: PodmanKubelet;
  let sim: KubeSim;
  let orch: Orchestrator;
  let host: ClawEvalHost;
  let tmp: string | undefined;
  let orchPort = 0;
  const workerPort = 25000 + Math.floor(Math.random() * 1000);
  const api: Caller = (method, url, body) => injectCaller(orch.app)(method, url, body);
  const small = { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } };

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-claw-eval-tools-net-'));
    kubelet = new PodmanKubelet({ readyTimeoutMs: 240_000, network: 'policy' });
    sim = new KubeSim(kubelet);
    kubelet.sim = sim;
    await sim.start();
    orch = await startOrchestrator(sim, {
      workerPort,
      readyTimeoutSeconds: 240,
      network: 'deny',
      templates: {
        'claw-eval': { type: 'claw-eval', placement: 'pod', warmPool: 0, image: IMAGE, resources: small, sandboxTemplate: 'tools' },
        tools: { type: 'shell', placement: 'pod', warmPool: 0, image: SANDBOX_IMAGE, resources: small },
      },
    });
    await orch.app.listen({ host: '0.0.0.0', port: 0 });
    orchPort = (orch.app.server.address() as AddressInfo).port;
    host = new ClawEvalHost({ dir: ROOT, cacheDir: path.join(tmp, 'cache') });
    orch.backend.clawEval = clawEvalPodHooks(host);
  }, 600_000);

  afterAll(async () => {
    await orch?.close();
    await sim?.close();
    await kubelet?.removeAll();
    await host?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 120_000);

  test('Bash cannot reach the services\' pod nor the orchestrator; the orchestrator drives both pods', async () => {
    const id = await createReady(api, 'N05_shell');
    const pods = sim.listPodObjects() as Obj[];
    const episodeIp = pods.find((p) => podRecords(p as never).has(id))!.status.podIP as string;
    const toolsIp = pods.find((p) => [...podRecords(p as never).values()].some((x) => x.of === id))!.status.podIP as string;
    const hostOnTools = toolsIp.replace(/\.\d+$/, (d) => `.${Number(d.slice(1)) - 1}`);
    // the addresses are right: this process (the orchestrator's host) reaches both, so only the policy stops the pod
    expect((await fetch(`http://${episodeIp}:${workerPort}/health`)).status).toBe(200);
    expect((await fetch(`http://${hostOnTools}:${orchPort}/health`)).status).toBe(200);
    const probe = async (url: string) => {
      const c = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Bash', arguments: { command: `python3 -c "import urllib.request as u\ntry:\n  print('reached', u.urlopen('${url}', timeout=3).status)\nexcept Exception as e:\n  print('reached', e.code) if hasattr(e, 'code') else print('blocked', type(e).__name__)"` } });
      expect(c.json.status, c.text).toBe(200);
      return (c.json.body.stdout as string).trim();
    };
    const seen = {
      services: await probe(`http://${episodeIp}:${workerPort}/health`),
      orchestrator: await probe(`http://${hostOnTools}:${orchPort}/health`),
    };
    console.log(seen);
    expect(seen.services).toMatch(/^blocked/);
    expect(seen.orchestrator).toMatch(/^blocked/);
    // the shell's own loopback answers (its worker): the probe itself works
    expect(await probe(`http://127.0.0.1:${workerPort}/health`)).toMatch(/^reached/);
    expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    await until(() => sim.listPodObjects().length === 0, 'both pods deleted', 120_000);
  }, 600_000);
});
