// Attacker-test helpers for shell sandboxes: real Grove servers in child processes (shell-server.fixture.ts), a
// canary file on the host and a canary variable in the server's environment that nothing in a sandbox may read.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiCaller, type ApiAnswer } from '../shell-env/support.ts';

export const KEY = 'security-test-key-0123456789';

export interface Canary {
  dir: string;
  /** Host file (0600, root) holding `secret`. */
  file: string;
  secret: string;
  /** Put in the server's environment: GROVE_TEST_CANARY=<envSecret>. */
  envSecret: string;
}

export function makeCanary(): Canary {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-canary-'));
  const secret = `canary-file-${Math.random().toString(36).slice(2)}`;
  const file = path.join(dir, 'secret.txt');
  writeFileSync(file, secret, { mode: 0o600 });
  return { dir, file, secret, envSecret: `canary-env-${Math.random().toString(36).slice(2)}` };
}

export type Call = ApiAnswer;

export interface ChildServer {
  url: string;
  pid: number;
  child: ChildProcess;
  dataDir: string;
  call(method: string, url: string, body?: unknown): Promise<Call>;
  /** Creates a shell sandbox and waits until it is ready; returns its id. */
  sandbox(body?: Record<string, unknown>): Promise<string>;
  exec(id: string, command: string, extra?: Record<string, unknown>): Promise<any>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * fd on which the server holds a host file open without close-on-exec (as a careless launcher leaves one), with
 * `leakFile`. High: Node marks close-on-exec on the descriptors it inherited up to the first gap after 15 only.
 */
export const LEAK_FD = 200;

export async function startChildServer(opts: { dataDir?: string; env?: Record<string, string>; leakFile?: string } = {}): Promise<ChildServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'grove-sec-'));
  const server = [process.execPath, '--import', 'tsx', 'test/security/shell-server.fixture.ts', dataDir];
  const argv = opts.leakFile ? ['/bin/bash', '-c', `exec ${LEAK_FD}>>"$0"; exec "$@"`, opts.leakFile, ...server] : server;
  const child = spawn(argv[0], argv.slice(1), {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...opts.env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (b: Buffer) => {
      buf += b.toString();
      if (buf.includes('\n')) resolve(buf.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`server exited early (${code})`)));
  });
  const { url, pid } = JSON.parse(line) as { url: string; pid: number };
  const call = apiCaller(url, KEY);
  return {
    url,
    pid,
    child,
    dataDir,
    call,
    async sandbox(body = {}) {
      const created = await call('POST', '/sandboxes', { type: 'shell', ...body });
      if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
      const id = created.json.sandbox_id as string;
      const ready = await call('GET', `/sandboxes/${id}/wait?timeout=60`);
      if (ready.json.status !== 'ready') throw new Error(`sandbox not ready: ${ready.text}`);
      return id;
    },
    async exec(id, command, extra = {}) {
      const r = await call('POST', `/sandboxes/${id}/exec`, { command, ...extra });
      if (r.status !== 200) throw new Error(`exec failed: ${r.status} ${r.text}`);
      return r.json;
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
      // Our own data folder goes (a shared one is its creator's to remove).
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
