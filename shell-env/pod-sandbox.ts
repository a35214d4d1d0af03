// A pod-isolated shell sandbox (shellIsolation "pod"): for Kubernetes worker pods, where the pod is the isolation
// boundary (its NetworkPolicy for the network, its own file system, its requests and limits) and the restricted
// defaults forbid root, namespaces and bubblewrap. Commands run as the pod's unprivileged user, each under a
// subreaper (pod-exec.ts) with the same limits as a bubblewrap sandbox: timeouts kill the whole process tree, output
// is capped, RLIMIT_NPROC / RLIMIT_CPU apply, and closing the sandbox kills every process it started. The API sees the
// same /workspace; the workspace is a writable directory of the pod (an emptyDir mounted at /workspace).
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { GroveError } from '../protocol/errors.ts';
import type { ShellCreateOptions, SandboxStatus } from '../protocol/sandbox.ts';
import type { ApplyPatchResult, ExecRequest, ExecResult, JobInfo, ShellDetails } from '../protocol/shell.ts';
import type { Logger } from '../sandbox/log.ts';
import type { SandboxDetails } from '../sandbox/types.ts';
import { requestRunOptions, type RunningExec, type RunOptions } from './exec.ts';
import { listFiles, readSandboxFile, writeSandboxFile } from './files.ts';
import { JobTable } from './jobs.ts';
import { killReaper, killTagged, startPodExec, type PodExecTarget } from './pod-exec.ts';
import { openPty } from './pty.ts';
import { WORKSPACE, type ShellLimits } from './sandbox.ts';
import type { PtyInit, PtySession, ShellSandbox } from './types.ts';

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface PodShellSandboxOptions {
  id: string;
  spec: ShellCreateOptions;
  /** The real directory behind /workspace (the pod's /workspace emptyDir); emptied on close. */
  workspace: string;
  /** What the pod's NetworkPolicy allows (k8s config `network`). */
  network: 'deny' | 'internet';
  limits: ShellLimits;
  /** Directory with grove_reaper.py and grove_pty.py. */
  insideDir: string;
  log: Logger;
  release(): void;
}

export class PodShellSandbox implements ShellSandbox {
  readonly type = 'shell' as const;
  readonly workspace = WORKSPACE;
  private phase: SandboxStatus = 'creating';
  private active = 0;
  private readonly readyP: Promise<void>;
  private closing: Promise<void> | null = null;
  private readonly jobs = new JobTable();
  private readonly target: PodExecTarget;
  steps = 0;

  constructor(private readonly o: PodShellSandboxOptions) {
    this.target = {
      reaper: path.join(o.insideDir, 'grove_reaper.py'),
      tag: `${o.id}.${randomBytes(8).toString('hex')}`,
      execs: 0,
      // No RLIMIT_NPROC: it counts every process of the uid on the node, and every pod's user is uid 10001 there
      // (other pods' Chromium threads would make this sandbox's forks fail). The pod's pids limit bounds it.
      maxProcesses: 0,
      live: new Set<ChildProcess>(),
    };
    this.readyP = this.start();
    this.readyP.catch(() => {});
  }

  get id(): string {
    return this.o.id;
  }

  get status(): SandboxStatus {
    return this.phase === 'ready' && this.active > 0 ? 'busy' : this.phase;
  }

  ready(): Promise<void> {
    return this.readyP;
  }

  private async start(): Promise<void> {
    await mkdir(this.o.workspace, { recursive: true });
    await emptyDir(this.o.workspace);
    if (this.closing) throw new GroveError('sandbox_closed', `Sandbox ${this.o.id} was closed while starting.`);
    this.phase = 'ready';
  }

  details(): SandboxDetails {
    const shell: ShellDetails = {
      image: this.o.spec.image ?? null,
      rootfs: 'host',
      notes: [
        'pod isolation: the Kubernetes pod is the sandbox (its own file system, NetworkPolicy, requests and limits); commands run as the pod\'s non-root user',
        'CPU, memory and processes are bounded by the pod (its limits and the node\'s pod pids limit), not per command',
        ...(this.o.spec.image === undefined ? [] : [`image "${this.o.spec.image}" is not available in a pod-isolated worker: the worker image's root file system, read-only`]),
      ],
      workspace: WORKSPACE,
      network: this.o.network === 'deny' ? 'blocked' : 'pod',
      uid: process.getuid?.() ?? -1,
      limits: {
        // CPU and memory are the pod's (its cgroup), not set per sandbox here.
        cpu: null,
        memory_mb: null,
        max_processes: this.o.spec.max_processes ?? this.o.limits.maxProcesses,
        enforced_by: { cpu: 'none', memory: 'none', processes: 'none' },
      },
    };
    return { shell };
  }

  private use(): void {
    if (this.closing || this.phase === 'closed') throw new GroveError('sandbox_closed', `Sandbox ${this.o.id} is closed.`);
    if (this.phase !== 'ready') throw new GroveError('sandbox_not_ready', `Sandbox ${this.o.id} is not ready (${this.phase}).`);
  }

  private env(extra: Record<string, string> = {}): Record<string, string> {
    const base: Record<string, string> = { PATH, HOME: this.o.workspace, USER: 'sandbox', LOGNAME: 'sandbox', LANG: 'C.UTF-8', TMPDIR: '/tmp' };
    return { ...base, ...(this.o.spec.env ?? {}), ...extra };
  }

  /** An API path (absolute under /workspace, or relative to it) → the directory a command starts in. */
  private cwd(cwd: string | undefined): string {
    if (cwd === undefined) return this.o.workspace;
    if (cwd.includes('\0')) throw new GroveError('invalid_request', 'cwd contains a NUL byte.');
    const inside = cwd.startsWith('/') ? path.posix.normalize(cwd) : path.posix.join(WORKSPACE, cwd);
    if (inside === WORKSPACE || inside.startsWith(`${WORKSPACE}/`)) return this.o.workspace + inside.slice(WORKSPACE.length);
    return inside;
  }

  private argv(command: string | string[], loginShell = false): string[] {
    if (Array.isArray(command)) return command;
    return ['/bin/bash', loginShell ? '-lc' : '-c', command];
  }

  async run(opts: Partial<RunOptions> & { argv: string[] }): Promise<RunningExec> {
    this.use();
    this.steps++;
    const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as typeof opts;
    const running = startPodExec(this.target, {
      cwd: this.o.workspace,
      timeoutMs: this.o.limits.execTimeoutMs,
      maxOutputBytes: this.o.limits.maxOutputBytes,
      mergeStderr: false,
      ...given,
      env: this.env(opts.env),
    });
    this.active++;
    running.result.then(
      () => this.active--,
      () => this.active--,
    );
    return running;
  }

  private runOptions(req: ExecRequest): Partial<RunOptions> & { argv: string[] } {
    return requestRunOptions(req, this.argv(req.command, req.login_shell), this.cwd(req.cwd), this.o.limits);
  }

  async exec(req: ExecRequest): Promise<ExecResult> {
    const running = await this.run(this.runOptions(req));
    return running.result.catch((err: unknown) => {
      throw new GroveError('exec_failed', `The command could not be started: ${(err as Error).message}`, { cause: err });
    });
  }

  async startJob(req: ExecRequest): Promise<JobInfo> {
    const running = await this.run(this.runOptions(req));
    return this.jobs.add(`job_${randomBytes(8).toString('hex')}`, this.o.id, req.command, running);
  }

  job(jobId: string, waitMs = 0): Promise<JobInfo> {
    return this.jobs.get(jobId, waitMs);
  }

  private fileCtx() {
    return { run: this.run.bind(this), workspace: WORKSPACE, hostWorkspace: this.o.workspace, maxFileBytes: this.o.limits.maxFileBytes, hostPaths: true };
  }

  writeFile(p: string, data: Buffer, mode?: string) {
    return writeSandboxFile(this.fileCtx(), p, data, mode);
  }

  readFile(p: string) {
    return readSandboxFile(this.fileCtx(), p);
  }

  listFiles(p: string) {
    return listFiles(this.fileCtx(), p);
  }

  async applyPatch(patch: string, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<ApplyPatchResult> {
    const r = await (
      await this.run({ argv: ['git', 'apply', '--verbose', '--whitespace=nowarn', '-'], cwd: this.cwd(opts.cwd), stdin: patch, timeoutMs: opts.timeoutMs })
    ).result;
    return { success: r.exit_code === 0, exit_code: r.exit_code, stdout: r.stdout, stderr: r.stderr };
  }

  openPty(init: PtyInit): Promise<PtySession> {
    return openPty((o) => this.run(o), init, this.cwd(init.cwd), path.join(this.o.insideDir, 'grove_pty.py'));
  }

  /** Kills every process the sandbox started (their reapers' trees, then anything still carrying its tag). */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.phase = 'closing';
      await this.readyP.catch(() => {});
      await Promise.all([...this.target.live].map((r) => killReaper(r)));
      const stray = await killTagged(`${this.target.tag}/`);
      if (stray > 0) this.o.log.warn({ sandbox_id: this.o.id, processes: stray }, 'killed processes that had left their reaper');
      this.jobs.closeAll();
      await emptyDir(this.o.workspace).catch((err: unknown) => this.o.log.warn({ err, sandbox_id: this.o.id }, 'workspace cleanup failed'));
      this.phase = 'closed';
      this.o.release();
    })());
  }
}

/** Removes what is in a directory, not the directory (in a pod it is a mount point). */
async function emptyDir(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await rm(path.join(dir, name), { recursive: true, force: true });
}
