// Environment images, as SWE-bench builds them: one per (repository, version), from a base image with that Python
// (Debian releases give several without any other source: bullseye 3.9, bookworm 3.11, trixie 3.13), the row's
// pre_install commands, and a virtual environment (/opt/grove-venv) with the row's pip pins from the package index
// the user configured. Built with podman, tagged by a hash of everything that goes in: a second build of the same
// row is a lookup. The base images come from scripts/swe-images.sh (debootstrap + podman import, no registry).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { editsRepository, type SweSpecRow } from './specs.ts';

const run = promisify(execFile);
const PODMAN = '/usr/bin/podman';
export const ENV_VENV = '/opt/grove-venv';

/** Python version → the base image that has it (scripts/swe-images.sh makes them). */
export const DEBIAN_PYTHON: Record<string, { release: string; image: string }> = {
  // buster is archived: deb.debian.org no longer serves it (DEBIAN_MIRROR=http://archive.debian.org/debian).
  '3.7': { release: 'buster', image: 'localhost/grove-swe-base:buster' },
  '3.9': { release: 'bullseye', image: 'localhost/grove-swe-base:bullseye' },
  '3.11': { release: 'bookworm', image: 'localhost/grove-swe-base:bookworm' },
  '3.13': { release: 'trixie', image: 'localhost/grove-swe-base:trixie' },
};

/**
 * Where the pins come from: an index URL, a folder of wheels, the host's own pip configuration (its pip.conf and
 * the local folders and file:// indexes it names, mounted read-only into the build), or none (no pip installs).
 */
export type PackageIndex = { kind: 'url'; url: string } | { kind: 'wheels'; dir: string } | { kind: 'host' } | { kind: 'none' };

export function parsePackageIndex(text: string): PackageIndex {
  if (text === 'none') return { kind: 'none' };
  if (text === 'host') return { kind: 'host' };
  if (/^https?:\/\/[^\s'"]+$/.test(text)) return { kind: 'url', url: text };
  const dir = path.resolve(text);
  if (existsSync(dir) && statSync(dir).isDirectory()) return { kind: 'wheels', dir };
  throw new Error(`--index "${text}": give an http(s) index URL, a folder of wheels, "host" (this machine's pip configuration) or "none"`);
}

export class EnvBuildError extends Error {
  constructor(
    readonly code: 'no_podman' | 'no_base_image' | 'no_python' | 'needs_conda' | 'no_requirements' | 'build_failed',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The host's pip configuration, as pip itself reports it (`pip3 config list`: files and PIP_* variables merged),
 * written as one pip.conf for the build, and the local folders and files its values name, mounted read-only.
 */
async function hostPipConfig(): Promise<{ conf: string; mounts: string[] }> {
  const listed = await run('pip3', ['config', 'list'], { env: { PATH: '/usr/bin:/bin' } }).then((r) => r.stdout, () => '');
  const sections = new Map<string, string[]>();
  const mounts = new Set<string>();
  for (const line of listed.split('\n')) {
    const m = /^([:\w-]+)\.([\w-]+)='(.*)'$/.exec(line.trim());
    if (!m) continue;
    const section = m[1] === ':env:' ? 'global' : m[1];
    sections.set(section, [...(sections.get(section) ?? []), `${m[2]} = ${m[3]}`]);
    for (const token of m[3].split(/\s+/)) {
      const p = token.startsWith('file://') ? token.slice('file://'.length) : token;
      if (!p.startsWith('/') || !existsSync(p)) continue;
      // A folder's tree (an index's simple/ links to files/ beside it): its first two levels, e.g. /opt/pypi.
      const parts = p.split('/').filter(Boolean);
      mounts.add(statSync(p).isDirectory() ? `/${parts.slice(0, 2).join('/')}` : p);
    }
  }
  const conf = [...sections].map(([s, lines]) => `[${s}]\n${lines.join('\n')}\n`).join('');
  const system = ['/', '/etc', '/usr', '/var', '/opt', '/home', '/root', '/tmp', '/bin', '/lib'];
  return { conf, mounts: [...mounts].filter((m) => !system.includes(m)).sort() };
}

/** A row's pip installs: its `packages` when they are names (not a requirements or environment file), then its pins. */
export function rowPins(row: SweSpecRow): string[] {
  return [...(row.packages && !row.packages.includes('.') ? row.packages.split(/\s+/).filter(Boolean) : []), ...(row.pip_packages ?? [])];
}

/** A shell word, single-quoted. */
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** What a row's environment takes from the instance: the requirements text of a requirements.txt row (requirements.ts). */
export interface EnvInputs {
  requirements?: string;
}

export interface EnvImagePlan {
  image: string;
  base: string;
  containerfile: string;
  mounts: string[];
  /** Files of the build context (name → content). */
  files: Record<string, string>;
}

/** What would be built for a row: the base, the Containerfile, the mounts, and the tag (a hash of all of them). */
export async function planEnvImage(repo: string, version: string, row: SweSpecRow, index: PackageIndex, inputs: EnvInputs = {}): Promise<EnvImagePlan> {
  if (row.packages === 'environment.yml') {
    throw new EnvBuildError('needs_conda', `${repo} ${version}: packages "environment.yml" is a conda environment and the Debian base images have no conda: use --images swebench, or a --specs row with pip pins`);
  }
  const python = row.python ?? '3.11';
  const base = DEBIAN_PYTHON[python];
  if (!base) {
    throw new EnvBuildError('no_python', `${repo} ${version} needs Python ${python}, which no Debian release Grove builds from ships (${Object.entries(DEBIAN_PYTHON).map(([v, b]) => `${v}: ${b.release}`).join(', ')}): use --images swebench, or give the row one of those Pythons in a --specs file`);
  }
  if (row.packages === 'requirements.txt' && inputs.requirements === undefined) {
    throw new EnvBuildError('no_requirements', `${repo} ${version}: packages "requirements.txt" needs the file read from the repository (its requirements_paths at the instance's environment_setup_commit)`);
  }
  const lines = [`FROM ${base.image}`, 'ENV DEBIAN_FRONTEND=noninteractive'];
  // Commands that edit the repository run in the checkout instead (specs.ts editsRepository): the image has none.
  for (const cmd of (row.pre_install ?? []).filter((c) => !editsRepository(c))) lines.push(`RUN ${cmd.replace(/\n/g, ' ')}`);
  lines.push(`RUN python3 -m venv --system-site-packages ${ENV_VENV}`);
  const pins = rowPins(row);
  let mounts: string[] = [];
  const files: Record<string, string> = {};
  const reqs = inputs.requirements;
  if ((pins.length || reqs !== undefined) && index.kind !== 'none') {
    const flags =
      index.kind === 'url' ? ['--index-url', index.url]
      : index.kind === 'wheels' ? ['--no-index', '--find-links', '/grove-wheels']
      : [];
    if (index.kind === 'wheels') mounts = [`${index.dir}:/grove-wheels:ro`];
    if (index.kind === 'host') {
      const host = await hostPipConfig();
      files['pip.conf'] = host.conf;
      mounts = host.mounts.map((m) => `${m}:${m}:ro`);
      lines.push('COPY pip.conf /etc/pip.conf');
    }
    const pip = `${ENV_VENV}/bin/pip install --disable-pip-version-check --no-cache-dir --retries 1 --timeout 30`;
    // As SWE-bench: the requirements file first, then the row's pins.
    if (reqs !== undefined) {
      files['requirements.txt'] = reqs;
      lines.push('COPY requirements.txt /tmp/grove-requirements.txt');
      lines.push(`RUN ${pip} ${[...flags, '-r', '/tmp/grove-requirements.txt'].map(q).join(' ')} && rm /tmp/grove-requirements.txt`);
    }
    if (pins.length) lines.push(`RUN ${pip} ${[...flags, ...pins].map(q).join(' ')}`);
  }
  lines.push(`ENV PATH=${ENV_VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`);
  const containerfile = `${lines.join('\n')}\n`;
  const baseId = await run(PODMAN, ['image', 'inspect', '-f', '{{.Id}}', base.image]).then((r) => r.stdout.trim(), () => '');
  if (!baseId) throw new EnvBuildError('no_base_image', `the base image ${base.image} (Python ${python}, Debian ${base.release}) is not built: run scripts/swe-images.sh ${base.release}`);
  const hash = createHash('sha256').update(JSON.stringify([baseId, containerfile, mounts, files])).digest('hex').slice(0, 16);
  const name = `${repo.replace('/', '__')}-${version}`.toLowerCase().replace(/[^a-z0-9_.-]/g, '_').slice(0, 100);
  return { image: `localhost/grove-swe-env/${name}:${hash}`, base: base.image, containerfile, mounts, files };
}

export interface EnvImageResult {
  image: string;
  /** false: it was there already (cached). */
  built: boolean;
  ms: number;
}

const building = new Map<string, Promise<void>>();

/** Builds (or finds) the environment image of a row, once per image in this process however many ask. Needs root and podman. */
export async function ensureEnvImage(repo: string, version: string, row: SweSpecRow, index: PackageIndex, o: { noCache?: boolean; inputs?: EnvInputs } = {}): Promise<EnvImageResult> {
  const t0 = performance.now();
  if (!existsSync(PODMAN)) throw new EnvBuildError('no_podman', `environment images need podman (${PODMAN}): apt-get install podman runc, then scripts/swe-images.sh`);
  const plan = await planEnvImage(repo, version, row, index, o.inputs);
  const pending = building.get(plan.image);
  if (pending) {
    await pending;
    return { image: plan.image, built: false, ms: performance.now() - t0 };
  }
  const exists = await run(PODMAN, ['image', 'exists', plan.image]).then(() => true, () => false);
  if (exists) return { image: plan.image, built: false, ms: performance.now() - t0 };
  const p = buildImage(plan, repo, version, o.noCache === true).finally(() => building.delete(plan.image));
  building.set(plan.image, p);
  await p;
  return { image: plan.image, built: true, ms: performance.now() - t0 };
}

async function buildImage(plan: EnvImagePlan, repo: string, version: string, noCache: boolean): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'grove-swe-env-'));
  try {
    await writeFile(path.join(dir, 'Containerfile'), plan.containerfile);
    for (const [name, text] of Object.entries(plan.files)) await writeFile(path.join(dir, name), text);
    const args = ['build', '--pull=never', '--network=host', noCache ? '--no-cache' : '--layers', '-t', plan.image, '-f', path.join(dir, 'Containerfile'), ...plan.mounts.flatMap((m) => ['-v', m]), dir];
    await run(PODMAN, args, { maxBuffer: 64 * 1024 * 1024, timeout: 3_600_000 }).catch((err: Error & { stdout?: string; stderr?: string }) => {
      const out = `${err.stdout ?? ''}\n${err.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
      throw new EnvBuildError('build_failed', `building the environment of ${repo} ${version} failed:\n${out}`);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
