// Repositories into sandboxes without internet: the local path (or mirror) of `repo` is bundled once on the host,
// the bundle uploaded into the sandbox, cloned to /workspace/testbed and checked out at the instance's base commit.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ShellSandbox } from '../shell-env/index.ts';
import { git } from './git.ts';
import type { RepoSpec } from './specs.ts';

export const TESTBED = '/workspace/testbed';

/** Bundles of local repositories, built once per path. */
export class RepoBundles {
  private readonly cache = new Map<string, Promise<Buffer>>();

  get(repoPath: string): Promise<Buffer> {
    let b = this.cache.get(repoPath);
    if (!b) {
      b = (async () => {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'grove-bundle-'));
        try {
          const file = path.join(dir, 'repo.bundle');
          await git(repoPath, ['bundle', 'create', file, '--all']);
          return await readFile(file);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      })();
      b.catch(() => this.cache.delete(repoPath));
      this.cache.set(repoPath, b);
    }
    return b;
  }
}

async function run(sb: ShellSandbox, command: string | string[], cwd: string, timeoutS = 300): Promise<string> {
  const r = await sb.exec({ command, cwd, timeout_s: timeoutS, merge_stderr: true, login_shell: false, background: false });
  if (r.exit_code !== 0) throw new Error(`${Array.isArray(command) ? command.join(' ') : command} exited ${r.exit_code}: ${r.stdout.slice(-2000)}`);
  return r.stdout;
}

/** Clones the bundle into TESTBED at `baseCommit` and runs the repository's setup commands. */
export async function checkoutRepo(sb: ShellSandbox, bundle: Buffer, baseCommit: string, spec: RepoSpec): Promise<void> {
  await sb.writeFile('/workspace/.grove/repo.bundle', bundle);
  await run(sb, ['git', 'clone', '-q', '--no-checkout', '/workspace/.grove/repo.bundle', TESTBED], '/workspace');
  await run(sb, ['git', '-c', 'advice.detachedHead=false', 'checkout', '-q', baseCommit], TESTBED);
  await run(sb, ['rm', '-rf', '/workspace/.grove'], '/workspace');
  for (const cmd of spec.setup) await run(sb, cmd, TESTBED, 1800);
}

/** Files a patch touches (the b/ side of its diff headers). */
export function patchFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) files.add(m[2]);
  for (const m of patch.matchAll(/^\+\+\+ b\/(\S+)/gm)) files.add(m[1]);
  return [...files];
}
