// `grove serve`: run the REST service until SIGINT/SIGTERM. Flags map onto the layered config (serve-args.ts);
// the startup is startup.ts', shared with `grove worker`.
import { ConfigError, configHelp, type GroveConfig } from '../../sandbox/config.ts';
import type { Command } from '../command.ts';
import { runServer } from './startup.ts';

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
  --warm-pool N              ready browser contexts kept warm at least
  --warm-pool-max-mb MB      memory for the warm contexts learned from waves of creates (default 1024; 0: off)
  --no-frame-cache           every observation captures, unless a sandbox asks for frame_cache: true (the
                             default; GROVE_FRAME_CACHE=1 makes an unchanged page answer its last capture again)
  --default-ttl S            sandbox lifetime in seconds      --idle-timeout S   idle expiry in seconds
  --browser-processes N      Chromium processes               --recycle-after N  contexts per process
  --chromium-path PATH       --data-dir DIR    --recordings-dir DIR    --log-level LEVEL
  --body-limit BYTES         --reaper-interval-ms MS          --shutdown-timeout-ms MS
  --backend local|kubernetes sandboxes in this process, or on worker pods (docs/kubernetes.md)
  --k8s-config FILE          settings of the kubernetes backend (JSON; see grove k8s render)
  --task-files SUITE=PATH[,SUITE=PATH]   task files sandboxes may name with task: {suite, id}
  --judge-url URL --judge-model NAME     LLM judge for POST /sandboxes/{id}/evaluate (key: GROVE_JUDGE_API_KEY)
  --claw-eval DIR                        a Claw-Eval checkout: {type: "claw", claw_eval_task: ID} runs its task with
                                         its own services and grader.py (/claw-eval/*, MCP); judged tasks use
                                         --judge-url; its Python env from --claw-eval-index-url, cached under
                                         --claw-eval-cache DIR (~/.cache/grove); tasks with sandbox tools get a
                                         shell sandbox of this server; user_agent tasks answer the agent with
                                         the checkout's simulated user on --claw-eval-user-url URL
                                         --claw-eval-user-model M (key: GROVE_CLAW_EVAL_USER_KEY)
  --shell-isolation bwrap|pod            shell sandboxes in bubblewrap (default), or pod: for grove worker in a
                                         Kubernetes pod only (the pod is the boundary; docs/kubernetes.md)
  --unsafe-shell-isolation-pod           allow --shell-isolation pod outside a worker pod (commands unconfined)

Settings and their environment variables:
${configHelp()}

Exit codes: 0 after a clean shutdown, 1 when the server failed, 2 on bad options, 130 on a forced stop.`;

export const serve: Command = {
  name: 'serve',
  summary: 'Run the REST service (browser sandboxes) until SIGINT/SIGTERM',
  usage,
  run: (argv) =>
    runServer(argv, {
      name: 'serve',
      serverOptions: async (config) => (config.backend === 'kubernetes' ? { environments: await kubernetesEnvironmentsFor(config) } : {}),
      banner: (config) =>
        config.authDisabled
          ? 'auth DISABLED'
          : config.apiKeySource === 'generated'
            ? `generated API key: ${config.apiKey}`
            : `API key from ${config.apiKeySource}`,
    }),
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
    defaultIdleSeconds: config.idleTimeoutSeconds,
    log: stderrLogger('kubernetes'),
  });
  // Claw-Eval episodes on claw-eval pods: checked, graded and their simulated users answered here (its checkout).
  const clawEval = config.clawEval ? (await import('../../server/claw-eval-pods.ts')).clawEvalOnOrchestrator(config, stderrLogger('claw-eval')) : undefined;
  backend.clawEval = clawEval;
  const envs = kubernetesEnvironments(backend);
  const claw = envs.claw;
  if (clawEval && claw) envs.claw = { ...claw, shutdown: () => claw.shutdown().finally(() => clawEval.close()) };
  return envs;
}

/** Warnings and errors of the backend as JSON lines on stderr (the app's logger does not exist yet at this point). */
function stderrLogger(component: string) {
  const line = (level: string) => (obj: unknown, msg?: string) =>
    process.stderr.write(JSON.stringify({ level, time: Date.now(), component, msg, ...(typeof obj === 'object' && obj ? obj : { detail: obj }) }) + '\n');
  return { debug() {}, info: line('info'), warn: line('warn'), error: line('error') };
}
