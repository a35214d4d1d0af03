// Rows whose packages is "requirements.txt" (Flask, Django, pylint, sympy, matplotlib in SWE-bench's table): the
// file is read from the user's local source at the instance's environment_setup_commit, as SWE-bench's harness
// reads it from GitHub; it goes into the environment image's build and its hash. environment.yml rows and
// Pythons no Debian release gives fail before any build, each with its own code.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planEnvImage } from '../../swe-env/env-image.ts';
import { preflight } from '../../swe-env/preflight.ts';
import { instanceEnvInputs, readRequirements } from '../../swe-env/requirements.ts';
import { loadSpecs, specFor } from '../../swe-env/specs.ts';

let tmp: string;
let repo: string;
const commits: string[] = [];

function commit(files: Record<string, string>, msg: string): string {
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
    writeFileSync(path.join(repo, f), text);
  }
  const git = (...a: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.email=t@t.invalid', '-c', 'user.name=t', ...a], { encoding: 'utf8' });
  git('add', '-A');
  git('commit', '-q', '-m', msg);
  return git('rev-parse', 'HEAD').trim();
}

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-reqs-'));
  repo = path.join(tmp, 'flask');
  mkdirSync(repo);
  execFileSync('git', ['-C', repo, 'init', '-q', '-b', 'main']);
  commits.push(commit({ 'requirements/dev.txt': '-r tests.txt\n-e .\n# comment\nblinker==1.6.2\ntypes-pkg_resources==0.1.3\n', 'requirements/tests.txt': 'pytest==7.3.1\n# pinned\n' }, 'setup'));
  commits.push(commit({ 'requirements/dev.txt': 'blinker==1.9.0\n' }, 'later'));
});

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('requirements.txt rows', () => {
  it('reads the file at the commit as SWE-bench does: -r files beside it first, -e . and comments dropped, yanked packages replaced', async () => {
    const r = await readRequirements(repo, commits[0], ['requirements/dev.txt']);
    expect(r).toEqual({ path: 'requirements/dev.txt', text: 'pytest==7.3.1\n\nblinker==1.6.2\ntypes-setuptools\n' });
    await expect(readRequirements(repo, commits[0], ['requirements.txt'])).rejects.toMatchObject({ code: 'no_requirements' });
    await expect(readRequirements(repo, '--output=/tmp/x', ['requirements/dev.txt'])).rejects.toMatchObject({ code: 'no_requirements' });
  });

  it('takes the environment_setup_commit over the base commit; the text is in the build and its hash', async () => {
    const specs = loadSpecs();
    const spec = specFor('pallets/flask', '2.3', specs)!;
    expect(spec.requirements_paths).toEqual(['requirements/dev.txt']);
    const inst = { repo: 'pallets/flask', base_commit: commits[1], environment_setup_commit: commits[0] };
    const inputs = await instanceEnvInputs(inst, spec, { 'pallets/flask': repo });
    expect(inputs.requirements).toContain('blinker==1.6.2');
    const later = await instanceEnvInputs({ ...inst, environment_setup_commit: undefined }, spec, { 'pallets/flask': repo });
    expect(later.requirements).toBe('blinker==1.9.0\n');
    const plan = await planEnvImage('pallets/flask', '2.3', spec.row, { kind: 'url', url: 'http://127.0.0.1:9/simple' }, inputs).catch((e: { code?: string }) => e);
    if ('code' in plan && plan.code === 'no_base_image') return; // no podman base here: the plan is checked where it exists
    const p = plan as Awaited<ReturnType<typeof planEnvImage>>;
    expect(p.files['requirements.txt']).toBe(inputs.requirements);
    expect(p.containerfile).toMatch(/COPY requirements.txt \/tmp\/grove-requirements.txt\nRUN .* '-r' '\/tmp\/grove-requirements.txt'.*\nRUN .*'Werkzeug==2.3.7'/);
    const other = await planEnvImage('pallets/flask', '2.3', spec.row, { kind: 'url', url: 'http://127.0.0.1:9/simple' }, later);
    expect(other.image).not.toBe(p.image);
  });

  it('fails fast: a missing requirements file, an environment.yml row and a Python no Debian release gives, each named', async () => {
    const specs = loadSpecs();
    const mk = (id: string, repoName: string, version: string) => ({ instance_id: id, repo: repoName, version, base_commit: commits[0], problem_statement: '', FAIL_TO_PASS: [], PASS_TO_PASS: [] });
    const problems = await preflight({
      instances: [mk('django__django-1', 'django/django', '4.1'), mk('pydata__xarray-1', 'pydata/xarray', '0.12'), mk('scikit-learn__scikit-learn-1', 'scikit-learn/scikit-learn', '0.20')],
      sources: { 'django/django': repo, 'pydata/xarray': repo, 'scikit-learn/scikit-learn': repo },
      specs,
      index: { kind: 'none' },
    });
    const text = problems.join('\n');
    expect(text).toContain('django/django 4.1: none of tests/requirements/py3.txt exists at');
    expect(text).toContain('pydata/xarray 0.12: packages "environment.yml" is a conda environment');
    expect(text).toMatch(/scikit-learn\/scikit-learn 0\.20 needs Python 3\.6, which no Debian release Grove builds from ships \(3\.7: buster, 3\.9: bullseye, 3\.11: bookworm, 3\.13: trixie\)/);
  });
});
