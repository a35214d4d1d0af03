// The options of `grove serve` (and `grove worker`, which takes the same): each flag maps onto one key of the
// layered config (sandbox/config.ts); numbers are parsed here so a bad value names the flag.
import { parseArgs } from 'node:util';
import { ConfigError, type GroveConfigInput } from '../../sandbox/config.ts';

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
  'warm-pool-max-mb': { key: 'warmPoolMaxMb', kind: 'number' },
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
  'claw-eval': { key: 'clawEval', kind: 'string' },
  'claw-eval-cache': { key: 'clawEvalCache', kind: 'string' },
  'claw-eval-index-url': { key: 'clawEvalIndexUrl', kind: 'string' },
  'claw-eval-user-url': { key: 'clawEvalUserUrl', kind: 'string' },
  'claw-eval-user-model': { key: 'clawEvalUserModel', kind: 'string' },
  'shell-isolation': { key: 'shellIsolation', kind: 'string' },
};

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
    'unsafe-shell-isolation-pod': { type: 'boolean' },
    'no-frame-cache': { type: 'boolean' },
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
  if (values['unsafe-shell-isolation-pod'] === true) flags.unsafeShellIsolationPod = true;
  if (values['no-frame-cache'] === true) flags.frameCache = false;
  return { flags: flags as Partial<GroveConfigInput>, configFile: typeof values.config === 'string' ? values.config : undefined };
}

