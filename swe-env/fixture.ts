// The fixture repository (fixtures/textkit): built into a git repository with fixed author and dates, so its
// commit hash — the instances' base_commit — is the same on every machine.
import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { SweInstance } from './types.ts';

const run = promisify(execFile);
const FIXTURE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'textkit');
export const FIXTURE_REPO = 'grove/textkit';
export const FIXTURE_BASE_COMMIT = '689d812d553f7f54cf8043432e3181a482498336';

const IDENTITY = {
  GIT_AUTHOR_NAME: 'textkit', GIT_AUTHOR_EMAIL: 'textkit@example.invalid', GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'textkit', GIT_COMMITTER_EMAIL: 'textkit@example.invalid', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** Builds the fixture repository into `dir` (which must not exist or be empty); resolves to its HEAD commit. */
export async function buildFixtureRepo(dir: string): Promise<string> {
  await cp(path.join(FIXTURE_DIR, 'repo'), dir, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  const env = { ...process.env, ...IDENTITY, GIT_CONFIG_NOSYSTEM: '1', HOME: dir };
  const git = (...args: string[]) => run('git', ['-C', dir, '-c', 'core.fileMode=false', ...args], { env });
  await git('init', '-q', '-b', 'main', '.');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'textkit 0.1');
  return (await git('rev-parse', 'HEAD')).stdout.trim();
}

export type FixtureInstance = SweInstance & { partial_patch?: string; note?: string };

export async function fixtureInstances(): Promise<FixtureInstance[]> {
  return JSON.parse(await readFile(path.join(FIXTURE_DIR, 'instances.json'), 'utf8')) as FixtureInstance[];
}
