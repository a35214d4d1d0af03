// A real OCI registry for the tests: Debian's docker-registry (distribution v2) on 127.0.0.1, a free port, its
// storage in a temporary folder, optionally behind htpasswd (bcrypt) basic auth. Without TLS: a registries.conf
// with an `insecure = true` entry for exactly that address is handed to podman through CONTAINERS_REGISTRIES_CONF.
// `requests()` reads its access log (one line per HTTP request), so a test can count what was pulled.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Progress } from '../../sandbox/progress.ts';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

export interface TestRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  dir: string;
  /** A registries.conf whose only entry makes this address plain HTTP. */
  registriesConf: string;
  /** An auth file (podman's auth.json shape) with this registry's credentials; null without auth. */
  authFile: string | null;
  /** Access log lines: `"GET /v2/<name>/manifests/<tag> HTTP/1.1" 200`. */
  requests(): string[];
  /** The same, each with the client's user agent (`skopeo/…` for the up-front check, podman's for pulls). */
  requestsBy(): Array<{ line: string; agent: string }>;
  close(): Promise<void>;
}

/** Why the registry tests cannot run here (null: they can). */
export function registryMissing(): string | null {
  if (!existsSync(REGISTRY_BIN)) return 'docker-registry is not installed (apt-get install docker-registry)';
  if (!existsSync('/usr/bin/podman')) return 'podman is not installed (apt-get install podman runc)';
  if (process.getuid?.() !== 0) return 'shell sandboxes need root';
  try {
    execFileSync('python3', ['-W', 'ignore', '-c', 'import crypt'], { stdio: 'ignore' });
  } catch {
    return "python3's crypt module (bcrypt for the registry's htpasswd)";
  }
  return null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** bcrypt through the system's crypt(3) (libxcrypt), as distribution's htpasswd reads it. */
function bcrypt(password: string): string {
  return execFileSync('python3', ['-W', 'ignore', '-c', 'import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))', password], { encoding: 'utf8' }).trim();
}

export async function startRegistry(o: { auth?: { user: string; password: string } } = {}): Promise<TestRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  let authFile: string | null = null;
  const config = [
    'version: 0.1',
    'log:',
    '  level: warn',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${path.join(dir, 'data')}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${host}`,
    '  secret: grove-test-registry',
  ];
  if (o.auth) {
    writeFileSync(path.join(dir, 'htpasswd'), `${o.auth.user}:${bcrypt(o.auth.password)}\n`);
    config.push('auth:', '  htpasswd:', '    realm: grove-test', `    path: ${path.join(dir, 'htpasswd')}`);
    authFile = path.join(dir, 'auth.json');
    writeFileSync(authFile, JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${o.auth.user}:${o.auth.password}`).toString('base64') } } }));
  }
  writeFileSync(path.join(dir, 'config.yml'), `${config.join('\n')}\n`);
  const registriesConf = path.join(dir, 'registries.conf');
  writeFileSync(registriesConf, `[[registry]]\nlocation = "${host}"\ninsecure = true\n`);
  let log = '';
  const child: ChildProcess = spawn(REGISTRY_BIN, ['serve', path.join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
  const onData = (b: Buffer) => {
    log += b.toString();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const up = Progress.after(20_000, 'the test registry to answer');
  try {
    for (;;) {
      const r = await fetch(`http://${host}/v2/`).catch(() => null);
      if (r && (r.status === 200 || r.status === 401)) break;
      if (child.exitCode !== null || up.expired) throw new Error(`docker-registry did not start on ${host}: ${log.slice(-500)}`);
      await up.sleep(100);
    }
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    up.done();
  }
  return {
    host,
    dir,
    registriesConf,
    authFile,
    requests: () => log.split('\n').filter((l) => /^\S+ - \S+ \[/.test(l)).map((l) => /"([^"]*)" (\d+)/.exec(l)).filter((m) => m !== null).map((m) => `"${m![1]}" ${m![2]}`),
    // The access log is in the combined format: the user agent is the last quoted field.
    requestsBy: () => log.split('\n').filter((l) => /^\S+ - \S+ \[/.test(l)).map((l) => /"([^"]*)" (\d+).*"([^"]*)"\s*$/.exec(l)).filter((m) => m !== null).map((m) => ({ line: `"${m![1]}" ${m![2]}`, agent: m![3] })),
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Reads an access log line count: GETs of `name`'s manifest (one per pull; tag listings are not). */
export function manifestGets(reg: TestRegistry, repo: string): number {
  return reg.requests().filter((l) => l.startsWith(`"GET /v2/${repo}/manifests/`)).length;
}

/** Manifest GETs of `repo` by pulls (podman), not by the up-front check (skopeo's manifest request). */
export function manifestPulls(reg: TestRegistry, repo: string): number {
  return reg.requestsBy().filter((r) => r.line.startsWith(`"GET /v2/${repo}/manifests/`) && !r.agent.startsWith('skopeo')).length;
}

/** A registry front that does not list tags (or limits it): what it refuses is answered as a registry would. */
export interface RefusingFront {
  host: string;
  /** Status for `/v2/<name>/tags/list` and for manifests (null: passed to the registry). */
  refuse: { tags: 404 | 429 | null; manifests: 404 | 429 | null };
  /** Every request: method, path, status answered, user agent. */
  seen: Array<{ method: string; path: string; status: number; agent: string }>;
  close(): Promise<void>;
}

const REFUSALS = {
  404: { code: 'UNSUPPORTED', message: 'The operation is unsupported.' },
  429: { code: 'TOOMANYREQUESTS', message: 'You have reached your request rate limit.' },
};

/** An HTTP front on 127.0.0.1 passing everything (auth included) to `target` but what `refuse` names. */
export async function startRefusingFront(target: string): Promise<RefusingFront> {
  const port = await freePort();
  const [thost, tport] = target.split(':');
  const front: RefusingFront = { host: `127.0.0.1:${port}`, refuse: { tags: 404, manifests: null }, seen: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    const p = req.url ?? '/';
    const entry = { method: req.method ?? '', path: p, status: 0, agent: String(req.headers['user-agent'] ?? '') };
    front.seen.push(entry);
    const refusal = /^\/v2\/.+\/tags\/list/.test(p) ? front.refuse.tags : /^\/v2\/.+\/manifests\//.test(p) ? front.refuse.manifests : null;
    if (refusal) {
      entry.status = refusal;
      res.writeHead(refusal, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ errors: [REFUSALS[refusal]] }));
    }
    const up = http.request({ host: thost, port: Number(tport), method: req.method, path: p, headers: req.headers }, (r) => {
      entry.status = r.statusCode ?? 0;
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      entry.status = 502;
      res.writeHead(502).end();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  front.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return front;
}
