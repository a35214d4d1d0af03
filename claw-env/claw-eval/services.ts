// A trial's mock services: Claw-Eval's own FastAPI apps from the checkout, started fresh for each trial inside one
// bubblewrap sandbox with no network at all (its own net namespace: no loopback shared with the host, no internet),
// each served on a Unix socket in a per-trial folder. The agent reaches them only through the tool bridge here
// (callTool: the yaml's tool_endpoints, the URL's port picks the service, its path is requested over the socket),
// and the grader's audit data is read the same way. Fixture env vars as the yaml sets them; ERROR_RATE only when
// the yaml or the caller sets it (Claw-Eval's middleware defaults to 0).
//
// Isolation, measured against shell-env's sandboxes (which this module cannot import: claw-env sits beside it):
// bwrap run by root without a user namespace left the services uid 0 with every capability but one, and a
// `mount -o remount,bind,rw` inside made the read-only checkout writable (tried: it wrote). Now, as shell-env's
// holder does: an own user namespace with a non-root uid (65534) and no capabilities, no nested user namespaces
// (--disable-userns), own PID/IPC/UTS/net/cgroup namespaces, the system, venv and DIR read-only, only the trial's
// folder writable, no_new_privs (bwrap's default), --die-with-parent.
// Limits: `confine` (a shell environment's, server/claw-eval.ts clawEvalConfine; the server and `grove claw run
// --claw-eval` both hand it down, so every service set starts here the same way) puts bwrap and everything under it
// in cgroups with a shell sandbox's memory, process and CPU limits (an OOM kills inside them; a fork bomb meets
// pids.max) and gives the trial's writable state (its socket folder, and /tmp inside) a size-capped disk of its own
// under the shell environment's folder, removed at stop and by its watchdog if the process dies. Without it (no
// root, no shell environment) the folder is a temp folder (tmp.ts) and /tmp a tmpfs, with no limits.
// `isolation: 'pod'` (a Claw-Eval worker pod only, `grove worker` with GROVE_CLAW_EVAL_ISOLATION=pod; refused
// everywhere else, server/server.ts): no bubblewrap, which a restricted pod cannot run — the pod is the boundary,
// as shell-env's pod isolation: the services run as the pod's non-root user in a process group of their own (killed
// whole at stop), the checkout and the venv on the pod's read-only root file system, the sockets and /tmp in the
// pod's /tmp emptyDir, the pod's network namespace (its NetworkPolicy: no egress) and its resources as the limits.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { ClawEvalEndpoint, ClawEvalService, ClawEvalTask } from './checkout.ts';
import type { ClawEvalPython } from './pyenv.ts';
import { TimeoutError, type Progress } from '../../sandbox/progress.ts';
import { clawEvalTempDir } from './tmp.ts';
import type { ClawEvalDispatch } from '../../protocol/claw.ts';

/** A health check's own wait (Claw-Eval's probe waits 2 s), and the pause between checks. */
const HEALTH_PROBE_MS = 2000;
const HEALTH_POLL_MS = 150;

/** A service that did not come up (Claw-Eval's ServiceStartError): the trial errors, it is not retried. */
export class ClawEvalServiceStartError extends Error {
  readonly code = 'service_start_failed';
  constructor(
    readonly service: string,
    detail: string,
  ) {
    super(`service ${service} ${detail}`);
    this.name = 'ClawEvalServiceStartError';
  }
}

/** The startup deadline of a task's services when the caller sets none: the task's own time budget
 * (environment.timeout_seconds), never less than its slowest service's ready_timeout. */
export function serviceStartBudgetMs(task: ClawEvalTask): number {
  return Math.max(task.timeout_s, ...task.services.map((s) => s.ready_timeout_s)) * 1000;
}

/** A tool call as the dispatcher records it (protocol/claw.ts). */
export type DispatchRecord = ClawEvalDispatch;

export interface ServiceSetOptions {
  root: string;
  python: ClawEvalPython;
  driver: string;
  /** ERROR_RATE for services whose yaml sets none. */
  errorRate?: number;
  bwrap?: string;
  /** Extra stderr lines from the services (debugging). */
  onLog?: (line: string) => void;
  /** A shell sandbox's limits for the services' sandbox (cgroups and a disk); without: bubblewrap alone. */
  confine?: ClawEvalConfine;
  /** `pod`: started without bubblewrap, the worker pod being the boundary (see the top of this file). */
  isolation?: ClawEvalIsolation;
}

export type ClawEvalIsolation = 'bwrap' | 'pod';

/** A host process held to limits (shell-env's ProcessConfinement, taken by its shape: claw-env does not import it):
 * `dir` and `tmp` are on a size-capped disk removed by release(). */
export interface ClawEvalConfinement {
  argv(command: string[]): string[];
  readonly dir: string;
  readonly tmp: string;
  release(): Promise<void>;
}
export type ClawEvalConfine = (name: string) => Promise<ClawEvalConfinement>;

/** The longest path a Unix socket may have (sun_path, with its terminating zero). */
const SOCKET_PATH_MAX = 107;

interface Reply {
  status: number;
  body: unknown;
}

function udsRequest(socketPath: string, method: string, urlPath: string, body: unknown, timeoutMs: number, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request({ socketPath, method, path: urlPath, headers: { ...headers, ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}) }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return reject(new Error(`response is not JSON (${res.statusCode}): ${text.slice(0, 200)}`));
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}

/** bwrap arguments: the system read-only, the checkout and the venv read-only, the run folder writable, /tmp the
 * confinement's (on its disk) or a tmpfs, no network. */
function bwrapArgs(o: ServiceSetOptions, runDir: string, tmp: string | undefined): string[] {
  const a = ['--unshare-user', '--uid', '65534', '--gid', '65534', '--disable-userns', '--cap-drop', 'ALL'];
  a.push('--die-with-parent', '--new-session', '--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  a.push('--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc', '--proc', '/proc', '--dev', '/dev', ...(tmp ? ['--bind', tmp, '/tmp'] : ['--tmpfs', '/tmp']));
  for (const d of ['/bin', '/lib', '/lib64', '/sbin']) {
    if (!existsSync(d)) continue;
    if (lstatSync(d).isSymbolicLink()) a.push('--symlink', readlinkSync(d), d);
    else a.push('--ro-bind', d, d);
  }
  const seen = new Set<string>();
  for (const d of [o.python.base_prefix, o.python.venv, o.root, path.dirname(o.driver)]) {
    if (seen.has(d) || d.startsWith('/usr/')) continue;
    seen.add(d);
    a.push('--ro-bind', d, d);
  }
  a.push('--bind', runDir, runDir, '--chdir', o.root);
  return a;
}

export class ClawEvalServiceSet {
  private child?: ChildProcess;
  /** The trial's writable folder: the confinement's (on its disk) or a temp folder of ours (removed at stop). */
  private runDir?: string;
  private ownRunDir = false;
  private stopped = false;
  private readonly byPort = new Map<number, { svc: ClawEvalService; uds: string }>();
  private exited?: string;
  private stderr = '';
  private confinement: ClawEvalConfinement | null = null;
  /** isolation `pod`: the process group of the supervisor and its services. */
  private group?: number;

  constructor(
    private readonly task: ClawEvalTask,
    private readonly o: ServiceSetOptions,
  ) {}

  /**
   * Starts every service and waits until each answers its health check, within the caller's deadline (`progress`:
   * the trial's startup budget, aborted too when the trial or sandbox is closed). The services start side by side
   * in one sandbox; a service that exits, or is not ready when the deadline passes, is a ClawEvalServiceStartError
   * naming it, the time it had and its own ready_timeout (as Claw-Eval's ServiceStartError: not retried).
   */
  async start(progress: Progress): Promise<void> {
    // the deadline as handed down (the message names it; preparing the confinement's disk counts against it)
    const budgetMs = progress.remaining();
    const inPod = this.o.isolation === 'pod';
    // under the shell environment's limits when there are: the wrapper joins the cgroups, then execs bwrap
    this.confinement = this.o.confine && !inPod ? await this.o.confine(`claw-eval-${randomBytes(5).toString('hex')}`) : null;
    if (this.stopped) {
      await this.stop();
      throw new ClawEvalServiceStartError(this.task.services[0]?.name ?? 'set', 'was stopped before it was started');
    }
    const runDir = this.confinement?.dir ?? clawEvalTempDir('run');
    this.ownRunDir = !this.confinement;
    this.runDir = runDir;
    const specs = this.task.services.map((svc, i) => {
      const uds = path.join(runDir, `s${i}.sock`);
      if (Buffer.byteLength(uds) > SOCKET_PATH_MAX) throw new ClawEvalServiceStartError(svc.name, `cannot get a socket: its path ${uds} is longer than ${SOCKET_PATH_MAX} bytes (use a shorter data folder, dataDir)`);
      this.byPort.set(svc.port, { svc, uds });
      const env: Record<string, string> = { PATH: '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', PORT: String(svc.port) };
      if (this.o.errorRate !== undefined) env.ERROR_RATE = String(this.o.errorRate);
      Object.assign(env, svc.env);
      return { name: svc.name, script: svc.script, uds, env };
    });
    const spec = path.join(runDir, 'services.json');
    writeFileSync(spec, JSON.stringify({ services: specs }));
    const supervise = [this.o.python.python, this.o.driver, 'supervise', this.o.root, spec];
    const args = inPod ? supervise : [this.o.bwrap ?? '/usr/bin/bwrap', ...bwrapArgs(this.o, runDir, this.confinement?.tmp), ...supervise];
    const argv = this.confinement ? this.confinement.argv(args) : args;
    // In a pod: a process group of its own (detached), so stop() kills the supervisor and every service under it.
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: '/usr/bin:/bin', ...(inPod ? { HOME: '/tmp', TMPDIR: '/tmp' } : {}) }, cwd: inPod ? this.o.root : undefined, detached: inPod });
    this.group = inPod && child.pid !== undefined ? child.pid : undefined;
    this.child = child;
    child.stderr!.on('data', (c: Buffer) => {
      this.stderr = (this.stderr + c.toString('utf8')).slice(-4000);
      this.o.onLog?.(c.toString('utf8'));
    });
    child.on('exit', (code, sig) => (this.exited = `services exited (${sig ?? code}): ${this.stderr.slice(-600)}`));
    child.on('error', (err) => (this.exited = `cannot start bwrap: ${err.message}`));
    for (const { svc, uds } of this.byPort.values()) {
      const probe = new URL(svc.health_check || `http://localhost:${svc.port}/`);
      for (;;) {
        if (this.exited) throw new ClawEvalServiceStartError(svc.name, `exited before it was ready: ${this.exited}`);
        if (progress.expired) {
          const reason: unknown = progress.signal.reason;
          if (progress.signal.aborted && !(reason instanceof TimeoutError)) throw new ClawEvalServiceStartError(svc.name, `was stopped before it was ready (${reason instanceof Error ? reason.message : 'aborted'})`);
          throw new ClawEvalServiceStartError(svc.name, `did not become ready within the startup deadline (${Math.round(budgetMs / 1000)} s; the task's ready_timeout is ${svc.ready_timeout_s} s): ${this.stderr.slice(-600)}`);
        }
        const ok = existsSync(uds) && (await udsRequest(uds, svc.health_check_method, probe.pathname + probe.search, svc.health_check_method === 'GET' ? undefined : {}, Math.max(1, Math.min(HEALTH_PROBE_MS, progress.remaining())), { 'x-health-check': '1' }).then((r) => r.status < 500, () => false));
        if (ok) break;
        await progress.sleep(HEALTH_POLL_MS);
      }
    }
  }

  private route(url: string): { uds: string; path: string } | undefined {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    const s = this.byPort.get(Number(u.port || 80));
    return s ? { uds: s.uds, path: u.pathname + u.search } : undefined;
  }

  /** The tool bridge: one tool call, recorded as Claw-Eval's dispatcher records it (real HTTP status, JSON body). */
  async callTool(endpoints: Map<string, ClawEvalEndpoint>, id: string, name: string, args: Record<string, unknown>): Promise<DispatchRecord> {
    const ep = endpoints.get(name);
    const started = performance.now();
    const base = { tool_use_id: id, tool_name: name, request_body: args };
    if (!ep) return { ...base, endpoint_url: '', response_status: 404, response_body: { error: `unknown tool '${name}'` }, latency_ms: 0 };
    const r = this.route(ep.url);
    if (!r) return { ...base, endpoint_url: ep.url, response_status: 500, response_body: { error: `no declared service serves ${ep.url}` }, latency_ms: 0 };
    try {
      const reply = await udsRequest(r.uds, ep.method, r.path, ep.method === 'GET' ? undefined : args, 30_000);
      return { ...base, endpoint_url: ep.url, response_status: reply.status, response_body: reply.body, latency_ms: performance.now() - started };
    } catch (err) {
      return { ...base, endpoint_url: ep.url, response_status: 500, response_body: { error: (err as Error).message }, latency_ms: performance.now() - started };
    }
  }

  /** Each service's /audit (next to its reset endpoint, as Claw-Eval reads it), keyed by service name. */
  async audit(): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const { svc, uds } of this.byPort.values()) {
      if (!svc.reset_endpoint) continue;
      const u = new URL(svc.reset_endpoint.replace(/\/reset$/, '/audit'));
      try {
        out[svc.name] = (await udsRequest(uds, 'GET', u.pathname, undefined, 5000)).body;
      } catch {
        // best effort, as Claw-Eval's loop
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
    // Without bwrap's PID namespace the services outlive their supervisor: the whole group goes.
    if (this.group !== undefined) {
      try {
        process.kill(-this.group, 'SIGKILL');
      } catch {
        // none left
      }
      this.group = undefined;
    }
    const cg = this.confinement;
    this.confinement = null;
    const own = this.ownRunDir ? this.runDir : undefined;
    this.runDir = undefined;
    try {
      await cg?.release();
    } finally {
      if (own) rmSync(own, { recursive: true, force: true });
    }
  }
}
