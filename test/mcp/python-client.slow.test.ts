// An independent client: the Python `mcp` package (the package index configured for pip, e.g. the local mirror
// /opt/pypi/simple) in a venv cached under node_modules/.cache, its ClientSession over its own Streamable HTTP
// transport, against a Claw, a shell and a browser sandbox's MCP servers. Skipped, with the reason, when the
// package cannot be installed here.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, loadConfig } from '../../sandbox/config.ts';
import { startServer } from '../../server/server.ts';
import { html, startFixture, type Fixture } from '../browser-env/support.ts';
import { api, createSandbox, mcpAccess, type Served } from './support.ts';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const VENV = path.join(ROOT, 'node_modules/.cache/grove-mcp-python');
const PY = path.join(VENV, 'bin/python');
const CLIENT = path.join(__dirname, 'fixtures/python_client.py');
const INDEX = existsSync('/opt/pypi/simple') ? ['--index-url', 'file:///opt/pypi/simple'] : [];
const SHELL = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;

let unavailable: string | null = null;
let fx: Fixture;
let dir: string;
let server: Awaited<ReturnType<typeof startServer>>;
let s: Served;

async function ensurePythonMcp(): Promise<string | null> {
  const probe = async () => run(PY, ['-c', 'import mcp, importlib.metadata as m; print(m.version("mcp"))']).then((r) => r.stdout.trim(), () => null);
  if (existsSync(PY) && (await probe())) return null;
  try {
    mkdirSync(path.dirname(VENV), { recursive: true });
    await run('python3', ['-m', 'venv', '--clear', VENV]);
    await run(path.join(VENV, 'bin/pip'), ['install', '-q', '--disable-pip-version-check', ...INDEX, 'mcp'], { timeout: 600_000 });
  } catch (err) {
    return `the Python mcp package could not be installed: ${String((err as { stderr?: string }).stderr ?? err).trim().split('\n').slice(-2).join(' ')}`;
  }
  return (await probe()) ? null : 'the Python mcp package does not import after installing';
}

beforeAll(async () => {
  unavailable = await ensurePythonMcp();
  if (unavailable) return;
  fx = await startFixture({ '/': html('<h1 style="font-size:64px">python</h1>') });
  dir = await mkdtemp(path.join(tmpdir(), 'grove-mcp-py-'));
  const key = generateApiKey();
  server = await startServer(loadConfig({ env: {}, flags: { host: '127.0.0.1', port: 0, apiKey: key, dataDir: dir, logLevel: 'silent', browserProcesses: 1 } }), { logStream: process.stderr });
  s = { url: server.url, key };
}, 900_000);
afterAll(async () => {
  await server?.close();
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the Python client against a new sandbox's MCP server (the child is awaited: this process serves it). */
async function pythonCall(body: Record<string, unknown>, tool: string, args: unknown): Promise<any> {
  const info = await createSandbox(s, body);
  try {
    const a = await mcpAccess(s, info.sandbox_id);
    const r = await run(PY, [CLIENT, a.url, a.token, tool, JSON.stringify(args)], { env: { PATH: '/usr/bin:/bin', NO_PROXY: '*' }, timeout: 120_000 });
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  } finally {
    await api(s, 'DELETE', `/sandboxes/${info.sandbox_id}`);
  }
}

describe('the Python mcp package as a client', () => {
  it('Claw sandbox: initialize, list, call', async (ctx) => {
    if (unavailable) return ctx.skip(unavailable);
    const r = await pythonCall({ type: 'claw', world_seed: 1, apps: ['todo'] }, 'todo_list', {});
    expect(r).toMatchObject({ server: 'grove-claw', result: { is_error: false } });
    expect(r.tools).toContain('todo_create');
    expect(JSON.parse(r.result.content[0].text).total).toBeGreaterThan(0);
  });

  it('browser sandbox: the screenshot comes back as image content', async (ctx) => {
    if (unavailable) return ctx.skip(unavailable);
    const r = await pythonCall({ type: 'browser', start_url: fx.url('/'), network: { allow: [`127.0.0.1:${fx.port}`] } }, 'screenshot', {});
    expect(r.server).toBe('grove-browser');
    expect(r.result.content[0]).toMatchObject({ type: 'image', mimeType: expect.stringMatching(/^image\//) });
    expect(r.result.content[0].bytes).toBeGreaterThan(100);
  });

  it.runIf(SHELL)('shell sandbox: exec', async (ctx) => {
    if (unavailable) return ctx.skip(unavailable);
    const r = await pythonCall({ type: 'shell' }, 'exec', { command: 'echo from-python-client' });
    expect(r).toMatchObject({ server: 'grove-shell', result: { is_error: false } });
    expect(r.result.content[0].text).toContain('from-python-client');
  });
});
