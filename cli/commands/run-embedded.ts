// The embedded Grove server of `grove run` / `grove demo` / the runner bench: the real server (startServer)
// on a free loopback port with a generated API key, inside this process.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, loadConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import { startServer } from '../../server/server.ts';

export interface EmbeddedGrove {
  url: string;
  apiKey: string;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  browserProcesses?: number;
  maxSandboxes?: number;
  /** Server data dir (downloads, browser profiles); a fresh temp dir by default. */
  dataDir?: string;
  logLevel?: GroveConfigInput['logLevel'];
  /** Environment for the layered config (GROVE_CHROMIUM_PATH, …); process.env when omitted. */
  env?: Record<string, string | undefined>;
  /** More settings of the server (e.g. clawEval: a Claw-Eval checkout for `grove harness run --claw-eval`). */
  flags?: Partial<GroveConfigInput>;
}

export async function startEmbeddedGrove(opts: EmbeddedOptions = {}): Promise<EmbeddedGrove> {
  const apiKey = generateApiKey();
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'grove-embedded-')));
  const config = loadConfig({
    env: opts.env,
    flags: {
      host: '127.0.0.1',
      port: 0,
      apiKey,
      dataDir,
      logLevel: opts.logLevel ?? 'error',
      ...(opts.browserProcesses !== undefined ? { browserProcesses: opts.browserProcesses } : {}),
      ...(opts.maxSandboxes !== undefined ? { maxSandboxes: opts.maxSandboxes } : {}),
      ...opts.flags,
    },
  });
  const server = await startServer(config, { logStream: process.stderr });
  return {
    url: server.url,
    apiKey,
    // The runner is this server's only client and closes it after its last request: connections still open then
    // belong to episodes it abandoned (Ctrl-C, a cap), whose handlers would hold a graceful close for the whole
    // shutdown timeout (15 s). They are cut at once; the sandboxes are closed by the server's shutdown as usual.
    close: () => {
      server.app.server.closeAllConnections();
      return server.close();
    },
  };
}

/** A Grove client: of the server at `server` (with its key), or of one embedded in this process. */
export async function connectGrove(o: { server?: string; serverKey?: string; maxSandboxes?: number; timeoutMs?: number; flags?: Partial<GroveConfigInput> }): Promise<{ client: import('../../client/index.ts').GroveClient; url: string; close(): Promise<void> }> {
  const { GroveClient } = await import('../../client/index.ts');
  const embedded = o.server ? undefined : await startEmbeddedGrove({ ...(o.maxSandboxes ? { maxSandboxes: o.maxSandboxes } : {}), ...(o.flags ? { flags: o.flags } : {}) });
  const client = new GroveClient({ baseUrl: o.server ?? embedded!.url, apiKey: o.server ? o.serverKey : embedded!.apiKey, timeoutMs: o.timeoutMs ?? 600_000 });
  return {
    client,
    url: o.server ?? embedded!.url,
    close: async () => {
      client.close();
      await embedded?.close();
    },
  };
}
