// `grove serve`: run the REST service until SIGINT/SIGTERM. Flags map onto the layered config.
import { parseArgs } from 'node:util';
import { ConfigError, configHelp, loadConfig, type GroveConfig, type GroveConfigInput } from '../../sandbox/config.ts';
import type { Command } from '../command.ts';

/** Flag → config key. Numbers are parsed here so a bad value names the flag. */
const FLAGS: Record<string, { key: keyof GroveConfigInput; kind: 'string' | 'number' }> = {
  host: { key: 'host', kind: 'string' },
  port: { key: 'port', kind: 'number' },
  'api-key': { key: 'apiKey', kind: 'string' },
  'max-sandboxes': { key: 'maxSandboxes', kind: 'number' },
  'default-ttl': { key: 'defaultTtlSeconds', kind: 'number' },
  'idle-timeout': { key: 'idleTimeoutSeconds', kind: 'number' },
  'reaper-interval-ms': { key: 'reaperIntervalMs', kind: 'number' },
  'chromium-path': { key: 'chromiumPath', kind: 'string' },
  'browser-processes': { key: 'browserProcesses', kind: 'number' },
  'recycle-after': { key: 'recycleAfter', kind: 'number' },
  'warm-pool': { key: 'warmPool', kind: 'number' },
  'data-dir': { key: 'dataDir', kind: 'string' },
  'body-limit': { key: 'bodyLimit', kind: 'number' },
  'log-level': { key: 'logLevel', kind: 'string' },
  'recordings-dir': { key: 'recordingsDir', kind: 'string' },
  'shutdown-timeout-ms': { key: 'shutdownTimeoutMs', kind: 'number' },
  backend: { key: 'backend', kind: 'string' },
  'k8s-config': { key: 'k8sConfig', kind: 'string' },
  'task-files': { key: 'taskFiles', kind: 'string' },
  'judge-url': { key: 'judgeUrl', kind: 'string' },
  'judge-model': { key: 'judgeModel', kind: 'string' },
};

const usage = `grove serve [options]

Runs the Grove REST service (browser sandboxes on a local Chromium pool) until SIGINT/SIGTERM, then closes
every sandbox and browser and exits 0.

Options (precedence: flags > GROVE_* environment > --config file > defaults):
  --config FILE              JSON file of settings (camelCase keys below); also GROVE_CONFIG
  --host H                   bind address (default 127.0.0.1)
  --port N                   port (default 8321; 0 = any free port)
  --api-key KEY              required X-API-Key (default: GROVE_API_KEY, else generated and logged once)
  --no-auth                  disable authentication (explicit only; loopback host only, loopback Host headers only)
  --unsafe-no-auth-remote    allow --no-auth with a non-loopback --host (an open server; logged loudly)
  --max-sandboxes N          live sandbox limit (503 capacity_exhausted beyond it)
  --warm-pool N              ready browser contexts kept warm
  --default-ttl S            sandbox lifetime in seconds      --idle-timeout S   idle expiry in seconds
  --browser-processes N      Chromium processes               --recycle-after N  contexts per process
  --chromium-path PATH       --data-dir DIR    --recordings-dir DIR    --log-level LEVEL
  --body-limit BYTES         --reaper-interval-ms MS          --shutdown-timeout-ms MS
  --backend local|kubernetes sandboxes in this process, or on worker pods (docs/kubernetes.md)
  --k8s-config FILE          settings of the kubernetes backend (JSON; see grove k8s render)
  --task-files SUITE=PATH[,SUITE=PATH]   task files sandboxes may name with task: {suite, id}
  --judge-url URL --judge-model NAME     LLM judge for POST /sandboxes/{id}/evaluate (key: GROVE_JUDGE_API_KEY)

Settings and their environment variables:
${configHelp()}

Exit codes: 0 after a clean shutdown, 1 when the server failed, 2 on bad options, 130 on a forced stop.`;

export interface ServeArgs {
  flags: Partial<GroveConfigInput>;
  configFile?: string;
}

/** Parses serve's argv into config flags; throws ConfigError naming the flag on bad input. */
export function parseServeArgs(argv: string[]): ServeArgs {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    config: { type: 'string' },
    'no-auth': { type: 'boolean' },
    'unsafe-no-auth-remote': { type: 'boolean' },
  };
  for (const name of Object.keys(FLAGS)) options[name] = { type: 'string' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options, allowPositionals: false, strict: true }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message} (see grove help serve)`);
  }
  const flags: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(FLAGS)) {
    const v = values[name];
    if (typeof v !== 'string') continue;
    if (spec.kind === 'number') {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`--${name}: expected a number, got "${v}"`);
      flags[spec.key] = n;
    } else {
      flags[spec.key] = v;
    }
  }
  if (values['no-auth'] === true) flags.authDisabled = true;
  if (values['unsafe-no-auth-remote'] === true) flags.unsafeNoAuthRemote = true;
  return { flags: flags as Partial<GroveConfigInput>, configFile: typeof values.config === 'string' ? values.config : undefined };
}

export const serve: Command = {
  name: 'serve',
  summary: 'Run the REST service (browser sandboxes) until SIGINT/SIGTERM',
  usage,
  async run(argv) {
    let config: GroveConfig;
    try {
      const args = parseServeArgs(argv);
      config = loadConfig({ flags: args.flags, configFile: args.configFile });
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`grove serve: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
    // tsx turns on source-mapped stack traces; Playwright captures a stack on every API call, so mapping them
    // cost ~0.6 ms of server CPU per step (measured with --cpu-prof). Stacks in a serving process keep the
    // transpiled positions unless GROVE_SOURCE_MAPS=1.
    if (process.env.GROVE_SOURCE_MAPS !== '1') process.setSourceMapsEnabled(false);
    // Loaded here so `grove --help` and option errors do not pay for fastify and Playwright.
    const { closeOnSignal, startServer } = await import('../../server/server.ts');
    let server;
    try {
      server = await startServer(config, config.backend === 'kubernetes' ? { environments: await kubernetesEnvironmentsFor(config) } : {});
    } catch (err) {
      process.stderr.write(`grove serve: could not start: ${(err as Error).message}\n`);
      return err instanceof ConfigError ? 2 : 1;
    }
    const auth = config.authDisabled
      ? 'auth DISABLED'
      : config.apiKeySource === 'generated'
        ? `generated API key: ${config.apiKey}`
        : `API key from ${config.apiKeySource}`;
    // The signal handlers go in before "listening" is printed: a supervisor that stops the server as soon as it
    // reads that line gets a clean shutdown, not Node's default death by SIGTERM.
    const closed = closeOnSignal(server);
    process.stderr.write(`grove serve: listening on ${server.url} (${auth})\n`);
    const { forced } = await closed;
    return forced ? 130 : 0;
  },
};

/** The orchestrator's environments: worker pods through the Kubernetes API (secrets from the environment). */
async function kubernetesEnvironmentsFor(config: GroveConfig) {
  const [{ loadK8sConfig }, { kubernetesEnvironments, readSecretValue, startKubernetesBackend }, { readEnvSetting }, { hostname }] = await Promise.all([
    import('../../k8s/config.ts'),
    import('../../k8s/environments.ts'),
    import('../../sandbox/config.ts'),
    import('node:os'),
  ]);
  const secret = readEnvSetting('GROVE_K8S_TOKEN_SECRET');
  if (!secret) throw new ConfigError('the kubernetes backend needs GROVE_K8S_TOKEN_SECRET (the secret worker tokens are derived from)');
  const backend = await startKubernetesBackend({
    config: loadK8sConfig(config.k8sConfig),
    replicaId: readEnvSetting('GROVE_K8S_REPLICA_ID') ?? hostname(),
    tokenSecret: readSecretValue(secret),
    defaultTtlSeconds: config.defaultTtlSeconds,
    log: stderrLogger('kubernetes'),
  });
  return kubernetesEnvironments(backend);
}

/** Warnings and errors of the backend as JSON lines on stderr (the app's logger does not exist yet at this point). */
function stderrLogger(component: string) {
  const line = (level: string) => (obj: unknown, msg?: string) =>
    process.stderr.write(JSON.stringify({ level, time: Date.now(), component, msg, ...(typeof obj === 'object' && obj ? obj : { detail: obj }) }) + '\n');
  return { debug() {}, info: line('info'), warn: line('warn'), error: line('error') };
}
