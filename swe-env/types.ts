// The SWE environment's contracts: an instance as SWE-bench publishes it, and the shell it runs in.
import type { ExecInput, ExecResult } from '../protocol/shell.ts';

/** A SWE-bench instance (its published fields; the test lists decoded): the protocol's schema. */
export type { SweInstance } from '../protocol/swe.ts';

/**
 * What the SWE environment needs of a shell sandbox: run a command, write a file. A shell sandbox of the local
 * backend, a GroveClient-backed remote one and a Kubernetes pod all fit.
 */
export interface ShellTarget {
  exec(req: ExecInput): Promise<ExecResult>;
  /** Writes a file in the workspace (bytes, or UTF-8 text). */
  upload(path: string, data: Uint8Array | string, mode?: string): Promise<unknown>;
  /** Streams a host file into the workspace (large files: a repository bundle). Absent: upload() of its bytes. */
  uploadFile?(path: string, hostFile: string): Promise<unknown>;
}

/** Where repositories come from without internet: repo name ("owner/name") → a local git directory or mirror. */
export type RepoSources = Record<string, string>;

/** Inside the sandbox's workspace: the checkout. */
export const REPO_DIR = 'repo';
