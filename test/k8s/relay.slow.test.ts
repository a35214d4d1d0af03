// What the orchestrator relays to worker pods beyond the JSON routes: download bytes (streamed), the shell
// sandbox's PTY WebSocket (both ways, closes propagated), and HAR record/replay — against the simulated API server
// with real `grove worker` processes (ProcessKubelet: Chromium and shell sandboxes run in them).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { GroveApiError, GroveClient } from '../../client/index.ts';
import { L } from '../../k8s/labels.ts';
import { hostProcesses } from '../support/processes.ts';
import { until } from './harness.ts';
import { ProcessCluster } from './process-cluster.ts';

const cluster = new ProcessCluster('relay');
const { sim, kubelet, dir } = cluster;
let client: GroveClient;
let base = '';
let siteUrl = '';
let siteHost = '';
let visits = 0;

// 3 MiB of bytes that are not all alike: equal hashes mean the bytes came through in order and whole.
const FILE = Buffer.alloc(3 * 1024 * 1024);
for (let i = 0; i < FILE.length; i += 32) createHash('sha256').update(String(i)).digest().copy(FILE, i);

const SITE: http.RequestListener = (req, res) => {
  if (req.url === '/file.bin') {
    return res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="data.bin"', 'content-length': FILE.length }).end(FILE);
  }
  if (req.url === '/download') {
    return res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><title>dl</title><a href="/file.bin" download style="position:absolute;left:0;top:0;width:300px;height:200px;display:block">get</a>`);
  }
  if (req.url !== '/page') return res.writeHead(404).end();
  // Every visit of the counter page is a new title: a replayed page shows the recorded one and reaches nobody.
  visits++;
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>visit-${visits}</title><p>hello</p>`);
};

beforeAll(async () => {
  await cluster.start({ replica: 'orch-relay', workerPortBase: 19000, readyTimeoutSeconds: 60, site: SITE });
  siteHost = cluster.siteHost;
  siteUrl = `http://${siteHost}`;
  base = cluster.url;
  client = new GroveClient({ baseUrl: base });
}, 60_000);

afterAll(() => cluster.close());

describe('relayed through the kubernetes backend', () => {
  test('a download: the bytes through the orchestrator equal the served file, streamed with its length', async () => {
    const sb = await client.createAndWait({ type: 'browser', start_url: `${siteUrl}/download`, network: { allow: [siteHost] } }, 90);
    const r = await client.step(sb.sandbox_id, { action: { action: 'click', x: 100, y: 100, space: 'css_px' } });
    const listed = await until(async () => {
      const d = await client.downloads(sb.sandbox_id);
      return d.length && d[0]!.size === FILE.length ? d : null;
    }, 'the download to finish');
    expect(r.observation.events.some((e) => e.type === 'download')).toBe(true);
    expect(listed[0]).toMatchObject({ filename: 'data.bin', size: FILE.length, url: `${siteUrl}/file.bin` });
    const res = await fetch(`${base}/sandboxes/${sb.sandbox_id}/downloads/${listed[0]!.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(FILE.length));
    expect(res.headers.get('content-disposition')).toContain('data.bin');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(FILE.length);
    expect(bytes.equals(FILE)).toBe(true);
    // An id the worker does not know answers as the embedded backend does.
    const missing = await client.download(sb.sandbox_id, 'dl_nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(GroveApiError);
    expect((missing as GroveApiError).code).toBe('download_not_found');
    // An episode reset is relayed too: a fresh context without the earlier downloads.
    const info = await client.resetSandbox(sb.sandbox_id, { start_url: `${siteUrl}/download` });
    expect(info.steps).toBe(0);
    expect(await client.downloads(sb.sandbox_id)).toEqual([]);
    // Seen once at load ~23 as title '' (not reproduced at load 25-39): the message says whether the start URL failed.
    const after = await client.observation(sb.sandbox_id);
    expect(after.title, `url ${after.url}, error ${JSON.stringify(after.last_action_error)}`).toBe('dl');
    await client.deleteSandbox(sb.sandbox_id);
  });

  test('HAR: recorded on the worker and fetched into the episode; a replay through k8s serves the recorded response', async () => {
    const rec = await client.createAndWait({ type: 'browser', start_url: `${siteUrl}/page`, network: { allow: [siteHost] }, record: true, record_har: true }, 90);
    expect((await client.observation(rec.sandbox_id)).title).toBe('visit-1');
    await client.deleteSandbox(rec.sandbox_id);
    const harPath = path.join(dir, 'recordings', rec.sandbox_id, 'network.har');
    const har = JSON.parse(readFileSync(harPath, 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } };
    expect(har.log.entries.map((e) => e.request.url)).toContain(`${siteUrl}/page`);
    expect(visits).toBe(1);

    const replay = await client.createAndWait({ type: 'browser', start_url: `${siteUrl}/page`, network: { allow: [siteHost] }, replay_har: `${rec.sandbox_id}/network.har` }, 90);
    const obs = await client.observation(replay.sandbox_id);
    expect(obs.title).toBe('visit-1');
    // Served from the HAR: the live site saw no second visit.
    expect(visits).toBe(1);
    await client.deleteSandbox(replay.sandbox_id);
  });

  test('HAR of a sandbox the leader closes at its TTL: fetched from the worker into the episode before the worker lets it go', async () => {
    // Not waited for: at load ~60 its start took longer than the TTL, and the wait saw it closing.
    const sb = await client.createSandbox({ type: 'browser', start_url: `${siteUrl}/page`, network: { allow: [siteHost] }, record: true, record_har: true, ttl_seconds: 30 });
    const harPath = path.join(dir, 'recordings', sb.sandbox_id, 'network.har');
    const har = await until(() => {
      try {
        return JSON.parse(readFileSync(harPath, 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } };
      } catch {
        return null;
      }
    }, 'the HAR after the expiry', 180_000);
    expect(har.log.entries.map((e) => e.request.url)).toContain(`${siteUrl}/page`);
    // Closed with the reason (its info, or 410 sandbox_closed once its tombstone is all that is left).
    const closed = await client.getSandbox(sb.sandbox_id).catch((e: unknown) => e);
    if (closed instanceof GroveApiError) expect(closed.code).toBe('sandbox_closed');
    else expect(closed).toMatchObject({ status: 'closed' });
  });

  test('a replay_har outside the recordings directory answers 400 as on the embedded backend', async () => {
    const err = await client.createSandbox({ type: 'browser', replay_har: '/etc/passwd' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroveApiError);
    expect((err as GroveApiError).status).toBe(400);
  });

  test('options a pod cannot serve answer 400 not_supported_on_backend', async () => {
    const claw = await client.createAndWait({ type: 'claw' } as never, 30);
    for (const body of [
      // A paired shell runs on the worker image, in an ephemeral container of the claw pod (shell-pairing tests).
      { type: 'shell', claw_sandbox: claw.sandbox_id, image: 'docker.io/library/python:3.12' },
      // Pod-isolated shell pods have the install's network (here: egress denied), no per-sandbox proxy.
      { type: 'shell', block_network: false },
      { type: 'shell', allow: ['example.com'] },
    ]) {
      const err = await client.createSandbox(body as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(body)).toBeInstanceOf(GroveApiError);
      expect((err as GroveApiError).status).toBe(400);
      expect((err as GroveApiError).code).toBe('not_supported_on_backend');
    }
    await client.deleteSandbox(claw.sandbox_id);
  });

  test('shell flow on a restricted pod: pod isolation as the pod user, /workspace, timeouts and delete kill every process', async () => {
    const sb = await client.createAndWait({ type: 'shell' }, 90);
    expect(sb.shell).toMatchObject({ workspace: '/workspace', network: 'blocked', uid: 10001 });
    expect(sb.shell?.notes.join(' ')).toMatch(/pod isolation/);
    const who = await client.exec(sb.sandbox_id, { command: 'id -u; pwd; touch /usr/x 2>/dev/null || echo ro-usr' });
    expect(who).toMatchObject({ exit_code: 0, stdout: '10001\n/workspace\nro-usr\n' });
    await client.uploadFile(sb.sandbox_id, '/workspace/sub/a.txt', 'payload');
    expect((await client.exec(sb.sandbox_id, { command: 'cat sub/a.txt', cwd: '/workspace' })).stdout).toBe('payload');
    expect((await client.listFiles(sb.sandbox_id, '/workspace')).files.map((f) => f.name)).toEqual(['sub']);
    // A workspace file streams through the orchestrator with its length; a missing one answers as locally.
    const made = await client.exec(sb.sandbox_id, { command: 'head -c 2500000 /dev/urandom > big.bin && sha256sum big.bin | cut -d" " -f1' });
    const res = await fetch(`${base}/sandboxes/${sb.sandbox_id}/files?path=/workspace/big.bin`);
    expect(res.headers.get('content-length')).toBe('2500000');
    expect(createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex')).toBe(made.stdout.trim());
    const missing = await client.downloadFile(sb.sandbox_id, '/workspace/nope').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'file_not_found' });
    const alive = async (d: string) => (await client.exec(sb.sandbox_id, { command: `ps -eo args= | grep -qx "sleep ${d}"` })).exit_code === 0;
    // A timeout takes the daemon its command started along.
    const t = await client.exec(sb.sandbox_id, { command: 'setsid sleep 6311 </dev/null >/dev/null 2>&1 & sleep 6312', timeout_s: 1 });
    expect(t).toMatchObject({ exit_code: 124, timed_out: true });
    expect(await alive('6311')).toBe(false);
    // Delete: nothing the sandbox started survives on the worker.
    await client.exec(sb.sandbox_id, { command: 'setsid sleep 6313 </dev/null >/dev/null 2>&1 &' });
    expect(await alive('6313')).toBe(true);
    await client.deleteSandbox(sb.sandbox_id);
    // The simulated pods' workers run on this host: their processes are this host's.
    await until(() => !hostProcesses().includes('sleep 6313'), 'the daemon to end with its sandbox');
  });

  test('the PTY: keystrokes and output flow through the orchestrator; the worker side exiting closes the client', async () => {
    const sb = await client.createAndWait({ type: 'shell' }, 90);
    // The worker's shell details are relayed with the info.
    expect(sb.shell?.workspace).toBe('/workspace');
    const t = await terminal(sb.sandbox_id, ['/bin/sh']);
    t.send('echo relayed-$((6*7))\n');
    await until(() => t.output().includes('relayed-42'), 'the echo through the PTY');
    t.send('exit 3\n');
    const closed = await t.closed;
    expect(t.frames.at(-1)).toEqual({ type: 'exit', code: 3 });
    expect(closed).toBe(1000);
    await client.deleteSandbox(sb.sandbox_id);
  });

  test('the PTY: the client closing ends the terminal process on the worker', async () => {
    const sb = await client.createAndWait({ type: 'shell' }, 90);
    // An odd duration marks the process; its whole command line is matched (not the commands that look for it).
    const t = await terminal(sb.sandbox_id, ['/bin/sh', '-c', 'echo started; exec sleep 7177']);
    await until(() => t.output().includes('started'), 'the terminal command to start');
    const running = async () => (await client.exec(sb.sandbox_id, { command: 'ps -eo args= | grep -qx "sleep 7177"' })).exit_code === 0;
    expect(await running()).toBe(true);
    expect((await client.getSandbox(sb.sandbox_id)).status).toBe('busy');
    t.ws.close(1000);
    await t.closed;
    await until(async () => !(await running()), 'the terminal process to end on the worker');
    await until(async () => (await client.getSandbox(sb.sandbox_id)).status === 'ready', 'the sandbox to be idle again');
    await client.deleteSandbox(sb.sandbox_id);
  });

  test('the PTY: deleting the sandbox closes an open terminal', async () => {
    const sb = await client.createAndWait({ type: 'shell' }, 90);
    const t = await terminal(sb.sandbox_id, ['/bin/sh']);
    t.send('echo up\n');
    await until(() => t.output().includes('up'), 'the shell');
    await client.deleteSandbox(sb.sandbox_id);
    expect(await t.closed).toBeGreaterThan(0);
    expect(t.frames.some((f) => f.type === 'exit')).toBe(true);
  });

  test('the PTY: a worker that dies closes the client (exit -1), and the sandbox answers 410', async () => {
    const sb = await client.createAndWait({ type: 'shell' }, 90);
    const t = await terminal(sb.sandbox_id, ['/bin/sh']);
    const pod = sim.listPodObjects().find((p) => p.metadata.labels[L.sandbox] === sb.sandbox_id)!;
    kubelet.kill(pod.metadata.name);
    expect(await t.closed).toBe(1000);
    expect(t.frames.at(-1)).toEqual({ type: 'exit', code: -1 });
    await until(
      async () => client.exec(sb.sandbox_id, { command: 'true' }).then(() => false, (e: unknown) => e instanceof GroveApiError && e.status === 410),
      'the sandbox to be reported lost',
    );
    await client.deleteSandbox(sb.sandbox_id);
  });

  test('a PTY for an unknown sandbox is refused before the upgrade', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/sandboxes/sb_nope/pty`);
    const status = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(404);
  });
});

interface Terminal {
  ws: WebSocket;
  frames: Array<Record<string, unknown>>;
  output(): string;
  send(text: string): void;
  closed: Promise<number>;
}

/** Opens the orchestrator's PTY socket and resolves once the worker's terminal is ready. */
function terminal(id: string, cmd: string[]): Promise<Terminal> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/sandboxes/${id}/pty`);
  const frames: Array<Record<string, unknown>> = [];
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  const t: Terminal = {
    ws,
    frames,
    closed,
    output: () =>
      frames
        .filter((f) => f.type === 'stdout')
        .map((f) => Buffer.from(String(f.data), 'base64').toString('utf8'))
        .join(''),
    send: (text) => ws.send(JSON.stringify({ type: 'stdin', data: Buffer.from(text).toString('base64') })),
  };
  return new Promise((resolve, reject) => {
    ws.on('open', () => ws.send(JSON.stringify({ type: 'init', cmd, rows: 24, cols: 80 })));
    ws.on('message', (raw) => {
      const f = JSON.parse(raw.toString()) as Record<string, unknown>;
      frames.push(f);
      if (f.type === 'ready') resolve(t);
      if (f.type === 'error') reject(new Error(String(f.message)));
    });
    ws.on('error', reject);
    void closed.then((code) => reject(new Error(`closed before ready (${code})`)));
  });
}
