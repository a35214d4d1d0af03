// Workspace paths: what a client names (absolute under the workspace, or relative to it) → the path inside the
// sandbox and the host path behind it. `..` segments, NUL bytes and anything outside the workspace are refused,
// and so is a path whose existing part resolves (through symlinks) outside the workspace.
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { GroveError } from '../protocol/errors.ts';

export interface WorkspacePath {
  /** Path as the sandbox sees it ("/workspace/src/a.py"). */
  inside: string;
  /** Relative to the workspace ("" for the workspace itself). */
  rel: string;
  /** The host path behind it. */
  host: string;
}

/** Lexical check and mapping; no file system access. */
export function mapPath(input: string, workspace: string, hostWorkspace: string): WorkspacePath {
  if (input.includes('\0')) throw new GroveError('path_not_allowed', 'The path contains a NUL byte.');
  const segments = input.split('/');
  if (segments.includes('..')) throw new GroveError('path_not_allowed', `"${input}": ".." is not allowed in sandbox paths.`);
  let rel: string;
  if (input.startsWith('/')) {
    const norm = path.posix.normalize(input).replace(/\/+$/, '') || '/';
    if (norm !== workspace && !norm.startsWith(`${workspace}/`)) {
      throw new GroveError('path_not_allowed', `"${input}" is outside the workspace ${workspace}; give a path under it or a relative one.`);
    }
    rel = norm.slice(workspace.length + 1);
  } else {
    rel = path.posix.normalize(input).replace(/\/+$/, '');
    if (rel === '.') rel = '';
  }
  return { inside: rel ? `${workspace}/${rel}` : workspace, rel, host: rel ? path.join(hostWorkspace, rel) : hostWorkspace };
}

export type Kind = 'file' | 'directory' | 'symlink' | 'other' | 'missing';

/**
 * Resolves the existing part of `p` through symlinks and refuses it when that lands outside the workspace.
 * Returns what the path itself is (`missing` when it does not exist yet; a symlink is reported by its target).
 */
export async function checkOnHost(p: WorkspacePath, hostWorkspace: string): Promise<Kind> {
  const root = await realpath(hostWorkspace);
  let probe = p.host;
  // The deepest existing ancestor decides for paths that do not exist yet (an upload's parents).
  let real: string | null = null;
  for (;;) {
    real = await realpath(probe).catch(() => null);
    if (real !== null || probe === hostWorkspace || probe.length <= hostWorkspace.length) break;
    probe = path.dirname(probe);
  }
  if (real === null) real = root;
  if (real !== root && !real.startsWith(`${root}/`)) {
    throw new GroveError('path_not_allowed', `"${p.inside}" resolves outside the workspace (through a symlink).`);
  }
  if (probe !== p.host) {
    // A dangling symlink is the last component: refuse (its target may be created outside later).
    const l = await lstat(p.host).catch(() => null);
    if (l?.isSymbolicLink()) throw new GroveError('path_not_allowed', `"${p.inside}" is a dangling symlink.`);
    return 'missing';
  }
  const st = await lstat(real);
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  return 'other';
}
