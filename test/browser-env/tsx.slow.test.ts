// In-page code must also work when the project runs under tsx (as the server does), not only under vitest.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

it('SoM, settle and focus checks run in the page under tsx', async () => {
  const script = fileURLToPath(new URL('./tsx-child.fixture.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    timeout: 110_000,
  });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  expect(out).toEqual({ som: 2, settled: 'late', typed: 'hi', typeError: null, scrollError: null });
});
