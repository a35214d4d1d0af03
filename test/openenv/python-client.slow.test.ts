// OpenEnv's own Python clients, unchanged (GenericEnvClient, MCPToolClient from the user's checkout of
// meta-pytorch/OpenEnv), against a live `grove serve`: every environment, MCP over /ws, HTTP /mcp and the /mcp
// WebSocket (frames from OpenEnv's JSON-RPC models), concurrent sessions,
// capacity, idle expiry and a wrong key (test/openenv/openenv_client_check.py). CI fetches nothing: the test runs when
// OPENENV_CHECKOUT names a checkout (its src/ goes on PYTHONPATH) and OPENENV_PYTHON (default python3) imports its
// client dependencies (pydantic, websockets, httpx, fastapi, fastmcp); otherwise it is skipped with the reason.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHECKOUT = process.env.OPENENV_CHECKOUT ?? '';
const PYTHON = process.env.OPENENV_PYTHON ?? 'python3';
const SRC = path.join(CHECKOUT, 'src');
const KEY = 'openenv-python-key-123456';

function skipReason(): string | null {
  if (!CHECKOUT) return 'OPENENV_CHECKOUT is not set (a checkout of meta-pytorch/OpenEnv)';
  if (!existsSync(path.join(SRC, 'openenv', 'core', 'env_client.py'))) return `${SRC} holds no openenv/core/env_client.py`;
  const probe = spawnSync(PYTHON, ['-c', 'import openenv.core.generic_client, openenv.core.mcp_client'], { env: { ...process.env, PYTHONPATH: SRC }, encoding: 'utf8' });
  if (probe.status !== 0) return `${PYTHON} cannot import OpenEnv's clients: ${(probe.stderr || String(probe.error)).trim().split('\n').at(-1)}`;
  return null;
}

const reason = skipReason();

describe.skipIf(reason !== null)(`OpenEnv's Python clients against grove serve${reason ? ` (skipped: ${reason})` : ''}`, () => {
  it('every environment, MCP (ws, http, ws /mcp), concurrency, capacity, idle expiry, wrong key', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-openenv-py-'));
    const server = spawn(process.execPath, [path.join(ROOT, 'bin/grove.mjs'), 'serve', '--port', '0', '--api-key', KEY, '--data-dir', dataDir, '--browser-processes', '1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, GROVE_LOG_LEVEL: 'warn', GROVE_OPENENV_MAX_SESSIONS: '4', GROVE_OPENENV_IDLE_TIMEOUT_S: '3' },
    });
    const exited = new Promise<number | null>((ok) => server.once('exit', (c) => ok(c)));
    try {
      let stderr = '';
      const url = await new Promise<string>((ok, fail) => {
        server.stderr!.on('data', (d: Buffer) => {
          stderr += d.toString();
          const m = /listening on (http:\/\/\S+)/.exec(stderr);
          if (m) ok(m[1]);
        });
        void exited.then((c) => fail(new Error(`grove serve exited with ${c}: ${stderr}`)));
      });
      const run = spawn(PYTHON, [path.join(ROOT, 'test/openenv/openenv_client_check.py'), url, KEY], { env: { ...process.env, PYTHONPATH: SRC }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      run.stdout.on('data', (d: Buffer) => (out += d.toString()));
      run.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((ok) => run.once('exit', ok));
      // One line per check (what it saw), for the run's log.
      console.log(out);
      expect(out).toMatch(/^10 passed, 0 failed$/m);
      expect(code).toBe(0);
    } finally {
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 600_000);
});
