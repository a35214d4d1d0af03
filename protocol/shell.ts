// Wire schemas of shell sandboxes: details in the sandbox info, exec (sync and jobs), files, apply_patch.
// Shared by the server (validation + OpenAPI), shell-env and the typed client.
import { z } from 'zod';

/** A string that becomes an argv entry, a path or an environment entry: no NUL byte (the OS cannot take one;
 * found by the route fuzzer as a 500). */
export const processString = (max: number) => z.string().max(max).refine((s) => !s.includes('\0'), 'must not contain NUL bytes');

/** An environment variable's name: a POSIX shell name (the environment is applied inside the sandbox by a shell). */
export const envName = z.string().min(1).max(256).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'letters, digits and _, not starting with a digit');

/** How a limit is enforced: a cgroup, a per-process rlimit, or not at all on this host. */
export const LimitEnforcement = z.enum(['cgroup', 'rlimit', 'none']);

/** A per-sandbox limit was hit (as a browser sandbox's `limit` event): what exceeded it was refused or closed. */
export const ShellLimitEvent = z.object({
  type: z.literal('limit'),
  /** `egress_connections`: the egress proxy's cap on open connections (beyond it: 503 and closed);
   * `egress_idle`: connections idle for the idle timeout were closed (`max` in seconds). */
  limit: z.enum(['egress_connections', 'egress_idle']),
  max: z.number().int(),
  message: z.string(),
  /** ISO 8601. */
  at: z.string(),
});
export type ShellLimitEvent = z.infer<typeof ShellLimitEvent>;

/** The egress proxy of a sandbox without block_network: its limits and what they did. */
export const EgressDetails = z.object({
  max_connections: z.number().int(),
  idle_timeout_s: z.number(),
  /** Connections open now, and the most at once. */
  open: z.number().int(),
  peak: z.number().int(),
  /** Connections refused at the cap, and closed after the idle timeout. */
  refused: z.number().int(),
  idle_closed: z.number().int(),
  /** The newest limit events (at most 20). */
  events: z.array(ShellLimitEvent),
});
export type EgressDetails = z.infer<typeof EgressDetails>;

export const ShellDetails = z.object({
  /** The image asked for (null when none was). */
  image: z.string().nullable(),
  /** `image`: the image table mapped it to a local root file system; `host`: the host's root, read-only. */
  rootfs: z.enum(['image', 'host']),
  /** Human-readable notes, e.g. that an unknown image runs on the host's root file system. */
  notes: z.array(z.string()),
  /** The writable workspace inside the sandbox (also the default cwd). */
  workspace: z.string(),
  /** `blocked`: empty network namespace (or, pod-isolated, a pod whose egress is denied); `proxy`: HTTP(S) egress
   * through the filtering proxy only; `pod`: pod-isolated on Kubernetes, egress as the pod's NetworkPolicy allows
   * (public addresses only). */
  network: z.enum(['blocked', 'proxy', 'pod']),
  /** The non-root uid commands run as. */
  uid: z.number().int(),
  limits: z.object({
    cpu: z.number().nullable(),
    memory_mb: z.number().int().nullable(),
    max_processes: z.number().int(),
    enforced_by: z.object({ cpu: LimitEnforcement, memory: LimitEnforcement, processes: LimitEnforcement }),
  }),
  /** Size of /workspace + /tmp + /var/tmp (one file system: filling it is ENOSPC inside, never the host's disk):
   * `loop` an ext4 image, `tmpfs` memory-backed where loop devices are missing, null while starting. */
  disk: z.object({ limit_mb: z.number().int(), enforced_by: z.enum(['loop', 'tmpfs']).nullable() }).optional(),
  /** network `proxy`: the egress proxy's connection limits and counts (null while starting). */
  egress: EgressDetails.nullable().optional(),
});
export type ShellDetails = z.infer<typeof ShellDetails>;

export const ExecRequest = z
  .object({
    /** A string runs with `bash -c` (or `sh -c` where bash is missing); an array is the argv itself. */
    command: z.union([processString(1_000_000).min(1), z.array(processString(1_000_000)).min(1).max(10_000)]),
    /** Working directory inside the sandbox (absolute, or relative to the workspace). */
    cwd: processString(4096).min(1).optional(),
    env: z.record(envName, processString(65_536)).optional(),
    /** Seconds; the whole process tree is killed when it passes and the exit code is 124. */
    timeout_s: z.number().positive().max(86_400).optional(),
    /** Bytes kept per stream (head and tail; the middle is replaced by a marker). */
    max_output_bytes: z.number().int().min(64).max(64 * 1024 * 1024).optional(),
    /** stderr into stdout (one interleaved stream). */
    merge_stderr: z.boolean().default(false),
    /** Data written to the command's stdin (otherwise stdin is empty). */
    stdin: z.string().max(64 * 1024 * 1024).optional(),
    /** `bash -lc` instead of `bash -c` for string commands. */
    login_shell: z.boolean().default(false),
    /** Start as a job and answer at once with its id (poll or wait with GET .../jobs/{job_id}). */
    background: z.boolean().default(false),
  })
  .strict();
export type ExecRequest = z.infer<typeof ExecRequest>;
export type ExecInput = z.input<typeof ExecRequest>;

export const ExecResult = z.object({
  exit_code: z.number().int(),
  /** The timeout killed the process tree (exit_code 124). */
  timed_out: z.boolean(),
  /** Killed by a signal (name), else null. 124 timeouts report SIGKILL here too. */
  signal: z.string().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  /** Bytes each stream produced (before truncation). */
  stdout_bytes: z.number().int(),
  stderr_bytes: z.number().int(),
  truncated: z.object({ stdout: z.boolean(), stderr: z.boolean() }),
  merged: z.boolean(),
  duration_ms: z.number(),
});
export type ExecResult = z.infer<typeof ExecResult>;

const JobStatus = z.enum(['running', 'finished']);
export const JobInfo = z.object({
  job_id: z.string(),
  sandbox_id: z.string(),
  command: z.union([z.string(), z.array(z.string())]),
  status: JobStatus,
  created_at: z.string(),
  finished_at: z.string().nullable(),
  /** Present once finished. */
  result: ExecResult.nullable(),
});
export type JobInfo = z.infer<typeof JobInfo>;

export const JobParams = z.object({ id: z.string().min(1).max(100), job_id: z.string().min(1).max(100) });
export const JobWaitQuery = z.object({
  wait: z.coerce.number().min(0).max(600).default(0).describe('seconds to wait for the job to finish (0: answer at once)'),
});

export const FileUpload = z
  .object({
    path: z.string().min(1).max(4096),
    /** File content, base64 (default) or utf8 text. */
    content: z.string(),
    encoding: z.enum(['base64', 'utf8']).default('base64'),
    /** Octal mode string ("755") applied after writing. */
    mode: z.string().regex(/^[0-7]{3,4}$/).optional(),
  })
  .strict();
export type FileUpload = z.infer<typeof FileUpload>;

export const FileWritten = z.object({ path: z.string(), size: z.number().int() });
export const FilePathQuery = z.object({ path: z.string().min(1).max(4096) });

export const FileEntry = z.object({
  name: z.string(),
  path: z.string(),
  type: z.enum(['file', 'directory', 'symlink', 'other']),
  size: z.number().int(),
  /** ISO 8601. */
  modified: z.string(),
});
export type FileEntry = z.infer<typeof FileEntry>;
export const FileList = z.object({ path: z.string(), files: z.array(FileEntry) });
export type FileList = z.infer<typeof FileList>;

export const ApplyPatchRequest = z
  .object({
    /** A unified diff (git format works best); passed to `git apply` on stdin, never through a shell. */
    patch: z.string().min(1).max(64 * 1024 * 1024),
    cwd: processString(4096).min(1).optional(),
    timeout_s: z.number().positive().max(3600).optional(),
  })
  .strict();
export const ApplyPatchResult = z.object({ success: z.boolean(), exit_code: z.number().int(), stdout: z.string(), stderr: z.string() });
export type ApplyPatchResult = z.infer<typeof ApplyPatchResult>;
