// Connection flood through a shell sandbox's egress proxy (issue 30 item 5), as an attacker would: a real Grove
// server in a process of its own, real bubblewrap sandboxes, and a script inside one of them that opens thousands
// of connections to its egress proxy (straight to the Unix socket bound into the sandbox) and holds them idle.
// The server's open file descriptors must stay bounded (before the cap: 54 → 4,611), the cap and the idle closes
// must be reported in the sandbox's info, the refused connections get a 503, the idle ones are closed by the
// server after the idle timeout, and another sandbox's egress works all along.
import { readdirSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer } from './shell-support.ts';

const CAP = 40;
const IDLE_S = 20;
const FLOOD = 3000;

// argv: connections, proxied URL. Phase 1 (written to /workspace/phase1.json): how many connected and what each
// connection saw after a pause (open, a 503, closed); one request through the sandbox's own proxy port while
// the flood holds. Phase 2 (stdout): how many of the open ones the server closed, waited for up to 240 s.
const FLOOD_SCRIPT = String.raw`
import json, os, resource, socket, sys, time, urllib.error, urllib.request
n, url = int(sys.argv[1]), sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks, failed = [], 0
for i in range(n):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        failed += 1
        continue
    try:
        s.connect('/.grove/net/egress.sock')
        socks.append(s)
    except OSError:
        failed += 1
        s.close()
time.sleep(3)
def state(s):
    s.setblocking(False)
    try:
        d = s.recv(4096)
    except BlockingIOError:
        return 'open'
    except OSError:
        return 'reset'
    if d.startswith(b'HTTP/1.1 503'):
        return '503'
    return 'data' if d else 'closed'
states = [state(s) for s in socks]
alive = [s for s, st in zip(socks, states) if st == 'open']
opener = urllib.request.build_opener(urllib.request.ProxyHandler({'http': 'http://127.0.0.1:3128'}))
try:
    proxied = opener.open(url, timeout=30).status
except urllib.error.HTTPError as e:
    proxied = e.code
except Exception as e:
    proxied = repr(e)
phase1 = {'hard_nofile': hard, 'connected': len(socks), 'failed': failed, 'proxied_status': proxied}
for st in ('open', '503', 'closed', 'reset', 'data'):
    phase1[st] = states.count(st)
with open('/workspace/phase1.tmp', 'w') as f:
    json.dump(phase1, f)
os.rename('/workspace/phase1.tmp', '/workspace/phase1.json')
closed, deadline = 0, time.time() + 240
while alive and time.time() < deadline:
    time.sleep(0.5)
    rest = []
    for s in alive:
        if state(s) == 'open':
            rest.append(s)
        else:
            closed += 1
    alive = rest
print(json.dumps({'phase1': phase1, 'closed_by_server': closed, 'still_open': len(alive)}))
`;

// argv: tunnels, host:port. Opens CONNECT tunnels through the sandbox's proxy port, makes one request through
// each (the upstream keeps its connection), then holds them idle and waits (up to 120 s) for the server to close them.
const TUNNEL_SCRIPT = String.raw`
import json, socket, sys, time
n, target = int(sys.argv[1]), sys.argv[2]
tunnels, answers = [], []
for i in range(n):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=30)
    s.sendall(('CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' % (target, target)).encode())
    head = s.recv(4096)
    s.sendall(('GET / HTTP/1.1\r\nHost: %s\r\n\r\n' % target).encode())
    body = b''
    while b'hello-from-host' not in body:
        d = s.recv(4096)
        if not d:
            break
        body += d
    answers.append(head.split(b'\r\n')[0].decode() + ' | ' + ('hello' if b'hello-from-host' in body else 'none'))
    tunnels.append(s)
closed, deadline = 0, time.time() + 120
for s in tunnels:
    s.settimeout(max(0.1, deadline - time.time()))
    try:
        closed += 1 if s.recv(4096) == b'' else 0
    except OSError:
        pass
print(json.dumps({'answers': answers, 'closed_by_server': closed}))
`;

describe('egress connection flood (issue 30 item 5)', () => {
  let host: http.Server;
  let target = '';
  beforeAll(async () => {
    host = http.createServer((_req, res) => res.end('hello-from-host'));
    // Kept-alive upstream connections stay open on this side: only the proxy's idle timeout closes a tunnel.
    host.keepAliveTimeout = 0;
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', () => r()));
    target = `127.0.0.1:${(host.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    host.closeAllConnections();
    await new Promise<void>((r) => host.close(() => r()));
  });

  it('thousands of idle connections: the cap holds the server\'s fds, refusals are 503s, idle ones close, the other sandbox gets through', async () => {
    const srv = await startChildServer();
    const fds = () => readdirSync(`/proc/${srv.pid}/fd`).length;
    let sampler: NodeJS.Timeout | undefined;
    try {
      const attacker = await srv.sandbox({ block_network: false, allow: [target], egress_max_connections: CAP, egress_idle_timeout_s: IDLE_S });
      const other = await srv.sandbox({ block_network: false, allow: [target] });
      const fetchCmd = `python3 -c "import urllib.request; print(urllib.request.urlopen('http://${target}/', timeout=30).read().decode())"`;
      expect((await srv.exec(other, fetchCmd)).stdout).toBe('hello-from-host\n');
      const info0 = (await srv.call('GET', `/sandboxes/${attacker}`)).json.shell;
      expect(info0.egress).toEqual({ max_connections: CAP, idle_timeout_s: IDLE_S, open: 0, peak: 0, refused: 0, idle_closed: 0, events: [] });
      // Defaults apply when the request names none.
      expect((await srv.call('GET', `/sandboxes/${other}`)).json.shell.egress).toMatchObject({ max_connections: 128, idle_timeout_s: 300 });
      for (const bad of [{ egress_max_connections: 0 }, { egress_idle_timeout_s: 0 }, { egress_max_connections: 1e6 }]) {
        expect((await srv.call('POST', '/sandboxes', { type: 'shell', block_network: false, ...bad })).status).toBe(400);
      }

      const fd0 = fds();
      let fdMax = fd0;
      sampler = setInterval(() => {
        fdMax = Math.max(fdMax, fds());
      }, 50);
      const job = await srv.call('POST', `/sandboxes/${attacker}/exec`, {
        command: ['python3', '-c', FLOOD_SCRIPT, String(FLOOD), `http://${target}/`],
        background: true,
        timeout_s: 600,
      });
      expect(job.status).toBe(202);

      // While the flood holds its connections: the cap is reported, and the other sandbox still gets through.
      let phase1 = '';
      for (let i = 0; i < 600 && !phase1; i++) {
        phase1 = (await srv.exec(attacker, 'cat /workspace/phase1.json 2>/dev/null || true')).stdout;
        if (!phase1) await new Promise((r) => setTimeout(r, 500));
      }
      const during = (await srv.call('GET', `/sandboxes/${attacker}`)).json.shell.egress;
      const metrics = (await srv.call('GET', '/metrics')).text;
      const otherDuring = await srv.exec(other, fetchCmd);
      const fdDuring = fdMax;
      console.log('phase 1 inside:', phase1, '\nattacker egress during:', JSON.stringify(during), `\nserver fds: ${fd0} before, max ${fdDuring} during the flood`);
      expect(otherDuring.stdout).toBe('hello-from-host\n');
      expect(during.peak).toBe(CAP);
      expect(during.refused).toBeGreaterThan(FLOOD / 2);
      expect(metrics).toMatch(/^grove_backend\{backend="local",stat="shell_egress_refused"\} [1-9]\d*$/m);
      expect(during.events).toContainEqual(expect.objectContaining({ type: 'limit', limit: 'egress_connections', max: CAP }));

      const done = (await srv.call('GET', `/sandboxes/${attacker}/jobs/${job.json.job_id}?wait=300`)).json;
      clearInterval(sampler);
      expect(done.status).toBe('finished');
      const out = JSON.parse(done.result.stdout) as { phase1: Record<string, number | string>; closed_by_server: number; still_open: number };
      console.log('flood result:', JSON.stringify(out), `\nserver fds: max ${fdMax} over the whole run`);
      const p = out.phase1;
      // Every connection attempt got through to the socket (the flood is real), at most CAP were kept.
      expect(p.connected).toBeGreaterThan(FLOOD / 2);
      expect(p.open).toBeGreaterThan(0);
      expect(p.open).toBeLessThanOrEqual(CAP);
      expect(p['503']).toBeGreaterThan(0);
      expect(p.data).toBe(0);
      expect(p.proxied_status).toBe(503);
      // The held connections were closed by the server (idle timeout), none stayed open.
      expect(out.still_open).toBe(0);
      expect(out.closed_by_server).toBe(p.open);
      // Bounded: the cap, the refusals in flight (64) and the server's own work; the unbounded proxy took one per connection.
      expect(fdMax - fd0).toBeLessThan(CAP + 64 + 100);

      const after = (await srv.call('GET', `/sandboxes/${attacker}`)).json.shell.egress;
      console.log('attacker egress after:', JSON.stringify(after), `server fds after: ${fds()}`);
      expect(after.open).toBe(0);
      expect(after.idle_closed).toBeGreaterThanOrEqual(p.open as number);
      expect(after.events).toContainEqual(expect.objectContaining({ type: 'limit', limit: 'egress_idle', max: IDLE_S }));
      expect(fds()).toBeLessThan(fd0 + 20);
      // The attacker's own egress works again once its connections are gone, and so does the other sandbox's.
      expect((await srv.exec(attacker, fetchCmd)).stdout).toBe('hello-from-host\n');
      expect((await srv.exec(other, fetchCmd)).stdout).toBe('hello-from-host\n');
    } finally {
      clearInterval(sampler);
      await srv.kill();
    }
  }, 600_000);

  it('an idle CONNECT tunnel is closed after the idle timeout, and counted', async () => {
    const srv = await startChildServer();
    try {
      const id = await srv.sandbox({ block_network: false, allow: [target], egress_idle_timeout_s: 8 });
      const r = (await srv.call('POST', `/sandboxes/${id}/exec`, { command: ['python3', '-c', TUNNEL_SCRIPT, '5', target], timeout_s: 300 })).json;
      const egress = (await srv.call('GET', `/sandboxes/${id}`)).json.shell.egress;
      console.log('tunnels:', r.stdout, r.stderr, '\negress:', JSON.stringify(egress));
      const out = JSON.parse(r.stdout) as { answers: string[]; closed_by_server: number };
      expect(out.answers).toEqual(Array(5).fill('HTTP/1.1 200 Connection Established | hello'));
      expect(out.closed_by_server).toBe(5);
      expect(egress.open).toBe(0);
      expect(egress.idle_closed).toBeGreaterThanOrEqual(5);
      expect(egress.events).toContainEqual(expect.objectContaining({ type: 'limit', limit: 'egress_idle', max: 8 }));
    } finally {
      await srv.kill();
    }
  }, 300_000);
});
