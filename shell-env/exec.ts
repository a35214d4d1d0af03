// One command in a sandbox: a small sh wrapper joins the sandbox's cgroups (and the exec's own freezer group),
// sets rlimits and the stream layout, then execs nsenter into the holder's namespaces (its user namespace too) as
// the sandbox's uid. The command itself is always an argv element, never spliced into shell text. A timeout
// freezes and kills the exec's cgroup (every descendant, daemonised or not) and reports exit code 124.
// Nothing the client sends reaches a process outside the sandbox: the host side (wrapper, nsenter; root, in the
// host's mount namespace) runs with a fixed environment, and the command's environment is applied only inside,
// after the namespace entry and the uid switch: a shell there reads it from a pipe (envScript) and execs the
// command. Names and values are checked first (checkEnv).
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { GroveError } from '../protocol/errors.ts';
import type { ExecRequest, ExecResult } from '../protocol/shell.ts';
import type { SandboxCgroups } from './cgroups.ts';
import { CappedOutput } from './output.ts';

// Run by bash (it can close a descriptor numbered 10 or more; dash cannot). $1 merge stderr (0/1), $2 process limit
// (0: none), $3 CPU seconds (0: none), $4 the highest fd handed on, $5 n, then n cgroup.procs files. Every other
// descriptor the server inherited without close-on-exec is closed: none reaches the sandbox.
const WRAPPER = [
  'merge=$1; nproc=$2; cpus=$3; keep=$4; n=$5; shift 5',
  'for f in /proc/$$/fd/*; do f=${f##*/}; [ "$f" -gt "$keep" ] && { eval "exec $f>&-"; } 2>/dev/null; done',
  'while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done',
  '[ "$merge" = 1 ] && exec 2>&1',
  '[ "$nproc" -gt 0 ] && ulimit -u "$nproc"',
  '[ "$cpus" -gt 0 ] && ulimit -t "$cpus"',
  'exec "$@"',
].join('\n');

/** The environment of host-side processes (wrapper, nsenter, the holder): fixed, never the client's. */
export const HOST_ENV: Record<string, string> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/** Environment names a command may be given: POSIX-shell names. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Refuses (400) an environment with a bad name or a NUL byte in a value. */
export function checkEnv(env: Record<string, string> | undefined, where = 'env'): void {
  for (const [k, v] of Object.entries(env ?? {})) {
    if (k.length > 256 || !ENV_NAME.test(k)) throw new GroveError('invalid_request', `${where}: "${k.slice(0, 64)}" is not a valid environment variable name (letters, digits, _; not starting with a digit).`);
    if (typeof v !== 'string' || v.includes('\0') || v.length > 65_536) throw new GroveError('invalid_request', `${where}.${k}: the value must be a string without NUL bytes, at most 65536 characters.`);
  }
}

/** The environment as sh text sourced inside the sandbox: `export K='v'` lines (names checked, values quoted). */
export function envScript(env: Record<string, string>): string {
  checkEnv(env);
  return Object.entries(env)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, "'\\''")}'\n`)
    .join('');
}

// Runs inside, as the sandbox's uid: $1 the fd with the environment, $2 the cwd, then the command.
const INSIDE = [
  'fd=$1; cwd=$2; shift 2',
  // The fd is a socket (Node's extra stdio), which /proc/self/fd/N cannot open: cat reads it.
  'vars=$(cat <&"$fd") || exit 125',
  'eval "exec $fd<&-"',
  'eval "$vars"; unset vars fd',
  'cd -- "$cwd" || exit 1',
  'exec "$@"',
].join('\n');

export interface ExecTarget {
  /** Host pid of a process in the sandbox's namespaces whose cwd is `cwd`. */
  holderPid: number;
  cwd: string;
  uid: number;
  gid: number;
  cgroups: SandboxCgroups | null;
  /** RLIMIT_NPROC for the sandbox uid (0: none). */
  maxProcesses: number;
}

export interface RunOptions {
  argv: string[];
  /** Absolute path inside the sandbox. */
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
  mergeStderr: boolean;
  stdin?: Buffer | string;
  /** Extra pipes (fd 3, ...) handed to the command, e.g. the PTY helper's control channel. */
  extraFds?: number;
  /** Keep stdin open as a pipe (the caller writes to child.stdin); `stdin` is ignored. */
  interactive?: boolean;
}

/**
 * An API exec request → run options, for either kind of shell sandbox: the sandbox maps the command to argv and
 * the API cwd to its own directory; its limits fill in what the request leaves out.
 */
export function requestRunOptions(
  req: ExecRequest,
  argv: string[],
  cwd: string,
  limits: { execTimeoutMs: number; maxOutputBytes: number },
): Partial<RunOptions> & { argv: string[] } {
  return {
    argv,
    cwd,
    env: req.env,
    timeoutMs: req.timeout_s !== undefined ? req.timeout_s * 1000 : limits.execTimeoutMs,
    maxOutputBytes: req.max_output_bytes ?? limits.maxOutputBytes,
    mergeStderr: req.merge_stderr,
    stdin: req.stdin,
  };
}

/** A started command: its result, and a way to stop it early. */
export interface RunningExec {
  child: ChildProcess;
  result: Promise<ExecResult>;
  /** The kept stdout bytes (no truncation marker), for binary consumers once `result` settled. */
  stdoutBytes(): Buffer;
  kill(): Promise<void>;
}

/** `sh -c WRAPPER ...` arguments that join `files` (cgroup.procs) and exec `command`. */
export function wrapperArgs(files: string[], command: string[], opts: { merge?: boolean; maxProcesses?: number; cpuSeconds?: number; keepFd?: number } = {}): string[] {
  return [
    '-c', WRAPPER, 'grove-exec',
    opts.merge ? '1' : '0', String(opts.maxProcesses ?? 0), String(opts.cpuSeconds ?? 0), String(opts.keepFd ?? 2), String(files.length), ...files,
    ...command,
  ];
}

const NSENTER = '/usr/bin/nsenter';
export const WRAPPER_SHELL = '/bin/bash';

export async function startExec(target: ExecTarget, opts: RunOptions): Promise<RunningExec> {
  const script = envScript(opts.env);
  const cg = target.cgroups;
  const group = cg ? await cg.newGroup() : null;
  const files = cg && group ? cg.procsFiles(group) : [];
  const cpuSeconds = Math.ceil(opts.timeoutMs / 1000) + 1;
  const extra = opts.extraFds ?? 0;
  // The environment comes on the fd after the extra pipes; the shell inside closes it before the command runs.
  const envFd = 3 + extra;
  // nsenter's --wd=DIR opens DIR before entering the mount namespace, so -w takes the holder's cwd and the tiny
  // sh inside enters the asked one (the path stays an argv element).
  const nsenter = [
    NSENTER, '-t', String(target.holderPid), '-U', '-m', '-p', '-n', '-i', '-u', '-r', '-w',
    '-S', String(target.uid), '-G', String(target.gid), '--', '/bin/sh', '-c', INSIDE, 'grove-exec', String(envFd), opts.cwd, ...opts.argv,
  ];
  const args = wrapperArgs(files, nsenter, { merge: opts.mergeStderr, maxProcesses: target.maxProcesses, cpuSeconds, keepFd: envFd });
  const child = spawn(WRAPPER_SHELL, args, {
    env: HOST_ENV,
    // Always a new session: no controlling terminal the sandbox could reach through /dev/tty (TIOCSTI), and
    // without cgroups the process group is what a timeout kills.
    detached: true,
    stdio: [opts.stdin === undefined && !opts.interactive ? 'ignore' : 'pipe', 'pipe', opts.mergeStderr ? 'ignore' : 'pipe', ...Array<'pipe'>(extra + 1).fill('pipe')],
  });
  const envPipe = child.stdio[envFd] as NodeJS.WritableStream | null;
  envPipe?.on('error', () => {});
  envPipe?.end(script);
  const started = performance.now();
  const out = new CappedOutput(opts.maxOutputBytes);
  const err = new CappedOutput(opts.maxOutputBytes);
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => err.push(b));
  // The command may exit without reading its input.
  child.stdin?.on('error', () => {});
  if (opts.stdin !== undefined && !opts.interactive) child.stdin?.end(opts.stdin);
  let timedOut = false;
  let killing: Promise<void> | null = null;
  const killTree = () =>
    (killing ??= (async () => {
      if (cg && group) await cg.kill(group);
      // Also the wrapper itself, in case it had not joined its cgroup yet.
      child.kill('SIGKILL');
      if (!cg && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    })());
  const timer = setTimeout(() => {
    timedOut = true;
    void killTree();
  }, opts.timeoutMs);
  const result = new Promise<ExecResult>((resolve, reject) => {
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (cg && group) void cg.releaseGroup(group);
      const merged = opts.mergeStderr;
      let exit = code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : -1);
      if (timedOut) exit = 124;
      resolve({
        exit_code: exit,
        timed_out: timedOut,
        signal: timedOut ? 'SIGKILL' : signal ?? null,
        stdout: out.text(),
        stderr: merged ? '' : err.text(),
        stdout_bytes: out.total,
        stderr_bytes: merged ? 0 : err.total,
        truncated: { stdout: out.truncated, stderr: merged ? false : err.truncated },
        merged,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      });
    });
  });
  return { child, result, stdoutBytes: () => out.bytes(), kill: killTree };
}
