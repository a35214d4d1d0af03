// Browser and shell sandboxes' MCP servers on a real Grove server (real Chromium, real bubblewrap), driven by the
// MCP SDK's own client: computer-use tools that answer with the screenshot as image content, shell tools, and the
// attacker's path tricks on the file tools (every one refused with path_not_allowed, nothing outside /workspace read
// or written).
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, loadConfig } from '../../sandbox/config.ts';
import { startServer } from '../../server/server.ts';
import { html, startFixture, type Fixture } from '../browser-env/support.ts';
import { api, connect, createSandbox, mcpAccess, type Served } from './support.ts';

let fx: Fixture;
let dir: string;
let server: Awaited<ReturnType<typeof startServer>>;
let s: Served;
const SHELL = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;

beforeAll(async () => {
  fx = await startFixture({
    '/': html(`<button style="position:absolute;left:0;top:0;width:200px;height:100px" onclick="document.title='clicked'">press</button>
      <input id="q" style="position:absolute;left:0;top:150px;width:300px;height:40px" oninput="document.title='typed:'+this.value">`),
    '/two': html('<h1>two</h1>'),
  });
  dir = await mkdtemp(join(tmpdir(), 'grove-mcp-'));
  const key = generateApiKey();
  const config = loadConfig({ env: {}, flags: { host: '127.0.0.1', port: 0, apiKey: key, dataDir: dir, logLevel: 'silent', browserProcesses: 1 } });
  server = await startServer(config, { logStream: process.stderr });
  s = { url: server.url, key };
}, 120_000);
afterAll(async () => {
  await server?.close();
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const text = (r: any) => r.content.find((c: any) => c.type === 'text')?.text as string;
const image = (r: any) => r.content.find((c: any) => c.type === 'image');

async function withClient<T>(body: Record<string, unknown>, fn: (c: Client, id: string) => Promise<T>): Promise<T> {
  const info = await createSandbox(s, body);
  const access = await mcpAccess(s, info.sandbox_id);
  const c = await connect(access.url, access.token);
  try {
    return await fn(c, info.sandbox_id);
  } finally {
    await c.close();
    await api(s, 'DELETE', `/sandboxes/${info.sandbox_id}`);
  }
}

describe('browser sandbox over MCP', () => {
  it('computer-use tools: the screenshot as image content, clicks and typing in screenshot pixels, Grove\'s limits', async () => {
    await withClient({ type: 'browser', start_url: fx.url('/'), network: { allow: [`127.0.0.1:${fx.port}`] } }, async (c, id) => {
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name)).toEqual(['screenshot', 'click', 'hover', 'drag', 'type', 'key', 'scroll', 'goto', 'navigate', 'tab', 'wait']);
      const shot = await c.callTool({ name: 'screenshot', arguments: {} });
      const img = image(shot);
      expect(img.mimeType).toMatch(/^image\/(png|jpeg)$/);
      const bytes = Buffer.from(img.data, 'base64');
      expect(bytes.length).toBeGreaterThan(100);
      expect(JSON.parse(text(shot))).toMatchObject({ url: fx.url('/'), error: null });
      const { width } = (shot.structuredContent as any).screenshot;
      const scale = width / 1280 || 1;
      const clicked = await c.callTool({ name: 'click', arguments: { x: 50 * scale, y: 50 * scale } });
      expect(clicked.isError).toBeFalsy();
      expect(JSON.parse(text(clicked)).title).toBe('clicked');
      expect(image(clicked)).toBeDefined();
      const typed = await c.callTool({ name: 'type', arguments: { text: 'hello', x: 100 * scale, y: 170 * scale } });
      expect(JSON.parse(text(typed)).title).toBe('typed:hello');
      // Grove's own action limits hold here too, as a tool error.
      const far = await c.callTool({ name: 'scroll', arguments: { direction: 'down', amount: 10_000 } });
      expect(far.isError).toBe(true);
      expect(text(far)).toContain('invalid_arguments');
      const nonsense = await c.callTool({ name: 'click', arguments: { x: 'left', y: 1 } });
      expect([nonsense.isError, text(nonsense).includes('invalid_arguments')]).toEqual([true, true]);
      // The network rules decide: a host outside the allow-list is an action error, the page stays.
      const blocked = await c.callTool({ name: 'goto', arguments: { url: 'http://127.0.0.2:9/' } });
      expect(blocked.isError).toBe(true);
      const nav = await c.callTool({ name: 'goto', arguments: { url: fx.url('/two') } });
      expect(JSON.parse(text(nav)).url).toBe(fx.url('/two'));
      // Every MCP action is a step of the sandbox (the server's step path).
      expect((await api(s, 'GET', `/sandboxes/${id}`)).steps).toBeGreaterThanOrEqual(4);
    });
  });
});

describe.runIf(SHELL)('shell sandbox over MCP', () => {
  it('exec, write/read/list files, apply_patch', async () => {
    await withClient({ type: 'shell' }, async (c) => {
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['exec', 'read_file', 'write_file', 'list_files', 'apply_patch']);
      const e = await c.callTool({ name: 'exec', arguments: { command: 'echo out; echo err >&2; exit 3' } });
      expect(e.structuredContent).toMatchObject({ exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
      expect(await c.callTool({ name: 'write_file', arguments: { path: 'a/b.txt', content: 'one\ntwo\n' } })).toMatchObject({ structuredContent: { path: '/workspace/a/b.txt', size: 8 } });
      expect(text(await c.callTool({ name: 'read_file', arguments: { path: '/workspace/a/b.txt' } }))).toBe('one\ntwo\n');
      expect(text(await c.callTool({ name: 'list_files', arguments: { path: 'a' } }))).toContain('b.txt');
      const patch = '--- a/a/b.txt\n+++ b/a/b.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n';
      expect((await c.callTool({ name: 'apply_patch', arguments: { patch } })).isError).toBeFalsy();
      expect(text(await c.callTool({ name: 'read_file', arguments: { path: 'a/b.txt' } }))).toBe('one\nthree\n');
      const broken = await c.callTool({ name: 'apply_patch', arguments: { patch: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-nope\n+yes\n' } });
      expect(broken.isError).toBe(true);
      const bin = await c.callTool({ name: 'write_file', arguments: { path: 'bin.dat', content: Buffer.from([0, 255, 1]).toString('base64'), encoding: 'base64' } });
      expect(bin.isError).toBeFalsy();
      expect((await c.callTool({ name: 'read_file', arguments: { path: 'bin.dat' } })).structuredContent).toMatchObject({ encoding: 'base64', size: 3 });
    });
  });

  it('path tricks in the file tools are refused (path_not_allowed or invalid_arguments); nothing outside is read or written', async () => {
    const canary = join(dir, 'canary.txt');
    await withClient({ type: 'shell' }, async (c) => {
      await c.callTool({ name: 'exec', arguments: { command: 'ln -s /etc /workspace/etc-link && ln -s /etc/hostname /workspace/host-link' } });
      const reads = ['../etc/passwd', '/etc/passwd', '/workspace/../etc/passwd', 'etc-link/passwd', 'host-link', '/proc/self/environ', 'a\0b', '//etc/passwd'];
      for (const path of reads) {
        const r = await c.callTool({ name: 'read_file', arguments: { path } });
        expect(r.isError, path).toBe(true);
        expect(text(r), path).toMatch(/path_not_allowed|invalid_arguments|file_not_found|not_found/);
        expect(text(r), path).not.toContain('root:x:0:0');
      }
      for (const path of ['../x.txt', '/tmp/../../x.txt', 'etc-link/evil', canary, '/workspace/../../x']) {
        const w = await c.callTool({ name: 'write_file', arguments: { path, content: 'pwned' } });
        expect(w.isError, path).toBe(true);
        expect(text(w), path).toMatch(/path_not_allowed|invalid_arguments/);
      }
      for (const path of ['../', '/etc', 'etc-link']) {
        const l = await c.callTool({ name: 'list_files', arguments: { path } });
        expect(l.isError, path).toBe(true);
      }
      // A patch that climbs out of the workspace is git apply's refusal.
      const climb = await c.callTool({ name: 'apply_patch', arguments: { patch: '--- /dev/null\n+++ b/../../escaped.txt\n@@ -0,0 +1 @@\n+x\n' } });
      expect(climb.isError).toBe(true);
      const cwd = await c.callTool({ name: 'apply_patch', arguments: { patch: '--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+x\n', cwd: '/etc' } });
      expect(cwd.isError).toBe(true);
    });
    expect(existsSync(canary)).toBe(false);
    expect(readFileSync('/etc/hostname', 'utf8')).not.toContain('pwned');
  });
});
