// A shell paired with a claw sandbox, with real containers (podman kubelet, images from scripts/images.sh): the
// claw sandbox's pod is a container of the worker image, the shell's worker an ephemeral container added to it
// (`podman run --network container:<the pod's>`, as uid 10002). From the shell: the Claw app over loopback (its
// audit and state show it), and the attacks — the worker's token, the apps' files, the worker's processes, the
// worker's API with the shell's own token, another pod's worker and apps. The orchestrator runs in this process.
// Note: the simulated pods share the host's network namespace (each on a 127.x address), so that another pod's
// loopback apps are reachable at all here is the simulation's; on a cluster each pod has its own namespace and the
// NetworkPolicy admits only the orchestrator. What is asserted here is that their tokens still keep the shell out.
// Limits: the claw pod's cgroup bounds the shell (its ephemeral container runs below it, k8s/sim/pod-cgroup.ts): a
// memory hog in the shell is killed by the kernel at the pod's limit, the shell's processes first (oom_score_adj
// 1000), and the claw app answers on.
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { L } from '../../k8s/labels.ts';
import { podRecords } from '../../k8s/records.ts';
import { ContainerCluster, containersMissing, WORKER_IMAGE } from './containers.ts';
import { startOrchestrator, until, type Orchestrator } from './harness.ts';

type Obj = Record<string, any>;
const missing = containersMissing();
const envOf = (c: Obj) => Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e.value])) as Record<string, string>;

describe.skipIf(missing !== null)(`shell paired with a claw sandbox, on worker containers${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: ContainerCluster;
  let orch: Orchestrator;
  const workerPort = 19000 + Math.floor(Math.random() * 1000);
  const pods = () => cluster.sim.listPodObjects();
  const podOf = (id: string) => pods().find((p) => podRecords(p as never).has(id))!;
  const api = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => {
    const r = await orch.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Obj }) });
    return { status: r.statusCode, json: r.body ? (r.json() as Obj) : {} };
  };
  const ready = async (body: Obj) => {
    const c = await api('POST', '/sandboxes', body);
    expect(c.status, JSON.stringify(c.json)).toBe(201);
    for (;;) {
      const w = await api('GET', `/sandboxes/${c.json.sandbox_id}/wait?timeout=30`);
      if (w.json.status !== 'creating') {
        expect(w.json.status, JSON.stringify(w.json)).toBe('ready');
        return w.json;
      }
    }
  };

  beforeAll(async () => {
    cluster = new ContainerCluster();
    await cluster.start({});
    // A loaded 2-core machine: a worker container's Node and Chromium start in 20-60 s here.
    orch = await startOrchestrator(cluster.sim, {
      workerImage: WORKER_IMAGE,
      imagePullPolicy: 'Never',
      workerPort,
      leaseDurationSeconds: 6,
      readyTimeoutSeconds: 240,
      // The claw pods' limits (browser workers): 1 GiB, what the memory hog below runs into.
      templates: { browser: { type: 'browser', placement: 'shared', maxPerWorker: 4, warmPool: 0, resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '1Gi' } } }, shell: { type: 'shell', placement: 'pod', warmPool: 0 } },
    });
  }, 300_000);

  afterAll(async () => {
    await orch?.close();
    await cluster?.cleanup();
    if (cluster) expect(await cluster.leftovers()).toEqual([]);
  }, 120_000);

  test('the shell reaches the Claw app over the pod loopback; it sees neither the worker token, the apps files nor the worker processes; closing it ends its container', async () => {
    const claw = await ready({ type: 'claw', world_seed: 4, apps: ['todo'] });
    const pod = podOf(claw.sandbox_id);
    const podName = pod.metadata.name as string;
    const workerToken = envOf(pod.spec.containers[0]).GROVE_API_KEY!;
    const main = cluster.kubelet.container(podName)!;
    // A file beside the apps' state in the worker's data dir (the pod's /tmp emptyDir), for the shell to look for.
    const marker = `/tmp/grove/marker-${Date.now()}`;
    expect((await cluster.exec(main, `echo apps-secret > ${marker} && ls /tmp/grove`)).code).toBe(0);

    const shell = await ready({ type: 'shell', claw_sandbox: claw.sandbox_id });
    const after = podOf(shell.sandbox_id);
    expect(after.metadata.name).toBe(podName);
    expect(after.metadata.labels[L.sandbox]).toBe(claw.sandbox_id);
    const rec = podRecords(after as never).get(shell.sandbox_id)!;
    expect(rec.paired).toEqual({ container: after.spec.ephemeralContainers[0].name, port: workerPort + 1 });
    const exec = async (command: string) => {
      const r = await api('POST', `/sandboxes/${shell.sandbox_id}/exec`, { command, timeout_s: 60 });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      return r.json as { exit_code: number; stdout: string; stderr: string };
    };

    // The app over loopback, with the pairing's environment; the claw sandbox's audit and state show the call.
    const who = await exec('id -u; echo "$CLAW_ORIGIN"');
    expect(who.stdout).toBe(`10002\n${claw.claw.origin}\n`);
    const made = await exec(`node -e 'fetch(process.env.CLAW_ORIGIN + "/api/tools/todo_create", { method: "POST", headers: { authorization: "Bearer " + process.env.CLAW_TOKEN, "content-type": "application/json" }, body: JSON.stringify({ title: "from the paired shell" }) }).then(async (r) => console.log(r.status, await r.text()))'`);
    expect(made.stdout, made.stderr).toMatch(/^200 .*from the paired shell/);
    const audit = (await api('GET', `/sandboxes/${claw.sandbox_id}/claw/audit`)).json.entries as Obj[];
    expect(audit.map((e) => [e.tool, e.status])).toEqual([['todo_create', 200]]);
    expect(JSON.stringify((await api('GET', `/sandboxes/${claw.sandbox_id}/claw/state`)).json.state)).toContain('from the paired shell');

    // Attacks. The worker's token: in no process environment the shell can read, nor anywhere in its file system.
    const procs = await exec(`for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null | grep -E '^GROVE_(API_KEY|PORT)='; done | sort -u; grep -rls -- '${workerToken}' /tmp /etc /var /run 2>/dev/null | head -3; echo done`);
    expect(procs.stdout).not.toContain(workerToken);
    expect(procs.stdout).toContain(`GROVE_PORT=${workerPort + 1}\n`);
    expect(procs.stdout).not.toContain(`GROVE_PORT=${workerPort}\n`);
    expect(procs.stdout).toMatch(/done\n$/);
    // The worker's processes: none in the shell's view (its own tini, worker and this command only).
    const ps = await exec(`for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done`);
    expect(ps.stdout).not.toMatch(/chrom/i);
    expect(ps.stdout.split('\n').filter((l) => /^node \/opt\/grove\/bin\/grove\.mjs worker/.test(l)).length, ps.stdout).toBe(1);
    // The apps' files: the worker's data dir is not in the shell's file system (its /tmp is its own layer).
    const files = await exec(`cat ${marker} 2>&1; ls /tmp/grove 2>&1; echo done`);
    expect(files.stdout).not.toContain('apps-secret');
    expect(files.stdout).toMatch(/No such file/);
    // The worker's API over the same loopback: no token, the shell's own worker token (readable: its own process).
    const own = await exec(`tr '\\0' '\\n' < /proc/1/environ | sed -n 's/^GROVE_API_KEY=//p'`);
    expect(own.stdout.trim()).toMatch(/^gwt_/);
    const podIp = after.status.podIP as string;
    const probe = (url: string, token: string) =>
      exec(`node -e 'fetch(${JSON.stringify(url)}, { headers: ${JSON.stringify(token ? { 'x-api-key': token } : {})} }).then((r) => console.log(r.status), (e) => console.log("unreachable", e.cause?.code))'`);
    for (const token of ['', own.stdout.trim()]) {
      const r = await probe(`http://${podIp}:${workerPort}/sandboxes`, token);
      expect(r.stdout.trim(), `token ${token.slice(0, 6)}`).toMatch(/^(401|403)$/);
    }

    // Another pod (a second claw sandbox): its worker and its apps refuse the shell without their tokens.
    const other = await ready({ type: 'claw', world_seed: 5, apps: ['todo'] });
    const otherPod = podOf(other.sandbox_id);
    expect(otherPod.metadata.name).not.toBe(podName);
    expect((await probe(`http://${otherPod.status.podIP}:${workerPort}/sandboxes`, own.stdout.trim())).stdout.trim()).toMatch(/^(401|403)$/);
    const otherApp = await exec(`node -e 'fetch(${JSON.stringify(other.claw.origin + '/api/tools/todo_create')}, { method: "POST", headers: { authorization: "Bearer " + process.env.CLAW_TOKEN, "content-type": "application/json" }, body: "{}" }).then((r) => console.log(r.status), (e) => console.log("unreachable", e.cause?.code))'`);
    expect(otherApp.stdout.trim()).toMatch(/^(401|403|unreachable)/);
    expect((await api('GET', `/sandboxes/${other.sandbox_id}/claw/audit`)).json.entries).toEqual([]);

    // Closing the shell ends its worker: the ephemeral container terminates (it stays in the spec); the claw lives on.
    expect((await api('DELETE', `/sandboxes/${shell.sandbox_id}`)).status).toBe(204);
    const ended = await until(() => pods().find((p) => p.metadata.name === podName && p.status.ephemeralContainerStatuses?.[0]?.state?.terminated), 'the shell container terminated', 60_000);
    expect(ended.spec.ephemeralContainers).toHaveLength(1);
    expect((await cluster.exec(main, 'echo alive')).stdout).toBe('alive\n');
    expect((await api('POST', `/sandboxes/${claw.sandbox_id}/claw/call`, { tool: 'todo_list', arguments: {} })).json.status).toBe(200);
    for (const id of [claw.sandbox_id, other.sandbox_id]) expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    await until(() => pods().length === 0, 'the claw pods deleted', 120_000);
  }, 600_000);
  test('the shell is bounded by the claw pod: a memory hog is killed at the pod limit (the shell first), the claw app and the shell answer on', async () => {
    const claw = await ready({ type: 'claw', world_seed: 6, apps: ['todo'] });
    const podName = podOf(claw.sandbox_id).metadata.name as string;
    const shell = await ready({ type: 'shell', claw_sandbox: claw.sandbox_id });
    const exec = async (command: string) => {
      const r = await api('POST', `/sandboxes/${shell.sandbox_id}/exec`, { command, timeout_s: 180 });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      return r.json as { exit_code: number; stdout: string; stderr: string };
    };
    // Its commands are the pod's first OOM victims.
    expect((await exec('cat /proc/self/oom_score_adj')).stdout).toBe('1000\n');
    // Its container runs below the pod's cgroup (the pod's 1 GiB), with the smallest CPU weight (no request).
    const main = cluster.kubelet.container(podName)!;
    const ephName = `${main.slice(0, -'-main'.length)}-eph-${podOf(shell.sandbox_id).spec.ephemeralContainers[0].name}`;
    const pid = spawnSync('podman', ['inspect', '--format', '{{.State.Pid}}', ephName], { encoding: 'utf8' }).stdout.trim();
    const groups = Object.fromEntries(readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n').map((l) => l.split(':')).map(([, c, p]) => [c || 'unified', p!]));
    const podGroup = groups.memory!.split('/').slice(0, -1).join('/');
    expect(podGroup).toMatch(new RegExp(`/grove-sim/${cluster.kubelet.run}/${podName}$`));
    expect(readFileSync(`/sys/fs/cgroup/memory${podGroup}/memory.limit_in_bytes`, 'utf8').trim()).toBe(String(2 ** 30));
    expect(readFileSync(`/sys/fs/cgroup/cpu${groups['cpu,cpuacct'] ?? groups.cpu}/cpu.shares`, 'utf8').trim()).toBe('2');

    // A memory hog past the pod's limit: the kernel kills it (SIGKILL, 137); the worker, its apps and the shell live.
    const t0 = Date.now();
    const hog = await exec(`node -e 'const a = []; for (;;) a.push(Buffer.alloc(64 << 20, 1))'; echo "exit=$?"`);
    expect(hog.stdout, hog.stderr).toBe('exit=137\n');
    // The kernel's OOM kill, counted on the victim's cgroup (the shell's container), for the pod's limit.
    expect(readFileSync(`/sys/fs/cgroup/memory${groups.memory}/memory.oom_control`, 'utf8')).toMatch(/oom_kill [1-9]/);
    const peak = Number(readFileSync(`/sys/fs/cgroup/memory${podGroup}/memory.max_usage_in_bytes`, 'utf8'));
    expect(peak).toBeLessThanOrEqual(2 ** 30);
    console.log(`memory hog in the paired shell killed after ${Date.now() - t0} ms; the pod's peak ${Math.round(peak / 2 ** 20)} MiB of its 1024`);
    expect((await api('POST', `/sandboxes/${claw.sandbox_id}/claw/call`, { tool: 'todo_list', arguments: {} })).json.status).toBe(200);
    expect((await exec('echo still here')).stdout).toBe('still here\n');
    expect(cluster.kubelet.exits).toEqual([]);
    expect(podOf(claw.sandbox_id).status.phase).toBe('Running');
    for (const id of [shell.sandbox_id, claw.sandbox_id]) expect((await api('DELETE', `/sandboxes/${id}`)).status).toBe(204);
    await until(() => pods().length === 0, 'the claw pod deleted', 120_000);
    await until(() => !existsSync(`/sys/fs/cgroup/memory${podGroup}`), "the pod's cgroup removed");
  }, 600_000);
});
