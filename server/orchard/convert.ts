// Orchard Env's wire values ↔ Grove's: Kubernetes quantities, job documents, sandbox documents.
// Shapes from microsoft/Orchard orchard_env/orchestrator/api.py and client/sandbox_client.py (read, not copied).
import type { SandboxInfo } from '../../protocol/sandbox.ts';
import type { JobInfo } from '../../protocol/shell.ts';

/** "4" → 4, "2000m" → 2, "0.5" → 0.5; null when unreadable. */
export function parseCpu(q: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)(m?)\s*$/.exec(q);
  if (!m) return null;
  const n = Number(m[1]) / (m[2] ? 1000 : 1);
  return n > 0 ? n : null;
}

const MEMORY_UNITS: Record<string, number> = {
  '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4,
};

/** "16Gi" → 16384 (MiB), "512Mi" → 512, "1G" → 954; null when unreadable. */
export function parseMemoryMb(q: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kMGT]i?|)\s*$/.exec(q);
  if (!m || MEMORY_UNITS[m[2]] === undefined) return null;
  const mb = Math.floor((Number(m[1]) * MEMORY_UNITS[m[2]]) / 1024 ** 2);
  return mb > 0 ? mb : null;
}

/** What Orchard remembers of a sandbox that Grove's info does not hold. */
export interface OrchardMeta {
  image: string;
  block_network: boolean;
  cpu: string;
  memory: string;
  timeout: number;
}

/** Orchard's sandbox document: status pending | ready | failed | terminated. */
export function sandboxDoc(info: SandboxInfo, meta: OrchardMeta) {
  const status =
    info.status === 'creating' ? 'pending' : info.status === 'ready' || info.status === 'busy' ? 'ready' : info.status === 'error' ? 'failed' : 'terminated';
  const notes = info.shell?.notes.join('; ') ?? '';
  return {
    sandbox_id: info.sandbox_id,
    namespace: 'grove',
    image: meta.image,
    pod_name: null,
    block_network: meta.block_network,
    cpu: meta.cpu,
    memory: meta.memory,
    created_at: Date.parse(info.created_at) / 1000,
    ready: status === 'ready',
    status,
    status_message: info.error ? `${info.error.code}: ${info.error.message}` : notes,
  };
}

/** Orchard's job document: queued → running → succeeded | failed (non-zero exit and timeouts fail). */
export function jobDoc(job: JobInfo) {
  const r = job.result;
  const created = Date.parse(job.created_at) / 1000;
  let status = 'running';
  let error: string | null = null;
  if (r) {
    status = r.exit_code === 0 ? 'succeeded' : 'failed';
    if (r.timed_out) error = 'Command timed out (the process tree was killed, exit code 124)';
    else if (r.exit_code < 0) error = r.stderr;
  }
  return {
    job_id: job.job_id,
    sandbox_id: job.sandbox_id,
    command: Array.isArray(job.command) ? job.command.join(' ') : job.command,
    status,
    stdout: r?.stdout ?? '',
    stderr: r?.stderr ?? '',
    exit_code: r ? r.exit_code : null,
    created_at: created,
    started_at: created,
    completed_at: job.finished_at ? Date.parse(job.finished_at) / 1000 : null,
    error,
  };
}
