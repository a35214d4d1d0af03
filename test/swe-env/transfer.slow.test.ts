// Getting a real repository into a shell sandbox: only the base commit's history is bundled (a mirror with
// thousands of refs/pull/* and a blob missing off that history bundles fine, where `git bundle --all` fails), and
// the bundle streams in outside the JSON body limit (a ~200 MB repository of random data arrives byte for byte;
// the same bytes through the JSON files API are refused with 413). Real git, real bubblewrap sandboxes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroveClient } from '../../client/index.ts';
import { clientShellTarget } from '../../runner/swe/shell-session.ts';
import { bundleCommit, BundleCache } from '../../swe-env/bundle.ts';
import { prepareRepo } from '../../swe-env/repo.ts';
import { KEY, startShellServer, type ShellServer } from '../shell-env/support.ts';

let tmp: string;
let srv: ShellServer;
let client: GroveClient;

const ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x.invalid', GIT_CONFIG_NOSYSTEM: '1' };
const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { env: ENV, maxBuffer: 64 * 1024 * 1024 }).toString().trim();

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-transfer-'));
  srv = await startShellServer();
  client = new GroveClient({ baseUrl: srv.url, apiKey: KEY, timeoutMs: 300_000 });
}, 60_000);

afterAll(async () => {
  client?.close();
  await srv?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('bundling what instances need', () => {
  it('bundles a base commit of a mirror with thousands of pull refs and a blob missing off its history', async () => {
    const repo = path.join(tmp, 'mirror');
    execFileSync('git', ['init', '-q', '-b', 'main', repo], { env: ENV });
    writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'one');
    const base = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'tag', 'v1.0');
    // A later commit on a side branch whose blob then goes missing (as in a damaged mirror).
    git(repo, 'checkout', '-q', '-b', 'side');
    writeFileSync(path.join(repo, 'lost.txt'), 'this blob will be deleted\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'side');
    const side = git(repo, 'rev-parse', 'HEAD');
    const blob = git(repo, 'rev-parse', 'HEAD:lost.txt');
    git(repo, 'checkout', '-q', 'main');
    // 3000 refs/pull/N/head, alternating between the two commits.
    const lines = Array.from({ length: 3000 }, (_, i) => `create refs/pull/${i + 1}/head ${i % 2 ? side : base}`).join('\n');
    execFileSync('git', ['-C', repo, 'update-ref', '--stdin'], { input: `${lines}\n`, env: ENV });
    rmSync(path.join(repo, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    expect(git(repo, 'for-each-ref', 'refs/pull').split('\n')).toHaveLength(3000);
    // What Grove did before: every ref, and so the missing blob: fails.
    expect(() => execFileSync('git', ['-C', repo, 'bundle', 'create', path.join(tmp, 'all.bundle'), '--all'], { env: ENV, stdio: 'pipe' })).toThrow();

    const file = path.join(tmp, 'base.bundle');
    await bundleCommit(repo, base, file);
    const heads = execFileSync('git', ['bundle', 'list-heads', file], { env: ENV }).toString();
    expect(heads).toContain(base);
    expect(heads).toContain('refs/tags/v1.0');
    expect(heads).not.toContain('refs/pull/');
    // A base commit that is not in the repository is a clear error, not a git trace.
    await expect(bundleCommit(repo, 'f'.repeat(40), path.join(tmp, 'x.bundle'))).rejects.toMatchObject({ code: 'bad_commit' });
    await expect(bundleCommit(repo, '--all', path.join(tmp, 'x.bundle'))).rejects.toMatchObject({ code: 'bad_commit' });

    // And the checkout in a sandbox is at the base commit, with the tag.
    const id = await srv.sandbox({ block_network: true });
    const shell = clientShellTarget(client, id);
    await prepareRepo(shell, { instance_id: 'm-1', repo: 'o/mirror', base_commit: base, problem_statement: '', FAIL_TO_PASS: [], PASS_TO_PASS: [] }, { 'o/mirror': repo }, undefined);
    const r = await client.exec(id, { command: 'git rev-parse HEAD && git describe --tags && git for-each-ref | wc -l', cwd: 'repo' });
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([base, 'v1.0']);
    await client.deleteSandbox(id);
  }, 180_000);
});

describe('large transfers', () => {
  it('a ~200 MB repository streams into a sandbox; the JSON files API refuses the same bytes', async () => {
    const repo = path.join(tmp, 'big');
    execFileSync('git', ['init', '-q', '-b', 'main', repo], { env: ENV });
    // Random bytes do not compress: the bundle is as large as the data.
    execFileSync('sh', ['-c', 'head -c 200000000 /dev/urandom > "$1/data.bin"', 'x', repo]);
    const sum = execFileSync('sha256sum', [path.join(repo, 'data.bin')]).toString().split(' ')[0];
    git(repo, '-c', 'core.compression=0', 'add', 'data.bin');
    git(repo, 'commit', '-q', '-m', 'big');
    const base = git(repo, 'rev-parse', 'HEAD');
    const bundles = new BundleCache();
    try {
      const file = await bundles.get(repo, base);
      const size = Number(execFileSync('stat', ['-c', '%s', file]).toString());
      expect(size).toBeGreaterThan(199_000_000);
      // Through the JSON files API: far over the body limit (10 MiB by default).
      const id = await srv.sandbox({ block_network: true });
      const refused = await srv.call('POST', `/sandboxes/${id}/files`, { path: 'x.bin', content: 'A'.repeat(12 * 1024 * 1024), encoding: 'utf8' });
      expect(refused.status).toBe(413);
      // Streamed: it arrives whole and the checkout has the file byte for byte.
      const shell = clientShellTarget(client, id);
      await prepareRepo(shell, { instance_id: 'b-1', repo: 'o/big', base_commit: base, problem_statement: '', FAIL_TO_PASS: [], PASS_TO_PASS: [] }, { 'o/big': repo }, undefined, { bundles });
      const r = await client.exec(id, { command: 'sha256sum data.bin; ls -a ../.grove', cwd: 'repo' });
      expect(r.stdout.split(' ')[0]).toBe(sum);
      // The bundle was removed after the clone; no part file is left behind.
      expect(r.stdout).not.toContain('repo.bundle');
      await client.deleteSandbox(id);
    } finally {
      await bundles.close();
    }
  }, 600_000);

  it('refuses a streamed upload outside the workspace, without a key, and cleans up a cut-short one', async () => {
    const id = await srv.sandbox({ block_network: true });
    const put = (q: string, body: BodyInit, key = KEY) => fetch(`${srv.url}/sandboxes/${id}/files/stream?${q}`, { method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' }, body });
    expect((await put('path=../../etc/evil', 'x')).status).toBe(400);
    expect((await put('path=/etc/passwd', 'x')).status).toBe(400);
    expect([401, 403]).toContain((await put('path=ok.txt', 'x', 'wrong-key')).status);
    expect((await put('path=ok.txt&mode=9999', 'x')).status).toBe(400);
    const ok = await put('path=dir/ok.txt&mode=0600', 'hello');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ path: '/workspace/dir/ok.txt', size: 5 });
    const r = await client.exec(id, { command: 'stat -c %a dir/ok.txt; cat dir/ok.txt' });
    expect(r.stdout).toBe('600\nhello');
    // A body that ends before its Content-Length: no file, no part file.
    const { request } = await import('node:http');
    await new Promise<void>((resolve) => {
      const u = new URL(`${srv.url}/sandboxes/${id}/files/stream?path=cut.bin`);
      const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT', headers: { 'x-api-key': KEY, 'content-type': 'application/octet-stream', 'content-length': '1000000' } });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(Buffer.alloc(100_000));
      setTimeout(() => req.destroy(), 300);
    });
    let listing = '';
    for (let i = 0; i < 50; i++) {
      listing = (await client.exec(id, { command: 'ls -a' })).stdout;
      if (!listing.includes('grove-part')) break;
      await new Promise((ok) => setTimeout(ok, 200));
    }
    expect(listing).not.toContain('cut.bin');
    await client.deleteSandbox(id);
  }, 120_000);
});
