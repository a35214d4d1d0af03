// Images with SWE-bench's instance-image layout, built here (no registry has theirs): the fixture repository at
// /testbed (chmod 777 as their setup script leaves it), a `testbed` environment under /opt/miniconda3 entered by
// `source /opt/miniconda3/bin/activate; conda activate testbed` — a venv and a small activate script stand in for
// conda. One build context for every name (podman's layer cache makes reruns cheap). Needs podman and the bookworm
// base image (scripts/swe-images.sh).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildFixtureRepo } from '../../swe-env/fixture.ts';

const ACTIVATE = [
  '# Stands in for conda in this test image: `conda activate NAME` enters /opt/miniconda3/envs/NAME.',
  'conda() { if [ "$1" = activate ]; then . "/opt/miniconda3/envs/$2/bin/activate"; fi; }',
  '',
].join('\n');

/** Builds the layout image under each of `names`, its context in `dir/ctx`. */
export async function buildLayoutImages(dir: string, names: string[]): Promise<void> {
  const ctx = path.join(dir, 'ctx');
  await buildFixtureRepo(path.join(ctx, 'testbed'));
  mkdirSync(path.join(ctx, 'conda'), { recursive: true });
  writeFileSync(path.join(ctx, 'conda', 'activate'), ACTIVATE);
  writeFileSync(path.join(ctx, 'Containerfile'), [
    'FROM localhost/grove-swe-base:bookworm',
    'COPY testbed /testbed',
    'COPY conda/activate /opt/miniconda3/bin/activate',
    'RUN python3 -m venv --system-site-packages /opt/miniconda3/envs/testbed && chmod -R 777 /testbed',
    'WORKDIR /testbed',
    '',
  ].join('\n'));
  for (const name of names) execFileSync('podman', ['build', '--pull=never', '--layers', '-q', '-t', name, ctx], { stdio: 'pipe', timeout: 600_000 });
}
