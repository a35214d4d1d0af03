// Job-style execs of one sandbox: started at once, polled or waited for with a server-side timeout.
import { GroveError } from '../protocol/errors.ts';
import type { ExecResult, JobInfo } from '../protocol/shell.ts';
import type { RunningExec } from './exec.ts';

interface Job {
  info: JobInfo;
  done: Promise<void>;
  running: RunningExec | null;
}

/** Finished jobs remembered per sandbox; the oldest are forgotten first. */
const KEEP_FINISHED = 1000;

export class JobTable {
  private readonly jobs = new Map<string, Job>();

  add(jobId: string, sandboxId: string, command: string | string[], running: RunningExec): JobInfo {
    const info: JobInfo = {
      job_id: jobId,
      sandbox_id: sandboxId,
      command,
      status: 'running',
      created_at: new Date().toISOString(),
      finished_at: null,
      result: null,
    };
    const job: Job = { info, running, done: Promise.resolve() };
    job.done = running.result.then(
      (r: ExecResult) => this.finish(job, r),
      (err: unknown) => this.finish(job, failedResult(err)),
    );
    this.jobs.set(jobId, job);
    this.forget();
    return { ...info };
  }

  private finish(job: Job, result: ExecResult): void {
    job.info.status = 'finished';
    job.info.finished_at = new Date().toISOString();
    job.info.result = result;
    job.running = null;
  }

  private forget(): void {
    let finished = 0;
    for (const j of this.jobs.values()) if (j.info.status === 'finished') finished++;
    for (const [id, j] of this.jobs) {
      if (finished <= KEEP_FINISHED) break;
      if (j.info.status === 'finished') {
        this.jobs.delete(id);
        finished--;
      }
    }
  }

  async get(jobId: string, waitMs: number): Promise<JobInfo> {
    const job = this.jobs.get(jobId);
    if (!job) throw new GroveError('job_not_found', `No job "${jobId}" in this sandbox.`);
    if (waitMs > 0 && job.info.status === 'running') {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([job.done, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
    }
    return { ...job.info };
  }

  /** Kills running jobs (the sandbox is closing). */
  closeAll(): void {
    for (const j of this.jobs.values()) void j.running?.kill();
  }
}

function failedResult(err: unknown): ExecResult {
  return {
    exit_code: -1,
    timed_out: false,
    signal: null,
    stdout: '',
    stderr: `grove: the job failed to run: ${err instanceof Error ? err.message : String(err)}`,
    stdout_bytes: 0,
    stderr_bytes: 0,
    truncated: { stdout: false, stderr: false },
    merged: false,
    duration_ms: 0,
  };
}
