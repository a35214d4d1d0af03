// The fixture repository (grove/textkit) and its three instances, built from fixture/ into a real git
// repository: one base commit; each instance's gold patch, test patch (and textkit-2's partial patch) are
// computed with git diff. textkit-3's gold patch fixes its bug but breaks a PASS_TO_PASS test.
import { cp, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SweInstance } from '../protocol/swe.ts';
import { git } from './git.ts';

const SRC = fileURLToPath(new URL('./fixture/', import.meta.url));

export interface Fixture {
  repoPath: string;
  repo: string;
  instances: SweInstance[];
  /** Extra patches by name: "textkit-2:partial" fixes one of its two FAIL_TO_PASS tests. */
  patches: Record<string, string>;
}

async function diffOf(repo: string, overlay: string): Promise<string> {
  await cp(overlay, repo, { recursive: true });
  const diff = await git(repo, ['diff', '--no-color', '--no-ext-diff']);
  await git(repo, ['checkout', '--', '.']);
  return diff;
}

export async function buildFixture(dir: string): Promise<Fixture> {
  const repoPath = path.join(dir, 'textkit');
  await mkdir(repoPath, { recursive: true });
  await cp(path.join(SRC, 'base'), repoPath, { recursive: true });
  await git(repoPath, ['init', '-q', '-b', 'main']);
  await git(repoPath, ['add', '-A']);
  await git(repoPath, ['commit', '-q', '-m', 'textkit: slugify, stats, wrap']);
  const base = (await git(repoPath, ['rev-parse', 'HEAD'])).trim();
  const instances: SweInstance[] = [];
  const patches: Record<string, string> = {};
  const root = path.join(SRC, 'instances');
  for (const id of (await readdir(root)).sort()) {
    const meta = JSON.parse(await readFile(path.join(root, id, 'instance.json'), 'utf8')) as Omit<SweInstance, 'base_commit'>;
    const patch = await diffOf(repoPath, path.join(root, id, 'gold'));
    const testPatch = await diffOf(repoPath, path.join(root, id, 'tests'));
    const entries = await readdir(path.join(root, id));
    if (entries.includes('partial')) patches[`${id}:partial`] = await diffOf(repoPath, path.join(root, id, 'partial'));
    instances.push({ ...meta, base_commit: base, patch, test_patch: testPatch });
  }
  return { repoPath, repo: 'grove/textkit', instances, patches };
}
