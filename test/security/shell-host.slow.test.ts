// Attacks from a shell sandbox (or its API client) on the host, against a real Grove server in its own process with
// real bubblewrap (issue 30 items 1 and 3). The attacker writes a shared library into its workspace, learns its
// host path (here: the worst case, it is found on the host), and names it in LD_PRELOAD through every way an
// environment reaches a command: exec, jobs, the create request's `env`, Orchard's exec and a terminal's init frame.
// The library writes a marker into a host-only folder and copies the canary file there: it must never run outside
// the sandbox. Also: the sandbox's /proc/1/cmdline and mount table name no host path, and no user namespace can be
// made inside.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { KEY, LEAK_FD, makeCanary, startChildServer, type Canary, type ChildServer } from './shell-support.ts';

let canary: Canary;
let srv: ChildServer;
let so: Buffer;

/** Markers the library left: only a process outside the sandbox can write into the canary's folder. */
const markers = () => readdirSync(canary.dir).filter((n) => n.startsWith('pwned-'));

beforeAll(async () => {
  canary = makeCanary();
  const src = path.join(canary.dir, 'evil.c');
  writeFileSync(
    src,
    `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void pwn(void) {
  char p[512];
  snprintf(p, sizeof p, "${canary.dir}/pwned-%d", getpid());
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  dprintf(fd, "uid=%d euid=%d\\n", getuid(), geteuid());
  int c = open("${canary.file}", O_RDONLY);
  if (c >= 0) { char b[256]; int n = read(c, b, sizeof b); if (n > 0) write(fd, b, n); close(c); }
  close(fd);
}
`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', path.join(canary.dir, 'evil.so'), src]);
  so = readFileSync(path.join(canary.dir, 'evil.so'));
  rmSync(path.join(canary.dir, 'evil.so'));
  // Positive control: the library does its job when a host process loads it.
  const probe = path.join(canary.dir, 'probe.so');
  writeFileSync(probe, so);
  execFileSync('/bin/true', { env: { LD_PRELOAD: probe } });
  expect(markers().length).toBe(1);
  expect(readFileSync(path.join(canary.dir, markers()[0]), 'utf8')).toContain(canary.secret);
  for (const m of markers()) rmSync(path.join(canary.dir, m));
  rmSync(probe);
  srv = await startChildServer({ env: { GROVE_TEST_CANARY: canary.envSecret }, leakFile: path.join(canary.dir, 'leak.log') });
}, 120_000);

afterAll(async () => {
  await srv?.kill();
  rmSync(canary.dir, { recursive: true, force: true });
});

/** Uploads the library into the sandbox's workspace and finds its host path (as an attacker who learned it would). */
async function plant(id: string): Promise<string> {
  const up = await srv.call('POST', `/sandboxes/${id}/files`, { path: 'evil.so', content: so.toString('base64') });
  expect(up.status).toBe(200);
  const found = execFileSync('find', [srv.dataDir, '-name', 'evil.so', '-newer', canary.file], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  expect(found.length).toBeGreaterThan(0);
  return found[found.length - 1];
}

function ptyRun(id: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/sandboxes/${id}/pty?api_key=${KEY}`);
  let out = '';
  return new Promise((resolve, reject) => {
    ws.on('open', () => ws.send(JSON.stringify({ type: 'init', cmd: ['/bin/sh', '-c', 'echo pty-ran'], env, rows: 24, cols: 80 })));
    ws.on('message', (m) => {
      const f = JSON.parse(m.toString());
      if (f.type === 'stdout') out += Buffer.from(f.data, 'base64').toString();
      if (f.type === 'exit') resolve({ code: f.code, out });
      if (f.type === 'error') resolve({ code: -1, out: f.message });
    });
    ws.on('error', reject);
  });
}

describe('a command environment never reaches the host (issue 30 item 1)', () => {
  it('LD_PRELOAD of a library the sandbox wrote runs nothing outside it, through every entry point', async () => {
    const id = await srv.sandbox();
    const host = await plant(id);
    const env = { LD_PRELOAD: host };
    const runs: Array<[string, unknown]> = [];
    runs.push(['exec', (await srv.call('POST', `/sandboxes/${id}/exec`, { command: 'echo exec-ran', env })).json?.stdout]);
    const job = (await srv.call('POST', `/sandboxes/${id}/exec`, { command: 'echo job-ran', env, background: true })).json;
    runs.push(['job', (await srv.call('GET', `/sandboxes/${id}/jobs/${job.job_id}?wait=30`)).json?.result?.stdout]);
    const orchard = await srv.call('POST', `/orchard/sandboxes/${id}/exec`, { command: 'echo orchard-ran', env, wait: true });
    runs.push(['orchard', orchard.json?.stdout ?? orchard.json?.result?.stdout ?? orchard.text]);
    runs.push(['pty', (await ptyRun(id, env)).out]);
    const id2 = await srv.sandbox({ env });
    runs.push(['create env', (await srv.call('POST', `/sandboxes/${id2}/exec`, { command: 'echo create-env-ran' })).json?.stdout]);
    console.log('entry points:', JSON.stringify(runs), 'markers:', markers());
    // Each command ran (inside, where the library finds no canary folder to write to) ...
    for (const [name, out] of runs) expect(String(out), name).toContain('ran');
    // ... and nothing ran on the host: no marker, the canary never copied anywhere.
    expect(markers()).toEqual([]);
    await srv.call('DELETE', `/sandboxes/${id}`);
    await srv.call('DELETE', `/sandboxes/${id2}`);
  }, 180_000);

  it('the server\'s environment and the canary file are not readable inside', async () => {
    const id = await srv.sandbox();
    const r = await srv.exec(id, `env; cat /proc/1/environ; cat ${canary.file}; ls ${canary.dir}; true`, { merge_stderr: true });
    expect(r.stdout).not.toContain(canary.envSecret);
    expect(r.stdout).not.toContain(canary.secret);
    expect(r.stdout).toMatch(/No such file or directory|Permission denied/);
    await srv.call('DELETE', `/sandboxes/${id}`);
  }, 120_000);

  it('a descriptor the server inherited without close-on-exec does not reach a command', async () => {
    const id = await srv.sandbox();
    const r = await srv.exec(id, `ls /proc/self/fd | tr '\\n' ' '; echo; echo leaked >&${LEAK_FD} && echo wrote`, { merge_stderr: true });
    console.log('descriptors inside:', r.stdout);
    expect(r.stdout).not.toContain('wrote');
    expect(r.stdout.split('\n')[0].trim().split(' ').map(Number).every((fd: number) => fd <= 3)).toBe(true);
    expect(readFileSync(path.join(canary.dir, 'leak.log'), 'utf8')).toBe('');
    await srv.call('DELETE', `/sandboxes/${id}`);
  }, 120_000);

  it('/proc/1/cmdline and the mount table inside name no host path of the sandbox', async () => {
    const id = await srv.sandbox();
    const cmdline = (await srv.exec(id, "tr '\\0' ' ' < /proc/1/cmdline")).stdout as string;
    const mounts = (await srv.exec(id, "grep -E ' /(workspace|tmp) ' /proc/self/mountinfo")).stdout as string;
    console.log('/proc/1/cmdline inside:', cmdline, '\nworkspace and /tmp mounts:', mounts.trim());
    expect(cmdline).toContain('bwrap');
    expect(cmdline).not.toContain(srv.dataDir);
    expect(cmdline).not.toContain('/workspace');
    expect(mounts).toContain(' /workspace ');
    expect(mounts).not.toContain(srv.dataDir);
    await srv.call('DELETE', `/sandboxes/${id}`);
  }, 120_000);

  it('environment names and values are checked: 4xx, never a host process', async () => {
    const id = await srv.sandbox();
    for (const env of [{ 'A=B': 'x' }, { 'LD_PRELOAD ': 'x' }, { '1X': 'x' }, { X: 'a\u0000b' }]) {
      const r = await srv.call('POST', `/sandboxes/${id}/exec`, { command: 'true', env });
      expect([r.status, r.json.error.code], JSON.stringify(env)).toEqual([400, 'invalid_request']);
      const o = await srv.call('POST', `/orchard/sandboxes/${id}/exec`, { command: 'true', env, wait: true });
      expect(o.status, `orchard ${JSON.stringify(env)}`).toBeGreaterThanOrEqual(400);
      expect(o.status).toBeLessThan(500);
      const c = await srv.call('POST', '/sandboxes', { type: 'shell', env });
      expect(c.status, `create ${JSON.stringify(env)}`).toBe(400);
    }
    const pty = await ptyRun(id, { 'A=B': 'x' });
    expect(pty.code).toBe(-1);
    expect(pty.out).toMatch(/not a valid environment variable name/);
    // Values with quotes, newlines and shell syntax arrive as data.
    const odd = "it's $(id) `id` \"q\"\nline2 \\ ;";
    expect((await srv.exec(id, 'printf %s "$ODD"', { env: { ODD: odd } })).stdout).toBe(odd);
    await srv.call('DELETE', `/sandboxes/${id}`);
  }, 120_000);
});

describe('no user namespaces inside a sandbox (issue 30 item 3)', () => {
  it('unshare -U fails for the sandbox user, and the limit cannot be raised', async () => {
    const id = await srv.sandbox();
    const r = await srv.exec(id, 'unshare -Ur id; echo "rc=$?"; unshare -U true; echo "rc2=$?"; cat /proc/sys/user/max_user_namespaces; echo 9 > /proc/sys/user/max_user_namespaces; echo "raise=$?"', { merge_stderr: true });
    console.log('inside:', r.stdout);
    expect(r.stdout).not.toContain('uid=0(root)');
    expect(r.stdout).toMatch(/rc=[1-9]/);
    expect(r.stdout).toMatch(/rc2=[1-9]/);
    expect(r.stdout).toMatch(/^0$/m);
    expect(r.stdout).toMatch(/raise=[1-9]/);
    // Ordinary work still runs: git in the workspace.
    const g = await srv.exec(id, 'git init -q repo && cd repo && echo a > f && git add f && git -c user.name=a -c user.email=a@b commit -qm one && git log --oneline | wc -l');
    expect(g.stdout.trim()).toBe('1');
    await srv.call('DELETE', `/sandboxes/${id}`);
  }, 120_000);
});
