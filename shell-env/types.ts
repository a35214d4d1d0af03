// What the server sees of a shell sandbox (the env owns this contract).
import type { Readable } from 'node:stream';
import type { ApplyPatchResult, ExecRequest, ExecResult, FileEntry, JobInfo } from '../protocol/shell.ts';
import type { PtyInit, PtySession } from '../sandbox/pty.ts';
import type { Sandbox } from '../sandbox/types.ts';

export type { PtyInit, PtySession } from '../sandbox/pty.ts';

export interface ShellSandbox extends Sandbox {
  readonly type: 'shell';
  /** The workspace inside the sandbox ("/workspace"). */
  readonly workspace: string;
  exec(req: ExecRequest): Promise<ExecResult>;
  startJob(req: ExecRequest): Promise<JobInfo>;
  /** The job's info; with waitMs > 0, once it finished or waitMs passed. */
  job(jobId: string, waitMs?: number): Promise<JobInfo>;
  writeFile(path: string, data: Buffer, mode?: string): Promise<{ path: string; size: number }>;
  /** A large file as it arrives (file-stream.ts), bounded by maxBytes, not by a request body. Absent: writeFile(). */
  writeFileStream?(path: string, body: Readable, maxBytes: number, mode?: string): Promise<{ path: string; size: number }>;
  readFile(path: string): Promise<{ path: string; data: Buffer }>;
  /** Where the files live elsewhere (a kubernetes worker): the file as a stream. Absent: readFile(). */
  openFile?(path: string): Promise<{ stream: Readable; size: number | null }>;
  listFiles(path: string): Promise<{ path: string; files: FileEntry[] }>;
  applyPatch(patch: string, opts?: { cwd?: string; timeoutMs?: number }): Promise<ApplyPatchResult>;
  openPty(init: PtyInit): Promise<PtySession>;
}

export function isShellSandbox(sb: Sandbox): sb is ShellSandbox {
  return sb.type === 'shell' && typeof (sb as Partial<ShellSandbox>).exec === 'function';
}
