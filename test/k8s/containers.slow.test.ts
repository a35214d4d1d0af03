// The Kubernetes backend with real containers: the images scripts/images.sh builds, worker pods run by the podman
// kubelet (`podman run` of the pod's image on the pod's address; read-only, non-root, no capabilities, as the pod
// spec says), orchestrators as containers of the orchestrator image against the simulated API server. Browser and
// shell flows through the unchanged REST API and client, a shell sandbox on an image of its own (init container),
// a worker container killed, an orchestrator container killed and its half-made sandbox reconciled by the other.
// Skipped, with the reason, only when podman or the images are missing (CI builds them: scripts/images.sh).
// test/k8s/e2e.slow.test.ts is the same with host processes (the quick local loop).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chownSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GroveApiError } from '../../client/index.ts';
import { L } from '../../k8s/labels.ts';
import { podRecords } from '../../k8s/records.ts';
import { readEpisode } from '../../recording/reader.ts';
import { workerToken } from '../../k8s/token.ts';
import { runSwe } from '../../runner/swe/run.ts';
import { clientShellProvider } from '../../runner/swe/shell-session.ts';
import { fixtureInstances } from '../../swe-env/fixture.ts';
import { officialImageName } from '../../swe-env/official-image.ts';
import { evaluate, offlineTask, runPlan } from './offline-episode.ts';
import { buildRootOwnedLayout, removeImages, runAsPodUser } from './swe-layout.ts';
import { API_KEY, ContainerCluster, containersMissing, TOKEN_SECRET, type OrchestratorContainer } from './containers.ts';
import { until } from './harness.ts';

const missing = containersMissing();
/** A shell sandbox image (scripts/swe-images.sh builds it; scripts/images.sh builds on it). */
const SWE_IMAGE = 'localhost/grove-swe-base:bookworm';
/** Where the SWE-bench layout images of this run are named (`<namespace>/sweb.eval.x86_64.<id>:latest`). */
const SWE_NS = `localhost/grove-k8s-swe-${process.pid}`;
const sweImages: string[] = [];
const PAGE = `<!doctype html><title>start</title>
<button style="position:absolute;left:0;top:0;width:400px;height:300px" onclick="document.title='clicked'">go</button>`;

describe.skipIf(missing !== null)(`kubernetes backend with real containers${missing ? ` (skipped: ${missing})` : ''}`, { timeout: 600_000 }, () => {
  let cluster: ContainerCluster;
  let site: http.Server;
  let siteUrl = '';
  let allow: string[] = [];
  let a: OrchestratorContainer;
  const pods = () => cluster.sim.listPodObjects();
  const podOf = (sandbox: string) => pods().find((p) => p.metadata.labels[L.sandbox] === sandbox);

  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    allow = [siteUrl.slice(7, -1)];
    cluster = new ContainerCluster();
    await cluster.start({
      workerPort: 18000 + Math.floor(Math.random() * 1000),
      leaseDurationSeconds: 6,
      reconcileIntervalSeconds: 1,
      // Container starts on a loaded 2-core machine: a worker's Node and Chromium start in 20-60 s here.
      readyTimeoutSeconds: 240,
      shellImages: ['localhost/grove-swe-base:*', `${SWE_NS}/*`],
      templates: {
        browser: { type: 'browser', placement: 'shared', maxPerWorker: 4, warmPool: 1 },
        shell: { type: 'shell', placement: 'pod', warmPool: 0 },
      },
    });
    a = await cluster.orchestrator('orch-a');
  }, 300_000);

  afterAll(async () => {
    await removeImages(sweImages);
    await cluster?.cleanup();
    if (site) await new Promise((r) => site.close(r));
    // Nothing of this run is left in podman.
    if (cluster) expect(await cluster.leftovers()).toEqual([]);
  }, 120_000);

  test('browser flow: a warm worker container claimed, stepped, screenshotted, deleted; the observation carries its mime type', async () => {
    await until(() => pods().some((p) => p.metadata.labels[L.state] === 'warm' && p.status.phase === 'Running'), 'a warm browser worker', 300_000);
    const sb = await cluster.create(a.client, { type: 'browser', start_url: siteUrl, network: { allow }, record: true });
    expect(sb.status).toBe('ready');
    const pod = pods().find((p) => p.metadata.labels[L.state] === 'claimed')!;
    expect(pod.metadata.labels[L.owner]).toBe('orch-a');
    // The pod's container runs as the pod spec says: uid 10001, no capabilities, no_new_privs, read-only root.
    const ctr = cluster.kubelet.container(pod.metadata.name)!;
    const inside = await cluster.exec(ctr, 'id -u; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/1/status; touch /opt/grove/x 2>&1; touch /tmp/ok && echo tmp-ok');
    expect(inside.stdout).toMatch(/^10001\nCapEff:\s+0{16}\nCapBnd:\s+0{16}\nNoNewPrivs:\s+1\n.*Read-only file system\ntmp-ok\n$/);

    const step = await a.client.step(sb.sandbox_id, { action: { action: 'click', x: 100, y: 100, space: 'css_px' } });
    expect(step.observation.title).toBe('clicked');
    expect(step.observation.screenshot).toMatchObject({ mime: 'image/jpeg', width: 1280 });
    // The same through plain HTTP (no client in between), and the worker's own answer beside it.
    const raw = await stepAnswer(`${a.url}/sandboxes/${sb.sandbox_id}/step`, API_KEY);
    expect(raw.observation.screenshot.mime).toBe('image/jpeg');
    expect(Buffer.from(raw.observation.screenshot.base64, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    // The worker's own answer (its address, its sandbox id, the pod's token) carries the same screenshot fields.
    const wid = podRecords(pod as never).get(sb.sandbox_id)!.worker!;
    const direct = await stepAnswer(`http://${pod.status.podIP}:${pod.spec.containers[0].ports[0].containerPort}/sandboxes/${wid}/step`, workerToken(TOKEN_SECRET, pod.metadata.name));
    const fields = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'base64'));
    expect(fields(raw.observation.screenshot)).toEqual(fields(direct.observation.screenshot));
    const obs = await a.client.observation(sb.sandbox_id);
    expect(obs.screenshot?.mime).toBe('image/jpeg');
    const binary = await a.client.stepBinary(sb.sandbox_id, { action: { action: 'wait', ms: 10 } });
    expect(binary.result.observation.screenshot?.mime).toBe('image/jpeg');
    expect(binary.image?.mime).toBe('image/jpeg');
    expect([...binary.image!.bytes.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    const shot = await a.client.screenshot(sb.sandbox_id);
    expect(shot.mime).toBe('image/jpeg');
    expect([...shot.bytes.slice(0, 2)]).toEqual([0xff, 0xd8]);

    await a.client.deleteSandbox(sb.sandbox_id);
    // Recorded by the orchestrator container into its data folder (a volume here, a PVC on a cluster).
    const rec = path.join(a.dataDir, 'recordings', sb.sandbox_id);
    expect(readFileSync(path.join(rec, 'steps.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    expect(existsSync(path.join(rec, 'episode.json'))).toBe(true);
    // The empty shared worker's container is removed; the pool refills with a new one.
    await until(() => !cluster.kubelet.container(pod.metadata.name) && !pods().some((p) => p.metadata.name === pod.metadata.name), 'the used worker gone', 120_000);
    expect(cluster.sim.invalid).toEqual([]);
  });

  test('a recorded sandbox stepped through two orchestrator containers in turn: one recording on their shared volume', async () => {
    const shared = path.join(cluster.dir, 'recordings');
    mkdirSync(shared);
    chownSync(shared, 10001, 10001);
    const mount = [`--volume=${shared}:/var/lib/grove/recordings:rw`, '--env', 'GROVE_RECORDINGS_DIR=/var/lib/grove/recordings'];
    const [r1, r2] = [await cluster.orchestrator('orch-r1', mount), await cluster.orchestrator('orch-r2', mount)];
    const sb = await cluster.create(r1.client, { type: 'browser', start_url: siteUrl, network: { allow }, record: true, record_har: true });
    const click = await r1.client.step(sb.sandbox_id, { action: { action: 'click', x: 100, y: 100, space: 'css_px' } });
    expect(click.observation.title).toBe('clicked');
    for (const o of [r2, r1]) expect((await o.client.step(sb.sandbox_id, { action: { action: 'wait', ms: 10 } })).observation.screenshot?.mime).toBe('image/jpeg');
    const last = await r2.client.step(sb.sandbox_id, { action: { action: 'answer', text: 'clicked' } });
    expect(last.done).toBe(true);
    await r2.client.deleteSandbox(sb.sandbox_id);
    const dir = path.join(shared, sb.sandbox_id);
    const episode = await until(async () => {
      const v = await readEpisode(dir).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'the episode ended on the shared volume', 60_000);
    expect(episode.steps.map((x) => [x.step, x.actions[0]?.action.action, x.frame])).toEqual([
      [1, 'click', 'frames/0001.jpg'], [2, 'wait', 'frames/0002.jpg'], [3, 'wait', 'frames/0003.jpg'], [4, 'answer', 'frames/0004.jpg'],
    ]);
    expect(episode.steps[0]!.title).toBe('clicked');
    expect(episode.meta).toMatchObject({ status: 'complete', steps: 4, answer: 'clicked', termination: { reason: 'task_completed' } });
    // The HAR the worker recorded, fetched by r2 (the replica that deleted the sandbox) into the same episode.
    const har = JSON.parse(readFileSync(path.join(dir, 'network.har'), 'utf8'));
    expect(har.log.entries.some((e: { request: { url: string } }) => e.request.url === siteUrl)).toBe(true);
    for (const o of [r1, r2]) expect(await cluster.stopOrchestrator(o)).toBe(0);
  });

  test('shell flow: one container per sandbox, exec and files in its /workspace', async () => {
    const sb = await cluster.create(a.client, { type: 'shell' });
    const pod = podOf(sb.sandbox_id)!;
    expect(pod.metadata.labels[L.template]).toBe('shell');
    const r = await a.client.exec(sb.sandbox_id, { command: 'echo hello from $(pwd) as $(id -u); touch /etc/x 2>/dev/null || echo read-only' });
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toBe('hello from /workspace as 10001\nread-only\n');
    await a.client.uploadFile(sb.sandbox_id, '/workspace/a.txt', 'payload');
    expect(new TextDecoder().decode(await a.client.downloadFile(sb.sandbox_id, '/workspace/a.txt'))).toBe('payload');
    await a.client.deleteSandbox(sb.sandbox_id);
    await until(() => !pods().some((p) => p.metadata.name === pod.metadata.name), 'shell pod deleted', 60_000);
    expect(cluster.kubelet.container(pod.metadata.name)).toBeUndefined();
  });

  // Found by this test on the real image (2026-12-04): a worker started from the copied runtime in an image without
  // Chromium exited 2 (server/server.ts checked Chromium before serving); a shell pod's worker (`pod` isolation) now
  // starts without a browser environment.
  test("a shell sandbox on an image of its own: an init container copies the worker runtime into the pod's image", async () => {
    const sb = await cluster.create(a.client, { type: 'shell', image: SWE_IMAGE });
    const pod = podOf(sb.sandbox_id)!;
    expect(pod.spec.containers[0].image).toBe(SWE_IMAGE);
    // The commands run on the image's own file system (Python 3.11 of the SWE base, not in the worker image).
    const r = await a.client.exec(sb.sandbox_id, { command: 'python3 -c "import sys; print(sys.version_info[:2])"; id -u; test -x /usr/bin/chromium || echo no-chromium' });
    expect(r.stdout).toBe('(3, 11)\n10001\nno-chromium\n');
    await a.client.deleteSandbox(sb.sandbox_id);
    await until(() => !pods().some((p) => p.metadata.name === pod.metadata.name), 'image pod deleted', 60_000);
  });

  test('a SWE-bench instance graded in a worker container on its own image, whose /testbed is root\'s: FULL', async () => {
    const inst = (await fixtureInstances())[0]!;
    const image = officialImageName(inst, { namespace: SWE_NS, tag: 'latest' });
    sweImages.push(image);
    await buildRootOwnedLayout(cluster.dir, [image]);
    // In the image itself the pod's user can neither write the repository nor make git trust it.
    expect(await runAsPodUser(image, 'stat -c %u /testbed/textkit; touch /testbed/textkit/x 2>&1 | grep -c denied')).toBe('0\n1\n');
    // `grove swe run --images swebench` against the orchestrator container: the gold patch applied by git and graded by
    // the eval script in the instance's image, on a pod whose init container copied /testbed to the pod's user.
    const { results } = await runSwe({
      instances: [inst], sources: {}, provider: clientShellProvider(a.client), concurrency: 1, outDir: path.join(cluster.dir, 'swe-run'), runId: 'k8s',
      mode: { kind: 'patches', patches: new Map([[inst.instance_id, inst.patch ?? null]]), model: 'gold' },
      official: { namespace: SWE_NS, tag: 'latest' },
    });
    expect(results[0]!.evaluation?.error, results[0]!.evaluation?.test_log.slice(-2000)).toBeUndefined();
    expect(results[0]!.evaluation?.resolution).toBe('FULL');
    const sb = await cluster.create(a.client, { type: 'shell', image });
    const r = await a.client.exec(sb.sandbox_id, { command: 'stat -c %u /testbed/textkit; id -u; git -C /testbed status --porcelain | wc -l' });
    expect(r.stdout).toBe('10001\n10001\n0\n');
    await a.client.deleteSandbox(sb.sandbox_id);
  });

  test('an offline-site task on a browser pod: the worker container serves the sites, the episode is scored by its reward', async () => {
    const task = offlineTask('Shop--0');
    const sb = await cluster.create(a.client, { type: 'browser', task: { suite: 'offline', id: task.id }, som: true });
    const first = await a.client.observation(sb.sandbox_id, { screenshot: 'none' });
    // The sites of the worker container, on its loopback; the orchestrator container runs none.
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/shop\/.*grove_session=gym-/);
    const answer = await runPlan(a.client, sb.sandbox_id, task);
    const scored = await evaluate(a.client, sb.sandbox_id, answer);
    expect(scored.verdict?.outcome, scored.verdict?.reasoning).toBe('success');
    expect(scored.reward).toBe(1);
    await a.client.deleteSandbox(sb.sandbox_id);
  });

  test('a claw sandbox in a worker container: calls, audit and grading; a paired browser on its pod; other pages blocked', async () => {
    const claw = await cluster.create(a.client, { type: 'claw', task_id: 'hand-doc-summary' } as never);
    const json = async (method: 'GET' | 'POST', p: string, body?: unknown) => JSON.parse(await (await a.client.request(method, p, body)).text());
    const call = await json('POST', `/sandboxes/${claw.sandbox_id}/claw/call`, { tool: 'mail_list_messages', arguments: {} });
    expect(call).toMatchObject({ status: 200, seq: 1 });
    const origin = claw.claw!.origin;
    const b = await cluster.create(a.client, { type: 'browser', claw_sandbox: claw.sandbox_id });
    const podOfRecord = (id: string) => pods().find((p) => podRecords(p as never).get(id)?.state === 'ready')?.metadata.name;
    expect(podOfRecord(b.sandbox_id)).toBe(podOfRecord(claw.sandbox_id));
    const app = claw.claw!.apps[0]!;
    const page = await a.client.step(b.sandbox_id, { action: { action: 'goto', url: `${origin}/${app}` }, screenshot: 'none' });
    expect(page.observation.last_action_error).toBeNull();
    const audit = await json('GET', `/sandboxes/${claw.sandbox_id}/claw/audit`);
    expect(audit.entries[0]).toMatchObject({ tool: 'mail_list_messages', actor: 'tool' });
    expect(audit.entries.some((e: { actor: string }) => e.actor === 'web')).toBe(true);
    const graded = await json('POST', `/sandboxes/${claw.sandbox_id}/claw/grade`, {});
    expect(graded).toMatchObject({ task_id: 'hand-doc-summary', passed: false });
    // A page of another sandbox reaches neither the claw apps nor the orchestrator.
    const other = await cluster.create(a.client, { type: 'browser' });
    for (const url of [`${origin}/login?token=${claw.claw!.token}`, `${a.url}/sandboxes`]) {
      const r = await a.client.step(other.sandbox_id, { action: { action: 'goto', url }, screenshot: 'none' });
      expect(r.observation.last_action_error?.code, url).toBe('network_blocked');
    }
    for (const id of [other.sandbox_id, b.sandbox_id, claw.sandbox_id]) await a.client.deleteSandbox(id);
  });

  test('a worker container killed: the sandbox answers 410 sandbox_closed, the failed pod is reconciled away', async () => {
    const sb = await cluster.create(a.client, { type: 'shell' });
    const pod = podOf(sb.sandbox_id)!;
    await cluster.kubelet.kill(pod.metadata.name);
    const err = await until(
      async () => a.client.exec(sb.sandbox_id, { command: 'true' }).then(() => null, (e: unknown) => (e instanceof GroveApiError && e.status === 410 ? e : null)),
      'the sandbox to be reported lost',
      60_000,
    );
    expect(err.code).toBe('sandbox_closed');
    await a.client.deleteSandbox(sb.sandbox_id);
    await until(() => !pods().some((p) => p.metadata.name === pod.metadata.name), 'failed pod deleted', 60_000);
  });

  test('an orchestrator container killed: the other serves its sandboxes and reconciles the one it was still creating', async () => {
    const b = await cluster.orchestrator('orch-b');
    const kept = await cluster.create(a.client, { type: 'shell' });
    const half = await a.client.createSandbox({ type: 'shell' });
    const orphan = await until(() => podOf(half.sandbox_id), 'the half-made pod', 60_000);
    await cluster.killOrchestrator(a);
    // B takes the leader Lease once A's lapses; the record A never finished names a replica that is gone.
    await until(() => !pods().some((p) => p.metadata.name === orphan.metadata.name), 'orphan deleted', 240_000);
    expect(cluster.kubelet.container(orphan.metadata.name)).toBeUndefined();
    const r = await b.client.exec(kept.sandbox_id, { command: 'echo still here' });
    expect(r.stdout).toBe('still here\n');
    // The last replica's graceful stop closes what is left: the claimed pods go, the warm one stays.
    expect(await cluster.stopOrchestrator(b)).toBe(0);
    await until(() => pods().every((p) => p.metadata.labels[L.state] === 'warm'), 'claimed pods deleted', 60_000);
    expect(cluster.sim.invalid).toEqual([]);
  });

  // After the test above (orch-a and orch-b gone): these two are the only replicas, both on one volume, so the
  // leader is one that mounts it. Read from this host, the episode is on another host's writer (no pid check).
  test('the replica recording a sandbox killed: its episode reads incomplete within Lease durations; the leader expiring it fetches the HAR', async () => {
    const shared = path.join(cluster.dir, 'recordings-orphan');
    mkdirSync(shared);
    chownSync(shared, 10001, 10001);
    const mount = [`--volume=${shared}:/var/lib/grove/recordings:rw`, '--env', 'GROVE_RECORDINGS_DIR=/var/lib/grove/recordings'];
    const [w1, w2] = [await cluster.orchestrator('orch-w1', mount), await cluster.orchestrator('orch-w2', mount)];
    const sb = await cluster.create(w1.client, { type: 'browser', start_url: siteUrl, network: { allow }, record: true, record_har: true, ttl_seconds: 90 });
    expect((await w1.client.step(sb.sandbox_id, { action: { action: 'click', x: 100, y: 100, space: 'css_px' } })).observation.title).toBe('clicked');
    const dir = path.join(shared, sb.sandbox_id);
    expect((await readEpisode(dir)).meta.status).toBe('running');
    await cluster.killOrchestrator(w1);
    const died = Date.now();
    await until(async () => (await readEpisode(dir)).meta.status === 'incomplete', 'the episode read incomplete', 120_000);
    console.log(`episode of the killed replica read incomplete after ${Date.now() - died} ms (Leases of 6 s)`);
    const episode = await until(async () => {
      const v = await readEpisode(dir).catch(() => null);
      return v?.meta.termination ? v : null;
    }, 'the episode ended by the leader at the TTL', 150_000);
    expect(episode.steps.map((x) => x.actions[0]?.action.action)).toEqual(['click']);
    const har = await until(() => {
      try {
        return JSON.parse(readFileSync(path.join(dir, 'network.har'), 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } };
      } catch {
        return null;
      }
    }, 'the HAR on the shared volume', 60_000);
    expect(har.log.entries.some((e) => e.request.url === siteUrl)).toBe(true);
    expect(await cluster.stopOrchestrator(w2)).toBe(0);
  });
});

/**
 * A `wait` step through plain HTTP, as a client of the service sends it: a 503 (a capture that missed its time on a
 * loaded machine; CI saw one here) is sent again after its Retry-After, at most 3 times; any other answer without an
 * observation fails with its body.
 */
async function stepAnswer(url: string, key: string): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ action: { action: 'wait', ms: 10 } }),
    });
    const body = await r.json();
    if (r.status === 503 && attempt < 3) {
      await new Promise((ok) => setTimeout(ok, 1000 * Math.min(30, Number(r.headers.get('retry-after')) || 1)));
      continue;
    }
    expect(body.observation, `${url} answered ${r.status} ${JSON.stringify(body).slice(0, 300)}`).toBeDefined();
    return body;
  }
}
