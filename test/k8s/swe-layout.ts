// An image with SWE-bench's instance-image layout whose repository belongs to root and is not writable by others
// (the strict case of their images: built as root, files their setup made after its `chmod -R 777 /testbed` are
// root's 644/755): the fixture repository at /testbed, a `testbed` environment under /opt/miniconda3 (a venv behind a
// small activate script standing in for conda, as test/swe-env/official-support.ts does). Needs root, podman and
// the bookworm base image (scripts/swe-images.sh).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildFixtureRepo } from '../../swe-env/fixture.ts';

const run = promisify(execFile);

const ACTIVATE = 'conda() { if [ "$1" = activate ]; then . "/opt/miniconda3/envs/$2/bin/activate"; fi; }\n';

/** Builds the layout under each of `names` (podman, asynchronously: the simulated API server keeps answering). */
export async function buildRootOwnedLayout(dir: string, names: string[]): Promise<void> {
  const ctx = path.join(dir, 'swe-ctx');
  await buildFixtureRepo(path.join(ctx, 'testbed'));
  mkdirSync(path.join(ctx, 'conda'), { recursive: true });
  writeFileSync(path.join(ctx, 'conda', 'activate'), ACTIVATE);
  writeFileSync(path.join(ctx, 'Containerfile'), [
    'FROM localhost/grove-swe-base:bookworm',
    'COPY testbed /testbed',
    'COPY conda/activate /opt/miniconda3/bin/activate',
    'RUN python3 -m venv --system-site-packages /opt/miniconda3/envs/testbed && chown -R 0:0 /testbed && chmod -R go-w /testbed',
    'WORKDIR /testbed',
    '',
  ].join('\n'));
  for (const name of names) await run('podman', ['build', '--pull=never', '--layers', '-q', '-t', name, ctx], { timeout: 600_000 });
}

/** Runs `script` in a throwaway container of `image` as uid 10001 (the pod's user); its output. */
export async function runAsPodUser(image: string, script: string): Promise<string> {
  const r = await run('podman', ['run', '--rm', '--pull=never', '--network=none', '--user=10001:10001', image, '/bin/sh', '-c', script], { timeout: 120_000 });
  return r.stdout;
}

export async function removeImages(names: string[]): Promise<void> {
  for (const n of names) await run('podman', ['rmi', '-f', n]).catch(() => undefined);
}
