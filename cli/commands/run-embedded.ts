// The embedded Grove server of `grove run` / `claw run` / `harness run` / `grove demo` / the runner bench: the real
// server (startServer) on a free loopback port with a generated API key, inside this process. The data folder it
// makes for itself (`grove-embedded-*` in TMPDIR) goes when the server closes, also on SIGINT/SIGTERM.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { generateApiKey, loadConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import { startServer } from '../../server/server.ts';

export interface EmbeddedGrove {
  url: string;
  apiKey: string;
  /** Where the server keeps its data (given, or the temporary folder removed by close()). */
  dataDir: string;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  browserProcesses?: number;
  maxSandboxes?: number;
  /** Server data dir (downloads, browser profiles, shell sandboxes); a fresh temp dir by default, removed at close. */
  dataDir?: string;
  /**
   * Where server-side recordings (`record: true` sandboxes) go when the data dir is the temporary one: the run's
   * output folder, so nothing kept lives in a folder that close() removes.
   */
  recordingsDir?: string;
  logLevel?: GroveConfigInput['logLevel'];
  /** Environment for the layered config (GROVE_CHROMIUM_PATH, …); process.env when omitted. */
  env?: Record<string, string | undefined>;
  /** More settings of the server (e.g. clawEval: a Claw-Eval checkout for `grove harness run --claw-eval`). */
  flags?: Partial<GroveConfigInput>;
  /** false: shell (and claw) sandboxes only, no Chromium started (startServer's `browser`). */
  browser?: boolean;
}

const inside = (dir: string, p: string) => {
  const r = relative(resolve(dir), resolve(p));
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};

export async function startEmbeddedGrove(opts: EmbeddedOptions = {}): Promise<EmbeddedGrove> {
  const apiKey = generateApiKey();
  const own = opts.dataDir === undefined && opts.flags?.dataDir === undefined ? await mkdtemp(join(tmpdir(), 'grove-embedded-')) : undefined;
  try {
    const loaded = loadConfig({
      env: opts.env,
      flags: {
        host: '127.0.0.1',
        port: 0,
        apiKey,
        dataDir: own ?? opts.dataDir,
        logLevel: opts.logLevel ?? 'error',
        ...(opts.browserProcesses !== undefined ? { browserProcesses: opts.browserProcesses } : {}),
        ...(opts.maxSandboxes !== undefined ? { maxSandboxes: opts.maxSandboxes } : {}),
        ...opts.flags,
      },
    });
    // Recordings default to <dataDir>/recordings: never inside the folder close() removes when the run has an output.
    const config = own && opts.recordingsDir && inside(own, loaded.recordingsDir) ? { ...loaded, recordingsDir: resolve(opts.recordingsDir) } : loaded;
    const server = await startServer(config, { logStream: process.stderr, ...(opts.browser === false ? { browser: false } : {}) });
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        // The runner is this server's only client and closes it after its last request: connections still open then
        // belong to episodes it abandoned (Ctrl-C, a cap), whose handlers would hold a graceful close for the whole
        // shutdown timeout (15 s). They are cut at once; the sandboxes are closed by the server's shutdown as usual.
        server.app.server.closeAllConnections();
        try {
          await server.close();
        } finally {
          if (own) {
            unwatchSignals(close);
            await rm(own, { recursive: true, force: true, maxRetries: 3 });
          }
        }
      })());
    if (own) watchSignals(close);
    return { url: server.url, apiKey, dataDir: config.dataDir, close };
  } catch (err) {
    if (own) await rm(own, { recursive: true, force: true });
    throw err;
  }
}

// SIGINT/SIGTERM: a command that handles the signal itself (grove run's Ctrl-C stops the run and writes the summary)
// closes the server on its way out. A signal nobody else handles would end the process with the folder left behind:
// then the open embedded servers are closed (their folders removed) first, and the process ends by the same signal.
const onSignals = new Set<() => Promise<void>>();
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

function onSignal(signal: NodeJS.Signals): void {
  // Ours runs first (prepended): a command's own listener is still registered now, even a `once` one.
  if (process.listenerCount(signal) > 1) return;
  for (const s of SIGNALS) process.off(s, onSignal);
  const closes = [...onSignals];
  onSignals.clear();
  void Promise.allSettled(closes.map((c) => c())).then(() => process.kill(process.pid, signal));
}

function watchSignals(close: () => Promise<void>): void {
  if (onSignals.size === 0) for (const s of SIGNALS) process.prependListener(s, onSignal);
  onSignals.add(close);
}

function unwatchSignals(close: () => Promise<void>): void {
  if (onSignals.delete(close) && onSignals.size === 0) for (const s of SIGNALS) process.off(s, onSignal);
}

/** A Grove client: of the server at `server` (with its key), or of one embedded in this process. */
export async function connectGrove(o: { server?: string; serverKey?: string; maxSandboxes?: number; timeoutMs?: number; recordingsDir?: string; flags?: Partial<GroveConfigInput>; browser?: boolean }): Promise<{ client: import('../../client/index.ts').GroveClient; url: string; close(): Promise<void> }> {
  const { GroveClient } = await import('../../client/index.ts');
  const embedded = o.server ? undefined : await startEmbeddedGrove({ ...(o.maxSandboxes ? { maxSandboxes: o.maxSandboxes } : {}), ...(o.recordingsDir ? { recordingsDir: o.recordingsDir } : {}), ...(o.flags ? { flags: o.flags } : {}), ...(o.browser === false ? { browser: false } : {}) });
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
