// A shell sandbox on the local machine: a bubblewrap holder process owns the namespaces (holder.ts, bwrap.ts), every
// exec enters them as the sandbox's own non-root uid (exec.ts), cgroups bound processes, memory and CPU
// (cgroups.ts), /workspace and /tmp sit on a size-capped disk of its own (disk.ts), and files move through the
// sandbox itself so they carry its permissions (files.ts).
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { GroveError } from '../protocol/errors.ts';
import type { ShellCreateOptions, SandboxStatus } from '../protocol/sandbox.ts';
import type { ApplyPatchResult, ExecRequest, ExecResult, JobInfo, ShellDetails } from '../protocol/shell.ts';
import type { Logger } from '../sandbox/log.ts';
import type { SandboxDetails } from '../sandbox/types.ts';
import { bwrapArgs } from './bwrap.ts';
import type { CgroupRoot, SandboxCgroups } from './cgroups.ts';
import { createDisk, unmountUnder, type SandboxDisk } from './disk.ts';
import { mountRootOverlay } from './overlay.ts';
import { startEgressProxy, type EgressProxy } from './egress.ts';
import { checkEnv, requestRunOptions, startExec, type ExecTarget, type RunOptions } from './exec.ts';
import { writeSandboxFileStream } from './file-stream.ts';
import { listFiles, readSandboxFile, writeSandboxFile } from './files.ts';
import { JobTable } from './jobs.ts';
import { spawnHolder, waitHolder } from './holder.ts';
import { openPty } from './pty.ts';
import type { PtyInit, PtySession, ShellSandbox } from './types.ts';

export const WORKSPACE = '/workspace';
const PROXY_PORT = 3128;
export const DEFAULT_DISK_MB = 8192;
const DEFAULT_EGRESS_CONNECTIONS = 128;
const DEFAULT_EGRESS_IDLE_S = 300;
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ShellLimits {
  cpu: number;
  memoryMb: number;
  maxProcesses: number;
  maxOutputBytes: number;
  maxFileBytes: number;
  execTimeoutMs: number;
  /** Size of /workspace + /tmp + /var/tmp, MiB (default DEFAULT_DISK_MB). */
  diskMb?: number;
  /** Egress proxy: connections open at once (default DEFAULT_EGRESS_CONNECTIONS) and idle seconds before one is
   * closed (default DEFAULT_EGRESS_IDLE_S). */
  egressMaxConnections?: number;
  egressIdleTimeoutS?: number;
}

export interface ShellSandboxOptions {
  id: string;
  spec: ShellCreateOptions;
  uid: number;
  /** Host directory of this sandbox (workspace, passwd, egress socket); removed on close. */
  dir: string;
  /** `copyOnWrite`: the sandbox writes into its own overlay over the tree (overlay.ts), else it is read-only. */
  rootfs: { path: string; kind: 'image' | 'host'; notes: string[]; copyOnWrite?: boolean };
  cgroupRoot: CgroupRoot | null;
  limits: ShellLimits;
  /** Directory with forward.py and pty.py (bound into /.grove). */
  insideDir: string;
  /** Holder start deadline, ms. */
  startTimeoutMs: number;
  log: Logger;
  /** Gives the uid back to the pool. */
  release(): void;
}

export class LocalShellSandbox implements ShellSandbox {
  readonly type = 'shell' as const;
  readonly workspace = WORKSPACE;
  private phase: SandboxStatus = 'creating';
  /** Commands running now (execs, jobs, terminals): while any runs the sandbox reports `busy`, which keeps the
   * registry's idle reaper from closing it under a long test run. */
  private active = 0;
  private readonly readyP: Promise<void>;
  private holder: ChildProcess | null = null;
  private target: ExecTarget | null = null;
  private cgroups: SandboxCgroups | null = null;
  private egress: EgressProxy | null = null;
  private disk: SandboxDisk | null = null;
  private closing: Promise<void> | null = null;
  private readonly jobs = new JobTable();
  private readonly hostWorkspace: string;
  private hasBash = true;
  steps = 0;

  constructor(private readonly o: ShellSandboxOptions) {
    // createDisk() mounts the sandbox's disk at <dir>/disk; the workspace is a folder on it.
    this.hostWorkspace = path.join(o.dir, 'disk', 'workspace');
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

  private get limits() {
    const s = this.o.spec;
    return {
      cpu: s.cpu ?? this.o.limits.cpu,
      memoryMb: s.memory_mb ?? this.o.limits.memoryMb,
      maxProcesses: s.max_processes ?? this.o.limits.maxProcesses,
      diskMb: s.disk_mb ?? this.o.limits.diskMb ?? DEFAULT_DISK_MB,
      egress: {
        maxConnections: s.egress_max_connections ?? this.o.limits.egressMaxConnections ?? DEFAULT_EGRESS_CONNECTIONS,
        idleTimeoutMs: (s.egress_idle_timeout_s ?? this.o.limits.egressIdleTimeoutS ?? DEFAULT_EGRESS_IDLE_S) * 1000,
      },
    };
  }

  details(): SandboxDetails {
    const l = this.limits;
    const enforced = this.cgroups?.enforced ?? { cpu: 'none', memory: 'none', processes: 'rlimit' };
    const shell: ShellDetails = {
      image: this.o.spec.image ?? null,
      rootfs: this.o.rootfs.kind,
      notes: this.o.rootfs.notes,
      workspace: WORKSPACE,
      network: this.o.spec.block_network ? 'blocked' : 'proxy',
      uid: this.o.uid,
      limits: {
        cpu: enforced.cpu === 'cgroup' ? l.cpu : null,
        memory_mb: enforced.memory === 'cgroup' ? l.memoryMb : null,
        max_processes: l.maxProcesses,
        enforced_by: { ...enforced, processes: enforced.processes === 'none' ? 'rlimit' : enforced.processes },
      },
      disk: { limit_mb: l.diskMb, enforced_by: this.disk?.kind ?? null },
    };
    if (!this.o.spec.block_network) shell.egress = this.egress?.stats() ?? null;
    return { shell };
  }

  private async start(): Promise<void> {
    const { dir, uid, rootfs } = this.o;
    const l = this.limits;
    this.disk = await createDisk(dir, l.diskMb, uid);
    await mkdir(path.join(dir, 'net'), { recursive: true });
    // The sandbox user gets a name (prompts, `whoami`, tools that look themselves up).
    const etc = path.join(rootfs.path, 'etc');
    const passwd = (await readFile(path.join(etc, 'passwd'), 'utf8').catch(() => '')).replace(/\n?$/, '\n');
    const group = (await readFile(path.join(etc, 'group'), 'utf8').catch(() => '')).replace(/\n?$/, '\n');
    await writeFile(path.join(dir, 'passwd'), `${passwd}sandbox:x:${uid}:${uid}:Grove sandbox:${WORKSPACE}:/bin/sh\n`);
    await writeFile(path.join(dir, 'group'), `${group}sandbox:x:${uid}:\n`);
    this.hasBash = await readFile(path.join(rootfs.path, 'usr/bin/bash')).then(() => true, () => false);
    const root = rootfs.copyOnWrite ? await mountRootOverlay(rootfs.path, dir, this.disk) : rootfs.path;

    this.cgroups = this.o.cgroupRoot ? await this.o.cgroupRoot.create(path.basename(dir), { cpu: l.cpu, memoryMb: l.memoryMb, maxProcesses: l.maxProcesses }) : null;
    if (!this.o.spec.block_network) {
      this.egress = await startEgressProxy(path.join(dir, 'net', 'egress.sock'), this.o.spec.allow ?? [], this.o.log, { ...l.egress, sandboxId: this.o.id });
    }
    const command = this.o.spec.block_network
      ? ['/bin/sh', '-c', 'echo ready; exec sleep infinity']
      : ['python3', '/.grove/forward.py', '/.grove/net/egress.sock', String(PROXY_PORT)];
    const args = bwrapArgs({
      rootfs: root,
      writableRoot: rootfs.copyOnWrite === true,
      hostWorkspace: this.disk.workspace,
      workspace: WORKSPACE,
      hostTmp: this.disk.tmp,
      hostVarTmp: this.disk.varTmp,
      files: [
        { host: path.join(dir, 'passwd'), inside: '/etc/passwd' },
        { host: path.join(dir, 'group'), inside: '/etc/group' },
        { host: path.join(this.o.insideDir, 'forward.py'), inside: '/.grove/forward.py' },
        { host: path.join(this.o.insideDir, 'grove_pty.py'), inside: '/.grove/grove_pty.py' },
        { host: path.join(dir, 'net'), inside: '/.grove/net' },
      ],
      command,
      infoFd: 3,
    });
    const holderGroup = this.cgroups ? await this.cgroups.newGroup('h') : null;
    const files = this.cgroups && holderGroup ? this.cgroups.procsFiles(holderGroup) : [];
    const holder = spawnHolder(args, files);
    this.holder = holder;
    const pid1 = await waitHolder(holder, this.o.id, this.o.startTimeoutMs, {
      ready: () => this.phase === 'ready',
      exited: (code, signal) => {
        if (this.closing) return;
        this.o.log.warn({ sandbox_id: this.o.id, code, signal }, 'shell sandbox holder exited');
        this.phase = 'error';
      },
    });
    // bwrap's PID 1 stays at /; its child (the holder command) runs in the workspace: nsenter targets that one.
    const children = (await readFile(`/proc/${pid1}/task/${pid1}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean);
    const pid = children.length ? Number(children[0]) : pid1;
    this.target = { holderPid: pid, cwd: WORKSPACE, uid, gid: uid, cgroups: this.cgroups, maxProcesses: l.maxProcesses };
    if (this.closing) throw new GroveError('sandbox_closed', `Sandbox ${this.o.id} was closed while starting.`);
    this.phase = 'ready';
  }

  private use(): ExecTarget {
    if (this.closing || this.phase === 'closed') throw new GroveError('sandbox_closed', `Sandbox ${this.o.id} is closed.`);
    if (!this.target || this.phase !== 'ready') throw new GroveError('sandbox_not_ready', `Sandbox ${this.o.id} is not ready (${this.phase}).`);
    return this.target;
  }

  /** The environment every command starts with. */
  private env(extra: Record<string, string> = {}): Record<string, string> {
    const base: Record<string, string> = {
      PATH,
      HOME: WORKSPACE,
      USER: 'sandbox',
      LOGNAME: 'sandbox',
      LANG: 'C.UTF-8',
      TMPDIR: '/tmp',
    };
    if (!this.o.spec.block_network) {
      const proxy = `http://127.0.0.1:${PROXY_PORT}`;
      for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy']) base[k] = proxy;
    }
    return { ...base, ...(this.o.spec.env ?? {}), ...extra };
  }

  private cwd(cwd: string | undefined): string {
    if (cwd === undefined) return WORKSPACE;
    if (cwd.includes('\0')) throw new GroveError('invalid_request', 'cwd contains a NUL byte.');
    return cwd.startsWith('/') ? cwd : path.posix.join(WORKSPACE, cwd);
  }

  argv(command: string | string[], loginShell = false): string[] {
    if (Array.isArray(command)) return command;
    return [this.hasBash ? '/bin/bash' : '/bin/sh', loginShell ? '-lc' : '-c', command];
  }

  /** Low-level run used by exec, files and patches. */
  async run(opts: Partial<RunOptions> & { argv: string[] }) {
    const target = this.use();
    this.steps++;
    const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as typeof opts;
    this.active++;
    const running = await startExec(target, {
      cwd: WORKSPACE,
      timeoutMs: this.o.limits.execTimeoutMs,
      maxOutputBytes: this.o.limits.maxOutputBytes,
      mergeStderr: false,
      ...given,
      env: this.env(opts.env),
    }).catch((err: unknown) => {
      this.active--;
      throw err;
    });
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
    const running = await this.run(this.runOptions(req)).catch((err: unknown) => {
      if (err instanceof GroveError) throw err;
      throw new GroveError('exec_failed', `The command could not be started: ${(err as Error).message}`, { cause: err });
    });
    return running.result;
  }

  async startJob(req: ExecRequest): Promise<JobInfo> {
    const running = await this.run(this.runOptions(req));
    return this.jobs.add(`job_${randomBytes(8).toString('hex')}`, this.o.id, req.command, running);
  }

  async job(jobId: string, waitMs = 0): Promise<JobInfo> {
    return this.jobs.get(jobId, waitMs);
  }

  writeFile(p: string, data: Buffer, mode?: string) {
    return writeSandboxFile(this.fileCtx(), p, data, mode);
  }

  writeFileStream(p: string, body: Readable, maxBytes: number, mode?: string) {
    return writeSandboxFileStream(this.fileCtx(), p, body, maxBytes, mode);
  }

  readFile(p: string) {
    return readSandboxFile(this.fileCtx(), p);
  }

  listFiles(p: string) {
    return listFiles(this.fileCtx(), p);
  }

  private fileCtx() {
    return { run: this.run.bind(this), workspace: WORKSPACE, hostWorkspace: this.hostWorkspace, maxFileBytes: this.o.limits.maxFileBytes };
  }

  async applyPatch(patch: string, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<ApplyPatchResult> {
    // The patch goes to git on stdin: never through a shell, never into a file name.
    const r = await (
      await this.run({ argv: ['git', 'apply', '--verbose', '--whitespace=nowarn', '-'], cwd: this.cwd(opts.cwd), stdin: patch, timeoutMs: opts.timeoutMs })
    ).result;
    return { success: r.exit_code === 0, exit_code: r.exit_code, stdout: r.stdout, stderr: r.stderr };
  }

  async openPty(init: PtyInit): Promise<PtySession> {
    return openPty((o) => this.run(o), init, this.cwd(init.cwd));
  }

  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.phase = 'closing';
      await this.readyP.catch(() => {});
      this.jobs.closeAll();
      // Killing the cgroups ends every exec; the holder is PID 1's parent: with it the PID namespace ends.
      await this.cgroups?.destroy().catch((err: unknown) => this.o.log.warn({ err, sandbox_id: this.o.id }, 'cgroup cleanup failed'));
      this.holder?.kill('SIGKILL');
      await this.egress?.close().catch(() => {});
      await unmountUnder(this.o.dir);
      await rm(this.o.dir, { recursive: true, force: true }).catch((err: unknown) => this.o.log.warn({ err, sandbox_id: this.o.id }, 'workspace cleanup failed'));
      this.phase = 'closed';
      this.o.release();
    })());
  }
}
