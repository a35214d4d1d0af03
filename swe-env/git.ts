// Host-side git, for building bundles and the fixture repository (argv only, never a shell).
import { execFile } from 'node:child_process';

const FIXED = {
  GIT_AUTHOR_NAME: 'Grove',
  GIT_AUTHOR_EMAIL: 'grove@localhost',
  GIT_COMMITTER_NAME: 'Grove',
  GIT_COMMITTER_EMAIL: 'grove@localhost',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

export function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: cwd, ...FIXED }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`git ${args.join(' ')} failed: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
}
