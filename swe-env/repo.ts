// Preparing a shell sandbox for an instance: the repository arrives as a git bundle of the base commit's history
// (bundle.ts), made on the host from a local path or mirror (no internet) and streamed into the sandbox (no
// request-size limit; a target that cannot stream gets it through the files API), is cloned into the workspace,
// checked out at `base_commit`; in an environment image (env-image.ts) a workspace virtual environment on top of
// the image's gets the repository's install; the row's install commands run.
import { readFile } from 'node:fs/promises';
import type { ExecInput, ExecResult } from '../protocol/shell.ts';
import { BundleCache, SweSetupError } from './bundle.ts';
import { ENV_VENV } from './env-image.ts';
import type { RepoSpec } from './specs.ts';
import { REPO_DIR, type RepoSources, type ShellTarget, type SweInstance } from './types.ts';

export { SweSetupError } from './bundle.ts';

/** The workspace virtual environment (writable; the image's is read-only like the rest of its root). */
export const WORK_VENV = '/workspace/.venv';

/** Environment of every command in an instance's sandbox: the workspace venv, then the image's, then the system. */
export const SWE_EXEC_ENV: Record<string, string> = {
  PATH: `${WORK_VENV}/bin:${ENV_VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
  VIRTUAL_ENV: WORK_VENV,
  // The sandbox has no network: pip looks at nothing remote and builds with what the environment has.
  PIP_NO_INDEX: '1',
  PIP_NO_BUILD_ISOLATION: '0',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
};

/** The shell with the instance's environment on every command (the request's own env wins). */
export function instanceShell(shell: ShellTarget): ShellTarget {
  return {
    exec: (req: ExecInput) => shell.exec({ ...req, env: { ...SWE_EXEC_ENV, ...(req.env ?? {}) } }),
    upload: (p, data, mode) => shell.upload(p, data, mode),
    ...(shell.uploadFile ? { uploadFile: shell.uploadFile.bind(shell) } : {}),
  };
}

// In an environment image: a venv in the workspace over the image's (a .pth names the image's site-packages), so
// the install writes into the workspace. On the host root (no image venv) nothing is made.
const VENV_SCRIPT = [
  'set -e',
  `[ -x ${ENV_VENV}/bin/python ] || exit 0`,
  `base=$(${ENV_VENV}/bin/python -c 'import sys; print(sys.base_prefix)')/bin/python3`,
  `"$base" -m venv --without-pip --system-site-packages ${WORK_VENV}`,
  `site=$(${WORK_VENV}/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')`,
  `${ENV_VENV}/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/grove-env.pth"`,
].join('\n');

function failed(r: ExecResult, what: string): string {
  return `${what} failed (exit ${r.exit_code}): ${(r.stderr || r.stdout).slice(-2000)}`;
}

/**
 * Clones the instance's repository at its base commit into `<workspace>/repo`, makes the workspace venv and (unless
 * `install: false`, as for an evaluation, which installs after the model patch as SWE-bench does) runs the install.
 */
export async function prepareRepo(
  shell: ShellTarget,
  inst: SweInstance,
  sources: RepoSources,
  spec: RepoSpec | undefined,
  o: { bundles?: BundleCache; install?: boolean } = {},
): Promise<void> {
  const source = sources[inst.repo];
  if (!source) throw new SweSetupError('unknown_repo', `no local source for ${inst.repo}: add it to the repository table (repo → path)`);
  const own = o.bundles ? null : new BundleCache();
  try {
    const file = await (o.bundles ?? own!).get(source, inst.base_commit);
    if (shell.uploadFile) await shell.uploadFile('.grove/repo.bundle', file);
    else await shell.upload('.grove/repo.bundle', await readFile(file));
  } finally {
    await own?.close();
  }
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
  const v = await shell.exec({ command: ['bash', '-c', VENV_SCRIPT], timeout_s: 300 });
  if (v.exit_code !== 0) throw new SweSetupError('install_failed', failed(v, 'the workspace virtual environment'));
  if (o.install !== false) await installRepo(shell, inst, spec);
}

/** The row's install commands, in the checkout. */
export async function installRepo(shell: ShellTarget, inst: SweInstance, spec: RepoSpec | undefined): Promise<void> {
  for (const cmd of spec?.install ?? []) {
    const r = await shell.exec({ command: cmd, cwd: REPO_DIR, timeout_s: 1800, merge_stderr: true });
    if (r.exit_code !== 0) throw new SweSetupError('install_failed', failed(r, `install step "${cmd}" of ${inst.instance_id}`));
  }
}
