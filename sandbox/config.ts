// Layered configuration: defaults < JSON config file < GROVE_* environment < CLI flags.
// This is the ONLY module that reads process.env; everything else receives a GroveConfig.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isLoopbackBind } from './host-guard.ts';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const GroveConfigSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8321),
    /** Required on every request (X-API-Key) unless auth is disabled. Generated at startup when absent. */
    apiKey: z.string().min(8, 'apiKey must be at least 8 characters').optional(),
    /** Only an explicit `--no-auth` / GROVE_AUTH_DISABLED=1 turns authentication off. */
    authDisabled: z.boolean().default(false),
    /** With authDisabled, also allow a non-loopback host (an open server: anyone who reaches it controls it). */
    unsafeNoAuthRemote: z.boolean().default(false),
    /** Per browser sandbox: open tabs at most (popups beyond it are closed and reported as a limit event). */
    maxTabs: z.number().int().min(1).max(1000).default(20),
    /** Per browser sandbox: downloads kept at most (later ones are cancelled). */
    maxDownloads: z.number().int().min(0).max(100_000).default(50),
    /** Per download: bytes at most (a larger file is deleted and reported as failed). */
    maxDownloadBytes: z.number().int().min(1).max(64 * 1024 * 1024 * 1024).default(256 * 1024 * 1024),
    maxSandboxes: z.number().int().min(1).max(10_000).default(32),
    /** Admission control (sandbox/admission.ts): browser sandboxes started at once; more wait in a queue. */
    maxStarting: z.number().int().min(1).max(1024).default(4),
    /** Creates waiting for a start slot at most; beyond it 503 overloaded. */
    startQueue: z.number().int().min(0).max(10_000).default(32),
    /** Refuse browser creates (503 overloaded) while the event loop runs this late (ms, p90 over 30 s; 0: never). */
    overloadLoopLagMs: z.number().int().min(0).max(600_000).default(500),
    /** ... while screenshot captures take this long (ms, p90 over 30 s; 0: never). */
    overloadCaptureMs: z.number().int().min(0).max(600_000).default(2500),
    /** ... while steps use this share of their deadline (p90 over 30 s; 0: never). */
    overloadStepShare: z.number().min(0).max(1).default(0.5),
    defaultTtlSeconds: z.number().int().min(1).max(7 * 86400).default(3600),
    idleTimeoutSeconds: z.number().int().min(1).max(86400).default(600),
    reaperIntervalMs: z.number().int().min(10).max(3_600_000).default(5000),
    chromiumPath: z.string().min(1).default('/usr/bin/chromium'),
    browserProcesses: z.number().int().min(1).max(64).default(2),
    recycleAfter: z.number().int().min(1).max(100_000).default(50),
    warmPool: z.number().int().min(0).max(256).default(0),
    /** Memory budget of the warm contexts the pool learns from waves of creates (their peak size), MiB; 0: only warmPool. */
    warmPoolMaxMb: z.number().int().min(0).max(1024 * 1024).default(1024),
    /** The frame cache for browser sandboxes that do not say (`frame_cache`); GROVE_FRAME_CACHE=1 turns it on. Off by
     * default: on pages that paint at every step (the throughput block's) it cost steps/s, 0.82 with it against 0.93
     * without at 16 sandboxes (bench quick runs side by side, load ~5, 2026-12-04); it pays where steps do not paint. */
    frameCache: z.boolean().default(false),
    dataDir: z.string().min(1).default('./.grove'),
    /** Largest accepted request body, bytes. */
    bodyLimit: z.number().int().min(1024).max(1024 * 1024 * 1024).default(10 * 1024 * 1024),
    logLevel: z.enum(LOG_LEVELS).default('info'),
    /** Where recorded episodes go; defaults to <dataDir>/recordings. */
    recordingsDir: z.string().min(1).optional(),
    /** Grace for in-flight requests and sandbox closing at shutdown. */
    shutdownTimeoutMs: z.number().int().min(100).max(600_000).default(15_000),
    /** Shell sandboxes: image name → local root file system directory (GROVE_SHELL_IMAGES as JSON). */
    shellImages: z.record(z.string().min(1), z.string().min(1)).default({}),
    /** Shell sandboxes run as uids shellUidBase .. shellUidBase+9999, one per live sandbox. */
    shellUidBase: z.number().int().min(1000).max(4_000_000_000).default(61_000),
    /** Default per-sandbox limits (a create request may ask for its own). */
    shellCpu: z.number().min(0.05).max(256).default(1),
    shellMemoryMb: z.number().int().min(16).max(4 * 1024 * 1024).default(2048),
    shellMaxProcesses: z.number().int().min(8).max(65_536).default(256),
    /** Disk of a shell sandbox (/workspace + /tmp + /var/tmp, a sparse image: costs only what is used), MiB. */
    shellDiskMb: z.number().int().min(64).max(1024 * 1024).default(8192),
    /** Egress proxy of a shell sandbox without block_network: connections open at once, at most (beyond: 503,
     * closed), and seconds without a byte either way before a connection is closed. */
    shellEgressMaxConnections: z.number().int().min(1).max(65_536).default(128),
    shellEgressIdleTimeoutS: z.number().int().min(1).max(86_400).default(300),
    /** Bytes kept per output stream of an exec unless the request asks for fewer or more. */
    shellMaxOutputBytes: z.number().int().min(64).max(64 * 1024 * 1024).default(1024 * 1024),
    /** Largest file a download answers / an upload writes. */
    shellMaxFileBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
    /** Exec timeout when a request names none, seconds. */
    shellExecTimeoutS: z.number().min(1).max(86_400).default(300),
    /** How shell sandboxes are isolated: `bwrap` (namespaces, needs root) or `pod` (a Kubernetes worker pod is the
     * boundary: commands run as the pod's user without namespaces; only `grove worker` takes it unless forced). */
    shellIsolation: z.enum(['bwrap', 'pod']).default('bwrap'),
    /** Allow shellIsolation `pod` outside a worker pod (commands then run as the server's own user, unconfined). */
    unsafeShellIsolationPod: z.boolean().default(false),
    /** shellIsolation `pod`: the directory behind /workspace (the pod's emptyDir) and what the pod's NetworkPolicy
     * allows (`deny`: no egress; `internet`: public addresses). */
    shellPodWorkspace: z.string().min(1).default('/workspace'),
    shellPodNetwork: z.enum(['deny', 'internet']).default('deny'),
    /** Where sandboxes run: this process (`local`) or worker pods (`kubernetes`, configured by k8sConfig). */
    backend: z.enum(['local', 'kubernetes']).default('local'),
    /** JSON file of the kubernetes backend's settings (k8s/config.ts); defaults apply without it. */
    k8sConfig: z.string().min(1).optional(),
    /** Task files sandboxes may name with `task: {suite, id}`: "suite=path[,suite=path...]" (offline sites are built in). */
    taskFiles: z.string().optional(),
    /** The LLM judge endpoint (OpenAI-compatible base URL) and model for POST /sandboxes/{id}/evaluate of web suites. */
    judgeUrl: z.string().url().optional(),
    judgeModel: z.string().min(1).optional(),
    judgeApiKey: z.string().min(1).optional(),
    /** A Claw-Eval checkout (tasks/<id>/task.yaml + grader.py, mock_services/, src/claw_eval): claw sandboxes created
     * with `claw_eval_task` run its tasks with its own services and graders. Its Python environment is built once from
     * clawEvalIndexUrl (default: pip's configuration) and cached under clawEvalCache (default ~/.cache/grove). */
    clawEval: z.string().min(1).optional(),
    clawEvalCache: z.string().min(1).optional(),
    clawEvalIndexUrl: z.string().min(1).optional(),
    /** The simulated user of its multi-turn (user_agent) tasks: an OpenAI-compatible endpoint and model, called
     * through Grove's model client (Claw-Eval's user_agent_model). */
    clawEvalUserUrl: z.string().url().optional(),
    clawEvalUserModel: z.string().min(1).optional(),
    clawEvalUserKey: z.string().min(1).optional(),
    /** `pod`: the checkout's services start without bubblewrap, the pod being their boundary. Only a Claw-Eval worker
     * pod (`grove worker`, set in its pod spec) takes it; any other server refuses to start with it. */
    clawEvalIsolation: z.enum(['bwrap', 'pod']).default('bwrap'),
    /** OpenEnv protocol (openenv/): sessions open at once at most (default: maxSandboxes; beyond: CAPACITY_REACHED). */
    openenvMaxSessions: z.number().int().min(1).max(10_000).optional(),
    /** OpenEnv sessions idle this long are closed with their sandbox, seconds. */
    openenvIdleTimeoutS: z.number().int().min(1).max(86_400).default(600),
  })
  .strict();

export type GroveConfigInput = z.input<typeof GroveConfigSchema>;
export type GroveConfig = Omit<z.output<typeof GroveConfigSchema>, 'recordingsDir'> & {
  recordingsDir: string;
  /** Where apiKey came from; 'generated' means the server must log it once at startup. */
  apiKeySource: 'flag' | 'env' | 'file' | 'generated' | 'none';
};

export type ConfigKey = keyof GroveConfigInput;
const KEYS = Object.keys(GroveConfigSchema.shape) as ConfigKey[];

/** Bad configuration: the message names the setting and its source. */
export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** camelCase key → GROVE_UPPER_SNAKE environment variable. */
export function envName(key: ConfigKey): string {
  return 'GROVE_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();
}

const STRING_KEYS = new Set<ConfigKey>(['host', 'apiKey', 'chromiumPath', 'dataDir', 'logLevel', 'recordingsDir', 'backend', 'k8sConfig', 'taskFiles', 'judgeUrl', 'judgeModel', 'judgeApiKey', 'clawEval', 'clawEvalCache', 'clawEvalIndexUrl', 'clawEvalUserUrl', 'clawEvalUserModel', 'clawEvalUserKey', 'clawEvalIsolation', 'shellIsolation', 'shellPodWorkspace', 'shellPodNetwork']);
const BOOLEAN_KEYS = new Set<ConfigKey>(['authDisabled', 'unsafeNoAuthRemote', 'unsafeShellIsolationPod', 'frameCache']);
const JSON_KEYS = new Set<ConfigKey>(['shellImages']);
const NUMBER_KEYS = new Set<ConfigKey>(KEYS.filter((k) => !STRING_KEYS.has(k) && !BOOLEAN_KEYS.has(k) && !JSON_KEYS.has(k)));

function coerce(key: ConfigKey, raw: string, where: string): unknown {
  if (JSON_KEYS.has(key)) {
    try {
      return JSON.parse(raw) as unknown;
    } catch (err) {
      throw new ConfigError(`${where}: expected JSON, got "${raw}" (${(err as Error).message})`);
    }
  }
  if (BOOLEAN_KEYS.has(key)) {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off|)$/i.test(raw)) return false;
    throw new ConfigError(`${where}: expected a boolean (1/0/true/false), got "${raw}"`);
  }
  if (NUMBER_KEYS.has(key)) {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`${where}: expected a number, got "${raw}"`);
    return n;
  }
  return raw;
}

function describeIssues(error: z.ZodError, source: (key: string) => string): string {
  return error.issues
    .map((i) => {
      if (i.code === 'unrecognized_keys') return `unknown setting(s) ${i.keys.map((k) => `"${k}"`).join(', ')} (known: ${KEYS.join(', ')})`;
      const key = String(i.path[0] ?? '');
      return `${key} (from ${source(key)}): ${i.message}`;
    })
    .join('; ');
}

export interface LoadConfigOptions {
  /** Values from CLI flags (highest precedence). */
  flags?: Partial<GroveConfigInput>;
  /** Config file path (`--config`); falls back to GROVE_CONFIG. */
  configFile?: string;
  /** Environment to read; defaults to process.env. Tests pass their own. */
  env?: Record<string, string | undefined>;
}

/**
 * Resolves the configuration once at startup and checks option combinations.
 * Throws ConfigError with a message that names the setting and where it came from.
 */
export function loadConfig(opts: LoadConfigOptions = {}): GroveConfig {
  const env = opts.env ?? process.env;
  const origin: Record<string, string> = {};

  let fileValues: Record<string, unknown> = {};
  const file = opts.configFile ?? env.GROVE_CONFIG;
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`config file ${file}: cannot be read (${(err as Error).message})`);
    }
    try {
      fileValues = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`config file ${file}: not valid JSON (${(err as Error).message})`);
    }
    if (typeof fileValues !== 'object' || fileValues === null || Array.isArray(fileValues)) {
      throw new ConfigError(`config file ${file}: expected a JSON object of settings`);
    }
    for (const k of Object.keys(fileValues)) origin[k] = `config file ${file}`;
  }

  const envValues: Record<string, unknown> = {};
  for (const key of KEYS) {
    const name = envName(key);
    const raw = env[name];
    if (raw === undefined) continue;
    envValues[key] = coerce(key, raw, name);
    origin[key] = `environment ${name}`;
  }

  const flagValues: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts.flags ?? {})) {
    if (v === undefined) continue;
    flagValues[k] = v;
    origin[k] = 'command-line flag';
  }

  const merged = { ...fileValues, ...envValues, ...flagValues };
  const parsed = GroveConfigSchema.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(`invalid configuration: ${describeIssues(parsed.error, (k) => origin[k] ?? 'defaults')}`);
  }
  const c = parsed.data;

  // Option combinations, checked once here so the server never starts half-configured.
  if (c.authDisabled && c.apiKey) {
    throw new ConfigError(
      `apiKey (from ${origin.apiKey}) and authDisabled (from ${origin.authDisabled}) contradict each other: drop one of them`,
    );
  }
  if (c.authDisabled && !isLoopbackBind(c.host) && !c.unsafeNoAuthRemote) {
    throw new ConfigError(
      `authDisabled (from ${origin.authDisabled}) with host ${c.host} (from ${origin.host ?? 'defaults'}) would let anyone who can reach ` +
        'the port drive sandboxes (and, through allowed hosts, the network): set an apiKey, bind to 127.0.0.1, or pass ' +
        '--unsafe-no-auth-remote (GROVE_UNSAFE_NO_AUTH_REMOTE=1) if you really mean it',
    );
  }
  if (c.warmPool > c.maxSandboxes) {
    throw new ConfigError(`warmPool (${c.warmPool}) cannot exceed maxSandboxes (${c.maxSandboxes})`);
  }
  if (c.reaperIntervalMs > c.idleTimeoutSeconds * 1000) {
    throw new ConfigError(
      `reaperIntervalMs (${c.reaperIntervalMs}) is longer than idleTimeoutSeconds (${c.idleTimeoutSeconds}s): idle sandboxes would outlive their timeout`,
    );
  }

  if ((c.judgeUrl === undefined) !== (c.judgeModel === undefined)) {
    throw new ConfigError('judgeUrl and judgeModel go together: the LLM judge needs both an endpoint and a model');
  }
  for (const entry of (c.taskFiles ?? '').split(',').filter((e) => e.trim())) {
    if (!/^[^=]+=.+/.test(entry.trim())) throw new ConfigError(`taskFiles (from ${origin.taskFiles}): "${entry}" is not suite=path`);
  }

  let apiKeySource: GroveConfig['apiKeySource'] = 'none';
  let apiKey = c.apiKey;
  if (apiKey) {
    const o = origin.apiKey ?? '';
    apiKeySource = o.startsWith('environment') ? 'env' : o.startsWith('config file') ? 'file' : 'flag';
  } else if (!c.authDisabled) {
    apiKey = generateApiKey();
    apiKeySource = 'generated';
  }
  return {
    ...c,
    apiKey,
    apiKeySource,
    recordingsDir: c.recordingsDir ?? `${c.dataDir.replace(/\/+$/, '')}/recordings`,
  };
}

export function generateApiKey(): string {
  return 'grv_' + randomBytes(24).toString('base64url');
}

/** Human-readable list of the settings for `grove help serve`. */
/** Defaults computed at load time (loadConfig), shown in the help instead of a bare "-". */
const DERIVED_DEFAULTS: Partial<Record<ConfigKey, string>> = {
  apiKey: '(generated and printed at start)',
  recordingsDir: '<dataDir>/recordings',
};

export function configHelp(): string {
  return KEYS.map((k) => {
    const s = GroveConfigSchema.shape[k];
    const def = DERIVED_DEFAULTS[k] ?? (s.def.type === 'default' ? JSON.stringify((s.def as { defaultValue: unknown }).defaultValue) : '(none)');
    return `  ${k.padEnd(20)} ${envName(k).padEnd(28)} default ${def}`;
  }).join('\n');
}

/**
 * A secret or setting that belongs to another component (e.g. a judge's model key), read here so that
 * process.env stays in this one module. Returns undefined when unset or empty.
 */
export function readEnvSetting(name: string, env: Record<string, string | undefined> = process.env): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The environment of a child process Grove starts (Chromium): the server's own, with `overrides` on top. Read here
 * so that process.env stays in this one module.
 */
export function childProcessEnv(overrides: Record<string, string> = {}, env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return { ...out, ...overrides };
}
