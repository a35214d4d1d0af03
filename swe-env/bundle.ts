// Git bundles of what instances need, and nothing else: the history of their base commits (and the nearest tag
// before each, which version-from-git tools read). The bundle is made in a scratch repository that borrows the
// source's objects (alternates) and holds only refs to those commits, so the source's other refs (thousands of
// refs/pull/*) and any object off that history (a missing blob in a mirror) never matter. Bundles are files on
// the host, made once per (source, commit) and shared by every sandbox of a run; close() removes them.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const COMMIT = /^[0-9a-f]{7,40}$/;

export class SweSetupError extends Error {
  constructor(
    readonly code: 'unknown_repo' | 'bad_commit' | 'bundle_failed' | 'checkout_failed' | 'install_failed' | 'no_environment',
    message: string,
  ) {
    super(message);
  }
}

const git = (args: string[], opts: { cwd?: string } = {}) => run('git', args, { maxBuffer: 64 * 1024 * 1024, ...opts, env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: os.tmpdir() } });

/** The objects directory of a repository (bare or not). */
async function objectsDir(source: string): Promise<string> {
  const common = (await git(['-C', source, 'rev-parse', '--path-format=absolute', '--git-common-dir'])).stdout.trim();
  return path.join(common, 'objects');
}

/** Writes a bundle of `commit`'s history (and its nearest tag) of `source` to `file`. */
export async function bundleCommit(source: string, commit: string, file: string): Promise<void> {
  if (!COMMIT.test(commit)) throw new SweSetupError('bad_commit', `base_commit "${commit}" is not a commit hash`);
  const full = await git(['-C', source, 'rev-parse', '--verify', '--quiet', `${commit}^{commit}`]).then((r) => r.stdout.trim(), () => '');
  if (!full) throw new SweSetupError('bad_commit', `${commit} is not a commit of ${source}`);
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'grove-swe-bundle-'));
  try {
    await git(['init', '-q', '--bare', scratch]);
    await mkdir(path.join(scratch, 'objects', 'info'), { recursive: true });
    await writeFile(path.join(scratch, 'objects', 'info', 'alternates'), `${await objectsDir(source)}\n`);
    const refs = [`refs/heads/grove-base`];
    await git(['-C', scratch, 'update-ref', refs[0], full]);
    // The nearest tag (setuptools_scm and similar derive the package version from it); none is fine.
    const tag = await git(['-C', source, 'describe', '--tags', '--abbrev=0', full]).then((r) => r.stdout.trim(), () => '');
    if (tag && /^[\w.+-]{1,200}$/.test(tag)) {
      const target = (await git(['-C', source, 'rev-parse', '--verify', `refs/tags/${tag}`])).stdout.trim();
      await git(['-C', scratch, 'update-ref', `refs/tags/${tag}`, target]);
      refs.push(`refs/tags/${tag}`);
    }
    await git(['-C', scratch, 'bundle', 'create', file, ...refs]);
  } catch (err) {
    if (err instanceof SweSetupError) throw err;
    const e = err as Error & { stderr?: string };
    throw new SweSetupError('bundle_failed', `could not bundle ${commit} of ${source}: ${(e.stderr || e.message).trim().slice(-1000)}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Bundles made once per (source, commit) for a run, in a temporary directory of their own. */
export class BundleCache {
  private dir: Promise<string> | null = null;
  private readonly made = new Map<string, Promise<string>>();

  get(source: string, commit: string): Promise<string> {
    const key = `${source}\0${commit}`;
    let p = this.made.get(key);
    if (!p) {
      p = (async () => {
        this.dir ??= mkdtemp(path.join(os.tmpdir(), 'grove-swe-bundles-'));
        const file = path.join(await this.dir, `${this.made.size}-${commit}.bundle`);
        await bundleCommit(source, commit, file);
        return file;
      })();
      // A failure is not cached: the next sandbox tries again (and reports its own error).
      p.catch(() => this.made.delete(key));
      this.made.set(key, p);
    }
    return p;
  }

  async close(): Promise<void> {
    const dir = this.dir;
    this.dir = null;
    this.made.clear();
    if (dir) await rm(await dir, { recursive: true, force: true });
  }
}
