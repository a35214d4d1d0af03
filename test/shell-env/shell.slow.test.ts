// Shell sandboxes through the REST API of a live server: real bubblewrap, cgroups, git and processes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { GroveClient } from '../../client/index.ts';
import { hostProcesses, processesWhen } from '../support/processes.ts';
import { KEY, startShellServer, type ShellServer } from './support.ts';

let srv: ShellServer;
let target: http.Server;
let targetPort: number;
let hits = 0;

beforeAll(async () => {
  srv = await startShellServer({ shellImages: { 'local-root': '/' } });
  // A server on the host's loopback that sandboxes must not reach (unless `allow` opens it).
  target = http.createServer((_req, res) => {
    hits++;
    res.end('host secret\n');
  });
  await new Promise<void>((ok) => target.listen(0, '127.0.0.1', ok));
  targetPort = (target.address() as AddressInfo).port;
}, 60_000);

afterAll(async () => {
  await srv?.close();
  await new Promise<void>((ok) => (target ? target.close(() => ok()) : ok()));
});

const exec = async (id: string, body: Record<string, unknown>) => {
  const r = await srv.call('POST', `/sandboxes/${id}/exec`, body);
  expect(r.status, r.text).toBe(200);
  return r.json;
};

describe('shell sandboxes', () => {
  let id: string;
  let uid: number;

  beforeAll(async () => {
    id = await srv.sandbox();
    uid = (await srv.call('GET', `/sandboxes/${id}`)).json.shell.uid;
  }, 60_000);

  it('reports its root file system, network mode and the limits in force', async () => {
    const info = (await srv.call('GET', `/sandboxes/${id}`)).json;
    expect(info.shell).toMatchObject({ image: null, rootfs: 'host', workspace: '/workspace', network: 'blocked' });
    expect(info.shell.uid).toBeGreaterThanOrEqual(61000);
    expect(info.shell.limits.enforced_by.processes).toMatch(/cgroup|rlimit/);
    const unknown = await srv.sandbox({ image: 'python:3.11-slim' });
    const u = (await srv.call('GET', `/sandboxes/${unknown}`)).json.shell;
    expect(u).toMatchObject({ image: 'python:3.11-slim', rootfs: 'host' });
    expect(u.notes.join(' ')).toMatch(/not available locally.*host's root file system/);
    const mapped = await srv.sandbox({ image: 'local-root' });
    expect((await srv.call('GET', `/sandboxes/${mapped}`)).json.shell).toMatchObject({ image: 'local-root', rootfs: 'image' });
    await srv.call('DELETE', `/sandboxes/${unknown}`);
    await srv.call('DELETE', `/sandboxes/${mapped}`);
  });

  it('runs commands as a non-root uid on a read-only root with a writable workspace and /tmp', async () => {
    const r = await exec(id, {
      command: 'id -u; pwd; echo "$GREETING"; touch /workspace/w /tmp/t && echo wrote; touch /etc/x 2>/dev/null || echo ro; ls /root /home 2>&1 | head -2',
      env: { GREETING: 'hello' },
    });
    expect(r.exit_code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 5)).toEqual([String(uid), '/workspace', 'hello', 'wrote', 'ro']);
    expect(lines.slice(5).join(' ')).toMatch(/No such file or directory/);
    expect(uid).not.toBe(0);
  });

  it('has a private, writable /dev/shm of 64 MiB, as a container has (POSIX semaphores: multiprocessing locks work)', async () => {
    // SWE-bench's pytest-5495 needs a multiprocessing.Lock (a SemLock in /dev/shm); a read-only /dev/shm failed it.
    const r = await exec(id, {
      command: 'stat -c %a /dev/shm; python3 -c "import multiprocessing as m; l = m.Lock(); l.acquire(); l.release(); print(\'semlock ok\')"; ' +
        'dd if=/dev/zero of=/dev/shm/fill bs=1M count=80 2>&1 | grep -c "No space left"; rm -f /dev/shm/fill',
    });
    expect(r.stdout.trim().split('\n')).toEqual(['1777', 'semlock ok', '1']);
    // Another sandbox does not see this one's /dev/shm.
    await exec(id, { command: 'echo mine > /dev/shm/mark' });
    const other = await srv.sandbox();
    expect((await exec(other, { command: 'cat /dev/shm/mark 2>&1 || true' })).stdout).toMatch(/No such file/);
    await srv.call('DELETE', `/sandboxes/${other}`);
  });

  it('separates or merges the streams, takes argv arrays, cwd and stdin, and reports exit codes', async () => {
    const sep = await exec(id, { command: 'echo out; echo err >&2; exit 3' });
    expect(sep).toMatchObject({ exit_code: 3, stdout: 'out\n', stderr: 'err\n', merged: false, timed_out: false });
    const merged = await exec(id, { command: 'echo out; echo err >&2', merge_stderr: true });
    expect(merged).toMatchObject({ exit_code: 0, stdout: 'out\nerr\n', stderr: '', merged: true });
    await exec(id, { command: 'mkdir -p sub/dir' });
    expect((await exec(id, { command: ['pwd'], cwd: 'sub/dir' })).stdout).toBe('/workspace/sub/dir\n');
    expect((await exec(id, { command: ['cat'], stdin: 'piped' })).stdout).toBe('piped');
    expect((await exec(id, { command: ['printf', '%s|', 'a b', '$HOME', ';rm -rf /'] })).stdout).toBe('a b|$HOME|;rm -rf /|');
  });

  it('kills the whole process tree on timeout (grandchildren, setsid, nohup) and answers 124', async () => {
    const r = await exec(id, {
      command: '(sleep 301 &); setsid sleep 302 & nohup sleep 303 >/dev/null 2>&1 & echo started; sleep 304',
      timeout_s: 1,
    });
    expect(r).toMatchObject({ exit_code: 124, timed_out: true, stdout: 'started\n' });
    const left = hostProcesses(uid).filter((a) => /sleep 30[1-4]/.test(a));
    expect(left).toEqual([]);
    // The sandbox still works afterwards.
    expect((await exec(id, { command: 'echo alive' })).stdout).toBe('alive\n');
  });

  it('background processes of a finished exec keep running and are shared with later execs', async () => {
    await exec(id, { command: 'nohup sleep 120 >/dev/null 2>&1 & echo $! > /tmp/bg.pid' });
    const r = await exec(id, { command: 'kill -0 $(cat /tmp/bg.pid) && echo running; kill $(cat /tmp/bg.pid)' });
    expect(r.stdout).toBe('running\n');
  });

  it('caps output per stream, keeping head and tail with a marker', async () => {
    const r = await exec(id, {
      command: 'printf "HEAD"; head -c 100000 /dev/zero | tr "\\0" x; printf "TAIL"; head -c 5000 /dev/zero | tr "\\0" y >&2',
      max_output_bytes: 1000,
    });
    expect(r.stdout_bytes).toBe(100_008);
    expect(r.truncated).toEqual({ stdout: true, stderr: true });
    expect(r.stdout.startsWith('HEAD')).toBe(true);
    expect(r.stdout.endsWith('TAIL')).toBe(true);
    expect(r.stdout).toContain('[... 99008 bytes truncated ...]');
    expect(r.stdout.length).toBeLessThan(1100);
    expect(r.stderr_bytes).toBe(5000);
  });

  it('runs jobs: start at once, poll, wait with a server-side timeout', async () => {
    const started = await srv.call('POST', `/sandboxes/${id}/exec`, { command: 'sleep 1; echo done', background: true });
    expect(started.status).toBe(202);
    expect(started.json.status).toBe('running');
    const jobUrl = `/sandboxes/${id}/jobs/${started.json.job_id}`;
    expect((await srv.call('GET', jobUrl)).json.status).toBe('running');
    const done = (await srv.call('GET', `${jobUrl}?wait=30`)).json;
    expect(done).toMatchObject({ status: 'finished', result: { exit_code: 0, stdout: 'done\n' } });
    expect((await srv.call('GET', `/sandboxes/${id}/jobs/job_nope`)).json.error.code).toBe('job_not_found');
  });

  it('uploads, downloads and lists files in the workspace', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    const up = await srv.call('POST', `/sandboxes/${id}/files`, { path: '/workspace/data/bin.dat', content: bytes.toString('base64') });
    expect(up.json).toEqual({ path: '/workspace/data/bin.dat', size: 6 });
    await srv.call('POST', `/sandboxes/${id}/files`, { path: 'data/run.sh', content: 'echo ran', encoding: 'utf8', mode: '755' });
    const res = await fetch(`${srv.url}/sandboxes/${id}/files?path=data/bin.dat`, { headers: { 'x-api-key': KEY } });
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    expect((await exec(id, { command: './data/run.sh' })).stdout).toBe('ran\n');
    const list = (await srv.call('GET', `/sandboxes/${id}/files/list?path=/workspace/data`)).json;
    expect(list.files.map((f: { name: string; type: string; size: number }) => [f.name, f.type, f.size])).toEqual([
      ['bin.dat', 'file', 6],
      ['run.sh', 'file', 8],
    ]);
    // Files written by commands belong to the sandbox user.
    expect((await exec(id, { command: 'stat -c %u data/bin.dat' })).stdout.trim()).toBe(String(uid));
  });

  it('refuses path escapes with 400: .., absolute paths outside, symlinks out, FIFOs', async () => {
    await exec(id, { command: 'ln -sfn /etc etclink; ln -sf /etc/passwd pw; mkfifo fifo; mkdir -p d' });
    const refused = [
      ['GET', `/sandboxes/${id}/files?path=../../etc/passwd`],
      ['GET', `/sandboxes/${id}/files?path=/etc/passwd`],
      ['GET', `/sandboxes/${id}/files?path=pw`],
      ['GET', `/sandboxes/${id}/files?path=etclink/passwd`],
      ['GET', `/sandboxes/${id}/files?path=fifo`],
      ['GET', `/sandboxes/${id}/files?path=d/../../x`],
      ['GET', `/sandboxes/${id}/files/list?path=/`],
      ['GET', `/sandboxes/${id}/files/list?path=etclink`],
      ['POST', `/sandboxes/${id}/files`, { path: 'etclink/evil', content: 'eA==' }],
      ['POST', `/sandboxes/${id}/files`, { path: '/tmp/x', content: 'eA==' }],
      ['POST', `/sandboxes/${id}/files`, { path: '../x', content: 'eA==' }],
      ['POST', `/sandboxes/${id}/files`, { path: 'fifo', content: 'eA==' }],
    ] as const;
    for (const [method, url, body] of refused) {
      const r = await srv.call(method, url, body);
      expect([r.status, r.json?.error?.code], `${method} ${url} ${JSON.stringify(body ?? '')}`).toEqual([400, 'path_not_allowed']);
    }
    expect((await srv.call('GET', `/sandboxes/${id}/files?path=missing.txt`)).status).toBe(404);
  });

  it('applies patches with git apply, the patch passed as data', async () => {
    await exec(id, { command: 'git init -q repo && cd repo && printf "one\\ntwo\\n" > f.txt && git add f.txt' });
    const patch = ['diff --git a/f.txt b/f.txt', '--- a/f.txt', '+++ b/f.txt', '@@ -1,2 +1,2 @@', ' one', '-two', '+$(touch /workspace/pwned) `id`', ''].join('\n');
    const ok = await srv.call('POST', `/sandboxes/${id}/apply_patch`, { patch, cwd: 'repo' });
    expect(ok.json).toMatchObject({ success: true, exit_code: 0 });
    expect((await exec(id, { command: 'cat repo/f.txt; ls pwned 2>&1' })).stdout).toBe('one\n$(touch /workspace/pwned) `id`\nls: cannot access \'pwned\': No such file or directory\n');
    const bad = await srv.call('POST', `/sandboxes/${id}/apply_patch`, { patch, cwd: 'repo' });
    expect(bad.json.success).toBe(false);
    expect(bad.json.stderr).toMatch(/patch does not apply/);
  });

  it('serves an interactive PTY over WebSocket (key as ?api_key=)', async () => {
    const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/sandboxes/${id}/pty?api_key=${KEY}`);
    let out = '';
    const exit = new Promise<number>((resolve, reject) => {
      ws.on('message', (m) => {
        const f = JSON.parse(m.toString());
        if (f.type === 'ready') {
          ws.send(JSON.stringify({ type: 'resize', rows: 30, cols: 100 }));
          ws.send(JSON.stringify({ type: 'stdin', data: Buffer.from('tty; stty size; echo $((6*7))\nexit 5\n').toString('base64') }));
        }
        if (f.type === 'stdout') out += Buffer.from(f.data, 'base64').toString();
        if (f.type === 'exit') resolve(f.code);
        if (f.type === 'error') reject(new Error(f.message));
      });
      ws.on('error', reject);
    });
    await new Promise<void>((ok, fail) => ws.once('open', () => ok()).once('error', fail));
    ws.send(JSON.stringify({ type: 'init', cmd: ['bash', '--norc', '-i'], rows: 24, cols: 80 }));
    expect(await exit).toBe(5);
    expect(out).toMatch(/\/dev\/pts\/\d+/);
    expect(out).toContain('30 100');
    expect(out).toContain('42');
    // A wrong key is refused before the upgrade.
    const bad = new WebSocket(`${srv.url.replace('http', 'ws')}/sandboxes/${id}/pty?api_key=wrong-key-000`);
    const status = await new Promise<number>((resolve) => bad.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(403);
  });
});

describe('the typed client', () => {
  it('drives exec, jobs, files and patches of a shell sandbox', async () => {
    const client = new GroveClient({ baseUrl: srv.url, apiKey: KEY });
    try {
      const sb = await client.createAndWait({ type: 'shell' });
      const id = sb.sandbox_id;
      expect((await client.exec(id, { command: 'echo $((1+2))' })).stdout).toBe('3\n');
      const job = await client.startJob(id, { command: ['sh', '-c', 'echo job'] });
      expect((await client.job(id, job.job_id, 10)).result?.stdout).toBe('job\n');
      await client.uploadFile(id, 'x/a.txt', 'one\n');
      expect(Buffer.from(await client.downloadFile(id, '/workspace/x/a.txt')).toString()).toBe('one\n');
      expect((await client.listFiles(id, 'x')).files.map((f) => f.name)).toEqual(['a.txt']);
      const patch = '--- a/x/a.txt\n+++ b/x/a.txt\n@@ -1 +1 @@\n-one\n+two\n';
      expect((await client.applyPatch(id, patch)).success).toBe(true);
      expect((await client.exec(id, { command: ['cat', 'x/a.txt'] })).stdout).toBe('two\n');
      await expect(client.downloadFile(id, '../etc/passwd')).rejects.toMatchObject({ status: 400, code: 'path_not_allowed' });
      await client.deleteSandbox(id);
    } finally {
      client.close();
    }
  });
});

describe('shell sandbox networking', () => {
  it('a blocked sandbox has only its own loopback and cannot open any connection', async () => {
    const id = await srv.sandbox({ block_network: true });
    const r = await exec(id, {
      command: [
        'python3',
        '-c',
        [
          'import socket',
          `targets = [("127.0.0.1", ${targetPort}), ("169.254.169.254", 80), ("1.1.1.1", 443), ("10.0.0.1", 22)]`,
          'for host, port in targets:',
          '    s = socket.socket(); s.settimeout(2)',
          '    try:',
          '        s.connect((host, port)); print("CONNECTED", host)',
          '    except OSError as e:',
          '        print("refused", host, e.errno)',
          'u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
          'try:',
          '    u.sendto(b"x", ("1.1.1.1", 53)); print("SENT udp")',
          'except OSError as e:',
          '    print("refused udp", e.errno)',
        ].join('\n'),
      ],
    });
    expect(r.stdout).not.toContain('CONNECTED');
    expect(r.stdout).not.toContain('SENT');
    expect(r.stdout.match(/refused/g)).toHaveLength(5);
    const links = await exec(id, { command: 'ls /sys/class/net 2>/dev/null || cat /proc/net/dev' });
    expect(links.stdout).not.toMatch(/eth|ens|enp|veth/);
    expect(hits).toBe(0);
    await srv.call('DELETE', `/sandboxes/${id}`);
  });

  it('an unblocked sandbox reaches out only through the filtering proxy: not 127.0.0.1, not the metadata address', async () => {
    const id = await srv.sandbox({ block_network: false });
    expect((await srv.call('GET', `/sandboxes/${id}`)).json.shell.network).toBe('proxy');
    const curl = (args: string) => exec(id, { command: `curl -sS -m 5 -o /dev/null -w '%{http_code}' ${args} 2>&1; echo " rc=$?"` });
    // Through the proxy (curl honours http_proxy): the policy refuses loopback, metadata and private ranges.
    expect((await curl(`http://127.0.0.1:${targetPort}/`)).stdout).toMatch(/^403 rc=22|^403 rc=0/);
    expect((await curl('http://169.254.169.254/latest/meta-data/')).stdout).toMatch(/^403/);
    expect((await curl('http://10.1.2.3/')).stdout).toMatch(/^403/);
    expect((await curl(`https://127.0.0.1:${targetPort}/`)).stdout).toMatch(/CONNECT|403/);
    // Around the proxy: the sandbox's 127.0.0.1 is its own, and there is no route anywhere else.
    expect((await curl(`--noproxy '*' http://127.0.0.1:${targetPort}/`)).stdout).toMatch(/000 rc=7/);
    expect((await curl("--noproxy '*' http://169.254.169.254/")).stdout).toMatch(/000 rc=7/);
    expect(hits).toBe(0);
    await srv.call('DELETE', `/sandboxes/${id}`);
  });

  it('`allow` opens a named host through the proxy (the positive control for the refusals above)', async () => {
    const id = await srv.sandbox({ block_network: false, allow: [`127.0.0.1:${targetPort}`] });
    const r = await exec(id, { command: `curl -sS -m 5 http://127.0.0.1:${targetPort}/` });
    expect(r.stdout).toBe('host secret\n');
    expect(hits).toBe(1);
    hits = 0;
    await srv.call('DELETE', `/sandboxes/${id}`);
  });
});

describe('shell sandbox limits', () => {
  it('contains a fork bomb: the other sandbox and the server keep working', async () => {
    const [bomb, other] = await Promise.all([srv.sandbox({ max_processes: 64 }), srv.sandbox()]);
    const running = srv.call('POST', `/sandboxes/${bomb}/exec`, { command: 'b(){ b|b& }; b', timeout_s: 6 });
    // While it runs: the server answers and the other sandbox runs commands.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 500));
      expect((await srv.call('GET', '/health')).status).toBe(200);
      expect((await exec(other, { command: 'echo fine' })).stdout).toBe('fine\n');
    }
    const r = await running;
    expect(r.json.exit_code).toBe(124);
    const count = await exec(bomb, { command: 'ps -e --no-headers | wc -l' });
    expect(Number(count.stdout.trim())).toBeLessThan(10);
    await srv.call('DELETE', `/sandboxes/${bomb}`);
    await srv.call('DELETE', `/sandboxes/${other}`);
  });

  it('enforces the memory limit with the cgroup (the process is killed, the sandbox lives)', async () => {
    const id = await srv.sandbox({ memory_mb: 128 });
    const info = (await srv.call('GET', `/sandboxes/${id}`)).json.shell;
    if (info.limits.enforced_by.memory !== 'cgroup') return; // rlimit-only host: nothing to assert
    const r = await exec(id, { command: ['python3', '-c', 'b = bytearray(512 * 1024 * 1024); b[::4096] = b"x" * len(b[::4096]); print("survived")'] });
    expect(r.stdout).not.toContain('survived');
    expect(r.exit_code).not.toBe(0);
    expect((await exec(id, { command: 'echo still here' })).stdout).toBe('still here\n');
    await srv.call('DELETE', `/sandboxes/${id}`);
  });

  it('deleting a sandbox ends every process in it and removes its workspace', async () => {
    const id = await srv.sandbox();
    const info = (await srv.call('GET', `/sandboxes/${id}`)).json.shell;
    await exec(id, { command: 'nohup sleep 600 >/dev/null 2>&1 & setsid sleep 601 >/dev/null 2>&1 &' });
    const sleeps = () => hostProcesses(info.uid).filter((a) => /sleep 60[01]/.test(a));
    expect(await processesWhen(sleeps, (p) => p.length >= 2)).toHaveLength(2);
    const del = await srv.call('DELETE', `/sandboxes/${id}`);
    expect(del.status).toBe(204);
    expect(sleeps()).toEqual([]);
  });
});
