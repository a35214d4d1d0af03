// What a SWE run needs, checked before any sandbox opens, so a run fails in seconds with a message that says what
// to fix, never after minutes of setup: a local source per repository that has every base commit, a spec row per
// (repository, version), and for environment images podman, the base image of each Python, a buildable row and its
// pins in the package index (pins.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { EnvBuildError, planEnvImage, rowPins, type PackageIndex } from './env-image.ts';
import { missingPins } from './pins.ts';
import { instanceEnvInputs, RequirementsError } from './requirements.ts';
import { ImageNameError, INSTANCE_ID, officialImageName, type OfficialImageOptions } from './official-image.ts';
import { checkOfficialImages } from './registry.ts';
import { specFor, type loadSpecs } from './specs.ts';
import type { RepoSources, SweInstance } from './types.ts';

export interface PreflightInput {
  instances: SweInstance[];
  sources: RepoSources;
  specs: ReturnType<typeof loadSpecs>;
  /** null: sandboxes run on the server's default root (no environment images). */
  index: PackageIndex | null;
  /** `--images swebench`: the repository is in each instance's image (no local source); `local`: this host's podman
   * pulls and unpacks them; `remote`: the server does (a Kubernetes pod runs the image). */
  official?: 'local' | 'remote';
  /** How the official images are named (`--namespace`, `--instance-image-tag`). */
  images?: OfficialImageOptions;
}

/** Problems, one line each (empty: good to go). */
export async function preflight(o: PreflightInput): Promise<string[]> {
  const problems: string[] = [];
  const byRepo = new Map<string, SweInstance[]>();
  for (const i of o.instances) byRepo.set(i.repo, [...(byRepo.get(i.repo) ?? []), i]);
  // An id names output folders (logs/run_evaluation/<run>/<model>/<id>) and images: a path or an option is refused.
  for (const i of o.instances) if (!INSTANCE_ID.test(i.instance_id)) problems.push(`invalid_instance_id: "${i.instance_id.slice(0, 100)}" is not an instance id (letters, digits, _ . -; not starting with . or -)`);
  if (problems.length) return problems;
  if (o.official) problems.push(...(await officialImageProblems(o.instances, o.images ?? { namespace: 'swebench', tag: 'latest' }, o.official)));
  for (const [repo, list] of o.official ? [] : byRepo) {
    const src = o.sources[repo];
    if (!src) {
      problems.push(`no local source for ${repo}: add --repo ${repo}=PATH (a clone or mirror; no internet is used)`);
      continue;
    }
    if (!existsSync(src)) {
      problems.push(`--repo ${repo}=${src}: no such directory`);
      continue;
    }
    // One git process for every base commit of the repository: the missing ones are named.
    const commits = [...new Set(list.map((i) => i.base_commit))];
    const check = await new Promise<string>((resolve) => {
      const child = execFile('git', ['-C', src, 'cat-file', '--batch-check'], { env: { PATH: '/usr/bin:/bin' }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => resolve(err ? '' : stdout));
      child.stdin?.end(`${commits.map((c) => `${c}^{commit}`).join('\n')}\n`);
    });
    if (!check) problems.push(`--repo ${repo}=${src} is not a git repository`);
    else {
      const lines = check.split('\n');
      const missing = commits.filter((_, k) => !/^[0-9a-f]{40} commit /.test(lines[k] ?? ''));
      if (missing.length) problems.push(`${repo}: ${missing.length} base commit(s) not in ${src} (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}): fetch them into the mirror`);
    }
  }
  const rows = new Map<string, { repo: string; version: string; inst: SweInstance }>();
  for (const i of o.instances) {
    const spec = specFor(i.repo, i.version, o.specs);
    if (!spec) problems.push(`${i.instance_id}: no spec row for ${i.repo} version ${i.version ?? '(none)'}; add one in a --specs file (SWE-bench's spec shape)`);
    else if (!rows.has(`${i.repo}\0${i.version}`)) rows.set(`${i.repo}\0${i.version}`, { repo: i.repo, version: String(i.version), inst: i });
  }
  if (o.index) {
    const podman = existsSync('/usr/bin/podman');
    if (!podman) problems.push('environment images need podman: apt-get install podman runc, run scripts/swe-images.sh (or --images host)');
    for (const { repo, version, inst } of rows.values()) {
      const spec = specFor(repo, version, o.specs)!;
      // A requirements file that cannot be read is named; the rest of the row is still checked.
      const inputs = await instanceEnvInputs(inst, spec, o.sources).catch((err: unknown) => {
        if (!(err instanceof RequirementsError)) throw err;
        problems.push(`${repo} ${version}: ${err.message}`);
        return { requirements: '' };
      });
      try {
        await planEnvImage(repo, version, spec.row, o.index, inputs);
        // The pins in the index, for the row's Python: pip would find out only inside the build.
        for (const gone of await missingPins(rowPins(spec.row), o.index, spec.row.python ?? '3.11')) problems.push(`${repo} ${version}: pins not in the package index: ${gone} (give --index a source that has them, or a --specs row without them)`);
      } catch (err) {
        if (!(err instanceof EnvBuildError)) throw err;
        // Without podman every base image is "missing": the line above says it once.
        if (podman || err.code !== 'no_base_image') problems.push(err.message);
      }
    }
  }
  return [...new Set(problems)];
}

/**
 * Each instance's official image named (an id or namespace that cannot make an image name is refused here, before
 * any podman command exists); with `local`, each stored or in its registry (registry.ts).
 */
async function officialImageProblems(instances: SweInstance[], images: OfficialImageOptions, where: 'local' | 'remote'): Promise<string[]> {
  const problems: string[] = [];
  const names: string[] = [];
  for (const i of instances) {
    try {
      names.push(officialImageName(i, images));
    } catch (err) {
      if (!(err instanceof ImageNameError)) throw err;
      problems.push(`${i.instance_id.slice(0, 100)}: ${err.message}`);
    }
  }
  if (problems.length || where === 'remote') return problems;
  return checkOfficialImages(names);
}
