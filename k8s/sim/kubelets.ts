// "Kubelets" for the simulated API server: they run a pod by starting a worker on a loopback address of its own
// (127.x.y.z, the pod IP) at the pod's containerPort, with the pod spec's environment.
//   ProcessKubelet: a real `grove worker` process (Chromium inside) — the end-to-end tests.
//   StubKubelet: a lightweight in-process worker answering the worker API the orchestrator uses (create, wait,
//   step, heartbeat, delete, health) — the fast fault tests and the 1,000-sandbox bench.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kubelet, KubeSim } from './api-server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
type Obj = Record<string, any>;

/** Unique loopback pod IPs: 127.<random>.<n>.<n>, so parallel test files do not collide. */
export class PodIps {
  private n = 0;
  private readonly base = randomInt(2, 250);
  next(): string {
    const n = this.n++;
    return `127.${this.base}.${Math.floor(n / 254) % 256}.${1 + (n % 254)}`;
  }
}

function envOf(pod: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of pod.spec.containers[0].env ?? []) if (typeof e.value === 'string') out[e.name] = e.value;
  return out;
}

function portOf(pod: Obj): number {
  return pod.spec.containers[0].ports[0].containerPort;
}

export type PodFate = 'ok' | 'unschedulable' | 'image_pull' | 'never_ready';

/**
 * How a container's process starts here. As root, like a container runtime: in a mount namespace of its own with
 * the pod's emptyDir volumes bind-mounted at their mountPaths (so a shell pod's /workspace is /workspace), as the
 * pod's runAsUser/runAsGroup with no capabilities and no_new_privs (util-linux unshare + setpriv). A mount target
 * that does not exist on the host is created as an empty directory (it stays empty: the bind is private to the pod).
 * Not root: the plain process, with emptyDir paths named in the environment remapped to per-pod directories.
 * /tmp and /dev/shm stay the host's (GROVE_DATA_DIR is already per pod).
 */
function containerCommand(pod: Obj, dir: string, env: Record<string, string | undefined>, argv: string[]): string[] {
  const c = pod.spec.containers[0];
  const emptyDirs = new Set<string>((pod.spec.volumes ?? []).filter((v: Obj) => v.emptyDir).map((v: Obj) => v.name));
  const mounts: Array<[string, string]> = [];
  for (const m of c.volumeMounts ?? []) {
    if (!emptyDirs.has(m.name) || m.mountPath === '/tmp' || m.mountPath === '/dev/shm') continue;
    const src = path.join(dir, `vol-${m.name}`);
    mkdirSync(src, { recursive: true });
    mounts.push([src, m.mountPath]);
  }
  const uid = pod.spec.securityContext?.runAsUser as number | undefined;
  const gid = (pod.spec.securityContext?.runAsGroup as number | undefined) ?? uid;
  if (process.getuid?.() !== 0) {
    for (const [src, target] of mounts) for (const [k, v] of Object.entries(env)) if (v === target) env[k] = src;
    return argv;
  }
  for (const [src] of mounts) if (uid !== undefined) chownSync(src, uid, gid!);
  if (uid !== undefined) chownSync(dir, uid, gid!);
  for (const [, target] of mounts) if (!existsSync(target)) mkdirSync(target, { recursive: true });
  const user = uid === undefined ? [] : ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--no-new-privs', '--bounding-set=-all', '--'];
  const script = 'n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind "$1" "$2" || exit 125; shift 2; n=$((n-1)); done; exec "$@"';
  return ['unshare', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', script, 'grove-kubelet', String(mounts.length), ...mounts.flat(), ...user, ...argv];
}

/** A real Grove worker process per pod. */
export class ProcessKubelet implements Kubelet {
  readonly ips = new PodIps();
  readonly procs = new Map<string, ChildProcess>();
  private readonly dirs = new Map<string, string>();
  sim: KubeSim | null = null;
  fate: (pod: Obj) => PodFate = () => 'ok';

  /** baseEnv: the environment worker processes inherit (the caller's; the pod spec's variables go on top). */
  constructor(private readonly baseEnv: Record<string, string | undefined>) {}

  async start(pod: Obj): Promise<{ ip: string } | { fail: Exclude<PodFate, 'ok'> }> {
    const fate = this.fate(pod);
    if (fate !== 'ok') return { fail: fate };
    const name = pod.metadata.name as string;
    const ip = this.ips.next();
    const dir = mkdtempSync(path.join(os.tmpdir(), `grove-pod-${name}-`));
    this.dirs.set(name, dir);
    const env: Record<string, string | undefined> = { ...this.baseEnv, ...envOf(pod), GROVE_HOST: ip, GROVE_DATA_DIR: dir, GROVE_LOG_LEVEL: 'warn', HOME: dir };
    delete env.GROVE_CONFIG;
    const [cmd, ...args] = containerCommand(pod, dir, env, [process.execPath, '--import', 'tsx', path.join(ROOT, 'cli/main.ts'), 'worker']);
    const proc = spawn(cmd!, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    this.procs.set(name, proc);
    let stderr = '';
    proc.stderr!.on('data', (d) => (stderr += String(d)));
    proc.on('exit', (code, signal) => {
      if (this.procs.get(name) === proc) this.sim?.workerExited(pod.metadata.namespace, name, code ?? 137, signal);
    });
    // Readiness probe: GET /health until it answers.
    const url = `http://${ip}:${portOf(pod)}/health`;
    for (let i = 0; i < 600; i++) {
      if (proc.exitCode !== null) throw new Error(`worker exited: ${stderr}`);
      const ok = await fetch(url).then((r) => r.ok, () => false);
      if (ok) return { ip };
      await new Promise((r) => setTimeout(r, 100));
    }
    return { fail: 'never_ready' };
  }

  async stop(pod: Obj): Promise<void> {
    const name = pod.metadata.name as string;
    const proc = this.procs.get(name);
    this.procs.delete(name);
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    const dir = this.dirs.get(name);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }

  /** SIGKILLs a pod's worker (the pod stays, its status turns Failed). */
  kill(name: string): void {
    this.procs.get(name)?.kill('SIGKILL');
  }

  killAll(): void {
    for (const p of this.procs.values()) if (p.exitCode === null) p.kill('SIGKILL');
  }
}

const OBSERVATION = {
  step: 0,
  url: 'about:blank',
  title: '',
  tabs: [{ index: 0, url: 'about:blank', title: '', active: true }],
  viewport: { width: 1280, height: 1000 },
  last_action_error: null,
  events: [],
  timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
  // A worker's answer carries its screenshot (the capture contract: none means 503 capture_timeout): a 1x1 PNG.
  screenshot: {
    mime: 'image/png', width: 1, height: 1, scale: 1, scale_x: 1, scale_y: 1,
    base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  },
};

export const STUB_PARSE_CONTEXT = { som: [{ label: 3, tag: 'div', text: 'list', x: 100, y: 200, width: 40, height: 20 }], width: 1280, height: 1000, rel_divisor: 1000 };

/** One in-process stub worker: the subset of the worker API the orchestrator calls, with the token checked. */
class StubWorker {
  readonly server: http.Server;
  private readonly sandboxes = new Map<string, Obj>();
  /** HARs of closed `record_har` sandboxes, served once by GET /worker/recordings/{id}/har (server/worker-routes.ts). */
  readonly hars = new Map<string, string>();
  /** The create bodies it was sent, in order. */
  readonly created: Obj[] = [];
  /** POST /worker/exit (a paired shell's worker): set for an ephemeral container's worker. */
  onExit: (() => void) | null = null;
  requests = 0;

  /** Sandboxes this worker hosts right now. */
  get hosted(): number {
    return this.sandboxes.size;
  }

  constructor(private readonly token: string) {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
  }

  private reply(res: http.ServerResponse, code: number, body?: unknown): void {
    if (body === undefined) {
      res.writeHead(code).end();
      return;
    }
    res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests++;
    const url = new URL(req.url ?? '/', 'http://w');
    if (url.pathname === '/health') return this.reply(res, 200, { status: 'ok', version: 'stub', uptime_s: 0, sandboxes: this.sandboxes.size });
    if (req.headers['x-api-key'] !== this.token) return this.reply(res, req.headers['x-api-key'] ? 403 : 401, { error: { code: req.headers['x-api-key'] ? 'forbidden' : 'unauthorized', message: 'token' } });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The browser's parse context (server/worker-routes.ts): one fixed SoM element, label 3.
      const pc = url.pathname.match(/^\/worker\/sandboxes\/([^/]+)\/parse-context$/);
      if (pc) return this.sandboxes.has(pc[1]!) ? this.reply(res, 200, STUB_PARSE_CONTEXT) : this.reply(res, 404, { error: { code: 'sandbox_not_found', message: pc[1] } });
      if (url.pathname === '/worker/exit' && req.method === 'POST' && this.onExit) {
        this.reply(res, 202, { exiting: true });
        return this.onExit();
      }
      const har = url.pathname.match(/^\/worker\/recordings\/([^/]+)\/har$/);
      if (har && req.method === 'GET') {
        const text = this.hars.get(har[1]!);
        this.hars.delete(har[1]!);
        return text === undefined ? this.reply(res, 404, { error: { code: 'not_found', message: har[1] } }) : this.reply(res, 200, JSON.parse(text));
      }
      const m = url.pathname.match(/^\/sandboxes(?:\/([^/]+))?(?:\/(\w+))?$/);
      if (!m) return this.reply(res, 404, { error: { code: 'not_found', message: url.pathname } });
      const [, id, op] = m;
      if (!id && req.method === 'POST') {
        const spec = JSON.parse(Buffer.concat(chunks).toString() || '{}');
        this.created.push(spec);
        const now = new Date().toISOString();
        const info = { sandbox_id: 'sb_' + randomBytes(8).toString('hex'), type: spec.type, status: 'ready', created_at: now, last_used_at: now, expires_at: now, steps: 0, labels: spec.labels ?? {}, error: null, ...(spec.record_har ? { record_har: true } : {}) };
        this.sandboxes.set(info.sandbox_id, info);
        return this.reply(res, 201, info);
      }
      const sb = id ? this.sandboxes.get(id) : undefined;
      if (!sb) return this.reply(res, 404, { error: { code: 'sandbox_not_found', message: `no ${id}` } });
      if (req.method === 'DELETE') {
        this.sandboxes.delete(id!);
        // A browser writes its HAR when the sandbox closes: one entry naming the worker's sandbox.
        if (sb.record_har) this.hars.set(id!, JSON.stringify({ log: { version: '1.2', creator: { name: 'grove-stub-worker', version: '0' }, entries: [], comment: id } }));
        return this.reply(res, 204);
      }
      if (op === 'wait' || !op) return this.reply(res, 200, sb);
      if (op === 'heartbeat' && req.method === 'POST') {
        sb.last_used_at = new Date().toISOString();
        return this.reply(res, 200, sb);
      }
      if (op === 'step') {
        sb.steps++;
        sb.last_used_at = new Date().toISOString();
        // Every action "succeeds" as given (a browser resolves them; a terminal one ends the episode).
        const actions = ((JSON.parse(Buffer.concat(chunks).toString() || '{}') as Obj).actions ?? []) as Obj[];
        const end = actions.find((a) => a.action === 'answer' || a.action === 'terminate');
        const resolved = actions.map((a) => ({ action: a, error: null, ms: 0 }));
        return this.reply(res, 200, { observation: { ...OBSERVATION, step: sb.steps }, actions: resolved, done: !!end, ...(end?.action === 'answer' ? { answer: end.text } : {}) });
      }
      if (op === 'observation') return this.reply(res, 200, { ...OBSERVATION, step: sb.steps });
      if (op === 'screenshot') {
        res.writeHead(200, { 'content-type': OBSERVATION.screenshot.mime, 'x-image-width': '1', 'x-image-height': '1' });
        return void res.end(Buffer.from(OBSERVATION.screenshot.base64, 'base64'));
      }
      return this.reply(res, 404, { error: { code: 'not_found', message: url.pathname } });
    });
  }
}

export class StubKubelet implements Kubelet {
  readonly ips = new PodIps();
  readonly workers = new Map<string, StubWorker>();
  sim: KubeSim | null = null;
  fate: (pod: Obj) => PodFate = () => 'ok';
  /** Simulated container start time (image already on the node), ms. */
  startMs = 0;

  async start(pod: Obj): Promise<{ ip: string } | { fail: Exclude<PodFate, 'ok'> }> {
    const fate = this.fate(pod);
    if (fate !== 'ok') return { fail: fate };
    if (this.startMs) await new Promise((r) => setTimeout(r, this.startMs));
    const ip = this.ips.next();
    const w = new StubWorker(envOf(pod).GROVE_API_KEY ?? '');
    await new Promise<void>((resolve, reject) => {
      w.server.once('error', reject);
      w.server.listen(portOf(pod), ip, () => resolve());
    });
    this.workers.set(pod.metadata.name, w);
    return { ip };
  }

  async stop(pod: Obj): Promise<void> {
    const w = this.workers.get(pod.metadata.name);
    this.workers.delete(pod.metadata.name);
    for (const c of pod.spec.ephemeralContainers ?? []) await this.stopWorker(`${pod.metadata.name}/${c.name}`);
    if (!w) return;
    w.server.closeAllConnections();
    await new Promise((r) => w.server.close(r));
  }

  /** An ephemeral container: a stub worker on the pod's address at its GROVE_PORT, with its GROVE_API_KEY (under
   * `pod/container` in `workers`); POST /worker/exit stops it and reports the container's exit. */
  async startEphemeral(pod: Obj, c: Obj, exited: (code: number) => void): Promise<void> {
    const env = Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e.value])) as Record<string, string>;
    const key = `${pod.metadata.name}/${c.name}`;
    const w = new StubWorker(env.GROVE_API_KEY ?? '');
    w.onExit = () => void this.stopWorker(key).then(() => exited(0));
    await new Promise<void>((resolve, reject) => {
      w.server.once('error', reject);
      w.server.listen(Number(env.GROVE_PORT), pod.status.podIP, () => resolve());
    });
    this.workers.set(key, w);
  }

  private async stopWorker(key: string): Promise<void> {
    const w = this.workers.get(key);
    if (!w) return;
    this.workers.delete(key);
    w.server.closeAllConnections();
    await new Promise((r) => w.server.close(r));
  }

  /** The worker dies: its server stops and the pod's status turns Failed. */
  async kill(name: string, namespace = 'grove'): Promise<void> {
    const w = this.workers.get(name);
    if (!w) return;
    this.workers.delete(name);
    w.server.closeAllConnections();
    await new Promise((r) => w.server.close(r));
    this.sim?.workerExited(namespace, name, 137, 'SIGKILL');
  }
}
