// Claw-Eval sandbox-tool tasks on worker pods that are real containers (the simulated API server with the podman
// kubelet): the episode's pod a container of the fixture's claw-eval image (the services, the trace), its tools shell
// a container of the sandbox image (k8s/Dockerfile.claw-eval-sandbox: the worker image with the sandbox server's
// Python, no checkout), both run as the pod specs say (uid 10001, read-only root, no capabilities). The orchestrator
// (this process) runs Bash, Read, Write on the shell pod and grades: equal to the same trajectory on one machine (the
// batch with a local shell sandbox). The agent's shell: no checkout, none of the services' processes, no writes
// outside /workspace. Nothing is left. Needs root, podman, localhost/grove-worker:dev and the fixture's images:
//   scripts/claw-eval-image.sh test/claw-env/fixtures/claw-eval-checkout
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClawEvalHost, prepareClawEvalCheckout, type PreparedCheckout } from '../../claw-env/claw-eval/host.ts';
import { clawEvalImageName, clawEvalSandboxImageName } from '../../k8s/claw-eval-image.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodmanKubelet, podmanImageMissing } from '../../k8s/sim/podman-kubelet.ts';
import { podRecords } from '../../k8s/records.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { clawEvalPodHooks } from '../../server/claw-eval-pods.ts';
import { startServer, type RunningServer } from '../../server/server.ts';
import { createReady, drive, injectCaller, oneMachineWithTools, type Caller, type Turn } from './claw-eval-drive.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const ROOT = path.resolve(__dirname, '../claw-env/fixtures/claw-eval-checkout');
const IMAGE = clawEvalImageName(ROOT);
const SANDBOX_IMAGE = clawEvalSandboxImageName(ROOT);
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const missing = podmanImageMissing(IMAGE) ?? podmanImageMissing(SANDBOX_IMAGE);
const devNull = { write: () => true } as unknown as NodeJS.WritableStream;
const BASH: Turn[] = [{ call: 'Bash', args: { command: 'wc -l fixtures/data.txt' } }, { say: 'data.txt has 3 lines.' }];

describe.skipIf(missing !== null)(`Claw-Eval sandbox tools on podman pods${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const kubelet = new PodmanKubelet({ readyTimeoutMs: 240_000 });
  const sim = new KubeSim(kubelet);
  kubelet.sim = sim;
  let orch: Orchestrator;
  let host: ClawEvalHost;
  let prepared: PreparedCheckout;
  let local: RunningServer;
  let tmp: string | undefined;
  const api: Caller = (method, url, body) => injectCaller(orch.app)(method, url, body);
  const small = { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } };

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-claw-eval-tools-'));
    prepared = await prepareClawEvalCheckout({ dir: ROOT, cacheDir: path.join(tmp, 'cache'), indexUrl: INDEX });
    await sim.start();
    orch = await startOrchestrator(sim, {
      workerPort: 24000 + Math.floor(Math.random() * 1000),
      readyTimeoutSeconds: 240,
      templates: {
        'claw-eval': { type: 'claw-eval', placement: 'pod', warmPool: 0, image: IMAGE, resources: small, sandboxTemplate: 'tools' },
        tools: { type: 'shell', placement: 'pod', warmPool: 0, image: SANDBOX_IMAGE, resources: small },
      },
    });
    host = new ClawEvalHost({ dir: ROOT, cacheDir: path.join(tmp, 'cache'), indexUrl: INDEX });
    orch.backend.clawEval = clawEvalPodHooks(host);
    local = await startServer(loadConfig({ env: {}, flags: { dataDir: path.join(tmp, 'local'), host: '127.0.0.1', port: 0, apiKey: 'local-key-0123456789abcdef' } }), { browser: false, logStream: devNull });
  }, 600_000);

  afterAll(async () => {
    await orch?.close();
    await kubelet.removeAll();
    await sim.close();
    await local?.close();
    await host?.close();
    if (prepared) rmSync(prepared.tmp, { recursive: true, force: true });
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const oneMachine = (task: string, turns: Turn[]) => oneMachineWithTools({ url: local.url, apiKey: 'local-key-0123456789abcdef' }, { root: ROOT, prepared, indexUrl: INDEX }, task, turns);

  test('Bash, Write, Read on the tools container; graded as one machine grades; the agent\'s shell holds no checkout, sees no service, writes only /workspace', async () => {
    const id = await createReady(api, 'N05_shell');
    const pods = sim.listPodObjects() as Obj[];
    const episodePod = pods.find((p) => podRecords(p as never).has(id))!;
    const toolsPod = pods.find((p) => [...podRecords(p as never).values()].some((x) => x.of === id))!;
    expect(toolsPod.spec.containers[0].image).toBe(SANDBOX_IMAGE);
    expect(toolsPod.spec.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    const bash = async (command: string) => (await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Bash', arguments: { command } })).json;
    const c = await bash('wc -l fixtures/data.txt; id -u; pwd');
    expect(c.status, JSON.stringify(c)).toBe(200);
    expect(c.body.stdout).toBe('3 fixtures/data.txt\n10001\n/workspace\n');
    // no checkout (tasks, graders) in the agent's shell; none of the services' processes; no write outside /workspace
    expect((await bash('ls /opt/grove-claw-eval; ls /opt/grove-claw-eval/checkout 2>&1')).body.stdout).toMatch(/^requirements-sandbox-server\.txt\nsandbox\nls: cannot access '\/opt\/grove-claw-eval\/checkout': No such file or directory\n$/);
    expect((await bash('cat /proc/*/cmdline 2>/dev/null | tr "\\0" " "')).body.stdout).not.toMatch(/grove_claw_eval_driver|mock_services/);
    const ro = await bash('touch /opt/x /etc/x /usr/x 2>&1; echo rc=$?');
    expect(ro.body.stdout).toMatch(/Read-only file system[\s\S]*rc=1/);
    const outside = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Write', arguments: { file_path: '/etc/grove-x', content: 'x' } });
    expect(outside.json.status).toBeGreaterThanOrEqual(400);
    expect((await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Write', arguments: { file_path: 'out.txt', content: 'hello' } })).json.status).toBe(200);
    expect(JSON.stringify((await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Read', arguments: { file_path: 'out.txt' } })).json.body)).toContain('hello');
    // the services' container sees none of the agent's files
    expect(() => execFileSync('/usr/bin/podman', ['exec', kubelet.container(episodePod.metadata.name)!, 'ls', '/workspace/out.txt'], { stdio: 'pipe' })).toThrow();
    expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    await until(() => sim.listPodObjects().length === 0, 'both pods deleted', 60_000);

    const r2 = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N05_shell' });
    await api('GET', `/sandboxes/${r2.json.sandbox_id}/wait?timeout=240`);
    const { grade } = await drive(api, r2.json.sandbox_id, BASH);
    expect(grade.task_score).toBe(1);
    expect([grade.task_score, grade.scores]).toEqual(await oneMachine('N05_shell', BASH));
    await api('DELETE', `/sandboxes/${r2.json.sandbox_id}`);
    await until(() => sim.listPodObjects().length === 0, 'no pod left', 60_000);
    expect(execFileSync('/usr/bin/podman', ['ps', '-aq', '--filter', `label=grove.sim=${kubelet.run}`], { encoding: 'utf8' }).trim()).toBe('');
  }, 900_000);
});
