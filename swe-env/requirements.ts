// Rows whose `packages` is "requirements.txt": as SWE-bench's harness does, the requirements file is read from the
// repository itself at the instance's environment_setup_commit (else its base commit) — here from the user's local
// source, not from GitHub — at the first of the repository's requirements paths (spec data: `requirements_paths`)
// that exists; `-r other.txt` lines are read beside it; `-e .`, comments and `.[test…]` lines are dropped; a
// package yanked from PyPI is replaced as their harness replaces it. The text goes into the environment image's
// build (and its hash: other contents, another image).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const GIT_ENV = { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' };

/** Packages yanked from PyPI and what replaces them (SWE-bench's REPLACE_REQ_PACKAGES). */
const REPLACE: Array<[string, string]> = [['types-pkg_resources', 'types-setuptools']];

export class RequirementsError extends Error {
  readonly code = 'no_requirements';
}

async function show(source: string, commit: string, file: string): Promise<string | null> {
  if (!/^[0-9a-f]{7,40}$/.test(commit)) throw new RequirementsError(`"${commit}" is not a commit hash`);
  return run('git', ['-C', source, 'show', `${commit}:${file}`], { env: GIT_ENV, maxBuffer: 16 * 1024 * 1024 }).then((r) => r.stdout, () => null);
}

const excluded = (line: string) => ['-e .', '#', '.[test'].some((x) => line.trim().startsWith(x));

/** The requirements text SWE-bench installs for an instance of a requirements.txt row. */
export async function readRequirements(source: string, commit: string, paths: string[]): Promise<{ path: string; text: string }> {
  for (const p of paths) {
    const text = await show(source, commit, p);
    if (text === null) continue;
    const own: string[] = [];
    const included: string[] = [];
    for (const line of text.split('\n')) {
      if (line.trim().startsWith('-r')) {
        const name = line.trim().slice(2).trim();
        const extra = await show(source, commit, path.posix.join(path.posix.dirname(p), name));
        if (extra !== null) included.push(...extra.split('\n').filter((l) => !excluded(l)));
      } else if (!excluded(line)) own.push(line);
    }
    let all = [...included, own.join('\n')].join('\n');
    for (const [from, to] of REPLACE) all = all.replace(new RegExp(`^${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([<>=!~]=?.*|$)`, 'gm'), to);
    return { path: p, text: all };
  }
  throw new RequirementsError(`none of ${paths.join(', ')} exists at ${commit.slice(0, 12)} in ${source}`);
}

/** The instance-dependent inputs of its environment: a requirements.txt row's file, read from the local source. */
export async function instanceEnvInputs(
  inst: { repo: string; base_commit: string; environment_setup_commit?: string },
  spec: { row: { packages?: string }; requirements_paths: string[] },
  sources: Record<string, string>,
): Promise<{ requirements?: string }> {
  if (spec.row.packages !== 'requirements.txt') return {};
  const source = sources[inst.repo];
  if (!source) throw new RequirementsError(`${inst.repo}: its requirements file is read from the local source: add --repo ${inst.repo}=PATH`);
  if (!spec.requirements_paths.length) throw new RequirementsError(`${inst.repo}: packages "requirements.txt" but the spec names no requirements_paths for the repository`);
  return { requirements: (await readRequirements(source, inst.environment_setup_commit ?? inst.base_commit, spec.requirements_paths)).text };
}
