// The holder of a shell sandbox: the bubblewrap process that owns its namespaces (bwrap.ts). Spawned through the
// wrapper shell with its arguments on fd 4 (its command line names no host path) and bwrap's info on fd 3; its
// user namespace is mapped from outside once it exists, then it prints "ready".
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { GroveError } from '../protocol/errors.ts';
import { holderCommand, holderPayload, IDENTITY_MAP } from './bwrap.ts';
import { HOST_ENV, wrapperArgs, WRAPPER_SHELL } from './exec.ts';

export interface HolderHooks {
  /** Whether the sandbox counts as started (an exit before is a failed start). */
  ready(): boolean;
  /** The holder exited after the start. */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

/** Spawns the holder for bwrap `args`, in the cgroup whose procs files are `files`. */
export function spawnHolder(args: string[], files: string[]): ChildProcess {
  // fd 3: bwrap's info fd; fd 4: its arguments (--args), so its command line names no host path.
  const holder = spawn(WRAPPER_SHELL, wrapperArgs(files, holderCommand(args, 4), { keepFd: 4 }), {
    env: HOST_ENV,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
  });
  holder.stdin?.on('error', () => {});
  const argsPipe = holder.stdio[4] as NodeJS.WritableStream;
  argsPipe.on('error', () => {});
  argsPipe.end(holderPayload(args));
  return holder;
}

/**
 * Resolves with the holder's pid in the host namespace once it printed "ready" (its user namespace mapped on the
 * way); kills it and rejects when it fails or takes longer than `startTimeoutMs`. After the sandbox is ready, an
 * exit of the holder is reported to `exited`.
 */
export function waitHolder(holder: ChildProcess, id: string, startTimeoutMs: number, on: HolderHooks): Promise<number> {
  return new Promise((resolve, reject) => {
    let info = '';
    let out = '';
    let err = '';
    let pid = 0;
    let mapped = false;
    const timer = setTimeout(() => fail(`did not start within ${startTimeoutMs} ms`), startTimeoutMs);
    const fail = (why: string) => {
      clearTimeout(timer);
      holder.kill('SIGKILL');
      reject(new GroveError('internal_error', `Shell sandbox ${id} failed to start: ${why}${err ? ` (${err.trim().slice(0, 500)})` : ''}`));
    };
    const check = () => {
      if (!mapped && out.includes('userns')) {
        mapped = true;
        // The holder's user namespace exists: map every id to itself, then let it go on (holderCommand).
        mapUserNamespace(holder).then(
          () => holder.stdin?.end('go\n'),
          (e: unknown) => fail(`could not map its user namespace: ${(e as Error).message}`),
        );
      }
      const m = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (m) pid = Number(m[1]);
      if (pid && /\bready\b/.test(out)) {
        clearTimeout(timer);
        resolve(pid);
      }
    };
    (holder.stdio[3] as NodeJS.ReadableStream).on('data', (b: Buffer) => {
      info += b.toString();
      check();
    });
    holder.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      check();
    });
    holder.stderr?.on('data', (b: Buffer) => {
      err += b.toString();
      if (err.length > 4000) err = err.slice(-4000);
    });
    holder.once('error', (e) => fail(e.message));
    holder.once('exit', (code, signal) => {
      if (!on.ready()) fail(`the holder exited (${signal ?? code})`);
      else on.exited(code, signal);
    });
  });
}

async function mapUserNamespace(holder: ChildProcess): Promise<void> {
  if (!holder.pid) throw new Error('the holder has no pid');
  await writeFile(`/proc/${holder.pid}/uid_map`, IDENTITY_MAP);
  await writeFile(`/proc/${holder.pid}/gid_map`, IDENTITY_MAP);
}
