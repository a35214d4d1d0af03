// Preparing a shell sandbox for an instance: the repository arrives as a git bundle made on the host from a
// local path or mirror (no internet; it travels through the files API, so it works on every backend), is cloned
// into the workspace, checked out at `base_commit`, and the repository's install commands run.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecResult } from '../protocol/shell.ts';
import type { RepoSpec } from './specs.ts';
import { REPO_DIR, type RepoSources, type ShellTarget, type SweInstance } from './types.ts';

const run = promisify(execFile);
const COMMIT = /^[0-9a-f]{7,40}$/;

class SweSetupError extends Error {
  constructor(
    readonly code: 'unknown_repo' | 'bad_commit' | 'bundle_failed' | 'checkout_failed' | 'install_failed',
    message: string,
  ) {
    super(message);
  }
}

/** A bundle of every ref of the local repository (the base commit must be reachable from one). */
async function bundleRepo(source: string, baseCommit: string): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'grove-swe-bundle-'));
  try {
    const file = path.join(dir, 'repo.bundle');
    await run('git', ['-C', source, 'cat-file', '-e', `${baseCommit}^{commit}`]).catch(() => {
      throw new SweSetupError('bad_commit', `${baseCommit} is not a commit of ${source}`);
    });
    await run('git', ['-C', source, 'bundle', 'create', file, '--all'], { maxBuffer: 16 * 1024 * 1024 });
    return await readFile(file);
  } catch (err) {
    if (err instanceof SweSetupError) throw err;
    throw new SweSetupError('bundle_failed', `could not bundle ${source}: ${(err as Error).message}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function failed(r: ExecResult, what: string): string {
  return `${what} failed (exit ${r.exit_code}): ${(r.stderr || r.stdout).slice(-2000)}`;
}

/** Clones the instance's repository at its base commit into `<workspace>/repo` and runs the install commands. */
export async function prepareRepo(shell: ShellTarget, inst: SweInstance, sources: RepoSources, spec: RepoSpec | undefined): Promise<void> {
  const source = sources[inst.repo];
  if (!source) throw new SweSetupError('unknown_repo', `no local source for ${inst.repo}: add it to the repository table (repo → path)`);
  if (!COMMIT.test(inst.base_commit)) throw new SweSetupError('bad_commit', `base_commit "${inst.base_commit}" is not a commit hash`);
  const bundle = await bundleRepo(source, inst.base_commit);
  await shell.upload('.grove/repo.bundle', bundle);
  // One exec for the checkout; the commit and directory travel as arguments ($1, $2), never spliced into the script.
  const script = [
    'set -e',
    'git clone -q --no-checkout .grove/repo.bundle "$2"',
    'git -C "$2" checkout -q --detach "$1"',
    'git -C "$2" config user.email agent@grove.invalid',
    'git -C "$2" config user.name agent',
    'git -C "$2" remote remove origin',
    'rm -f .grove/repo.bundle',
  ].join('\n');
  const r = await shell.exec({ command: ['bash', '-c', script, 'grove-checkout', inst.base_commit, REPO_DIR], timeout_s: 600 });
  if (r.exit_code !== 0) throw new SweSetupError('checkout_failed', failed(r, `checkout of ${inst.repo} at ${inst.base_commit}`));
  for (const cmd of spec?.install ?? []) {
    const r = await shell.exec({ command: cmd, cwd: REPO_DIR, timeout_s: 1800 });
    if (r.exit_code !== 0) throw new SweSetupError('install_failed', failed(r, `install step "${cmd}"`));
  }
}
