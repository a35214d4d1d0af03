// A shell sandbox on a worker pod: the shape of shell-env's ShellSandbox (which k8s/ may not import), each call one
// request to the worker's shell routes; the interactive terminal is a WebSocket to the worker's own (remote-pty.ts).
import type { Readable } from 'node:stream';
import type { GroveClient } from '../client/index.ts';
import type { ApplyPatchResult, ExecRequest, ExecResult, FileEntry, JobInfo } from '../protocol/shell.ts';
import { RemoteSandbox } from './remote-sandbox.ts';
import type { PtyInit, PtySession } from '../sandbox/pty.ts';
import { openRemotePty } from './remote-pty.ts';
import { workerError } from './remote-placement.ts';
import { workerRequest } from './worker-http.ts';

type ExecBody = Parameters<GroveClient['exec']>[1];

function execBody(req: ExecRequest): ExecBody {
  const { background: _b, ...rest } = req as ExecRequest & { background?: boolean };
  return rest as ExecBody;
}

export class RemoteShellSandbox extends RemoteSandbox {
  readonly workspace = '/workspace';
  private readonly terminals = new Set<PtySession>();

  exec(req: ExecRequest): Promise<ExecResult> {
    return this.remote((c, wid) => c.exec(wid, execBody(req)));
  }

  startJob(req: ExecRequest): Promise<JobInfo> {
    return this.remote((c, wid) => c.startJob(wid, execBody(req)));
  }

  job(jobId: string, waitMs = 0): Promise<JobInfo> {
    return this.remote((c, wid) => c.job(wid, jobId, Math.ceil(waitMs / 1000)));
  }

  writeFile(path: string, data: Buffer, mode?: string): Promise<{ path: string; size: number }> {
    return this.remote((c, wid) => c.uploadFile(wid, path, data, mode));
  }

  async readFile(path: string): Promise<{ path: string; data: Buffer }> {
    const bytes = await this.remote((c, wid) => c.downloadFile(wid, path));
    return { path, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  }

  /** The worker's file as a stream (its Content-Length kept): the files route sends it on as it arrives. */
  async openFile(path: string): Promise<{ stream: Readable; size: number | null }> {
    const w = this.endpoint();
    const res = await workerRequest(w, { method: 'GET', path: `/sandboxes/${encodeURIComponent(w.wid)}/files?path=${encodeURIComponent(path)}` });
    const len = Number(res.headers['content-length']);
    return { stream: res.body, size: Number.isSafeInteger(len) && len >= 0 ? len : null };
  }

  async listFiles(path: string): Promise<{ path: string; files: FileEntry[] }> {
    return (await this.remote((c, wid) => c.listFiles(wid, path))) as { path: string; files: FileEntry[] };
  }

  applyPatch(patch: string, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<ApplyPatchResult> {
    return this.remote((c, wid) => c.applyPatch(wid, patch, opts.cwd));
  }

  /** A terminal on the worker, relayed frame by frame; open terminals count as use (status busy), as locally. */
  async openPty(init: PtyInit): Promise<PtySession> {
    const w = this.endpoint();
    let session: PtySession;
    try {
      session = await openRemotePty(w, w.wid, init);
    } catch (err) {
      throw workerError(err, w.pod);
    }
    this.terminals.add(session);
    this.inFlight++;
    session.onExit(() => {
      if (this.terminals.delete(session)) this.inFlight--;
    });
    return session;
  }

  /** Closing the worker's sandbox ends its terminals (their exit frames reach the clients); any left are cut. */
  override async close(): Promise<void> {
    await super.close();
    await Promise.all([...this.terminals].map((t) => t.kill()));
  }
}
