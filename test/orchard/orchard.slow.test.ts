// Orchard Env's API under /orchard, exercised by our own Python script that calls every route the way the
// Orchard SDK does (standard library only), against a live server with real shell sandboxes.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startShellServer, type ShellServer } from '../shell-env/support.ts';

const SCRIPT = fileURLToPath(new URL('./orchard_sdk_check.py', import.meta.url));
const CAPACITY = 4;
let srv: ShellServer;

beforeAll(async () => {
  srv = await startShellServer({ maxSandboxes: CAPACITY });
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

describe('Orchard Env drop-in', () => {
  it('serves every route the SDK calls (python script against the live server)', async () => {
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
      const child = execFile('python3', [SCRIPT, `${srv.url}/orchard`, KEY, String(CAPACITY)], { timeout: 170_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      );
      child.stdin?.end();
    });
    expect(out, out).toContain('all checks passed');
    expect(code).toBe(0);
    const checks = out.split('\n').filter((l) => l.startsWith('ok '));
    expect(checks).toHaveLength(22);
    // Every sandbox the script made is gone.
    expect((await srv.call('GET', '/sandboxes')).json.sandboxes).toEqual([]);
  }, 180_000);
});
