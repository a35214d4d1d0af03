// Boots the service: builds the browser environment and the app, listens, and shuts down gracefully
// (closes every sandbox and the Chromium pool) on SIGINT/SIGTERM. Nothing else lives here.
import { mkdirSync } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createBrowserEnvironment } from '../browser-env/index.ts';
import { createPodShellEnvironment, createShellEnvironment, shellAvailability, type ShellEnvironment } from '../shell-env/index.ts';
import { ConfigError, type GroveConfig } from '../sandbox/config.ts';
import type { LocalEnvironments } from '../sandbox/local-backend.ts';
import type { Logger } from '../sandbox/log.ts';
import { ClawEnvironment } from '../claw-env/sandbox.ts';
import { clawEvalHostFor } from '../episodes/claw-eval.ts';
import { buildApp } from './app.ts';
import { equipClawEvalHost } from './claw-eval.ts';
import { registerWorkerRoutes } from './worker-routes.ts';

export interface RunningServer {
  app: FastifyInstance;
  /** http://host:port actually bound (port 0 resolved). */
  url: string;
  /** Graceful stop: refuses new work, closes sandboxes and the browser pool. Idempotent. */
  close(): Promise<void>;
}

export interface StartServerOptions {
  /** Replace the environments (default: a browser environment built from the config). */
  environments?: LocalEnvironments;
  /** Where the server log goes (default stdout). */
  logStream?: NodeJS.WritableStream;
  /** Worker mode (`grove worker`): also serve the routes only an orchestrator calls (server/worker-routes.ts). */
  worker?: boolean;
  /** Worker mode: serve POST /worker/exit, which calls this (a paired shell's worker, k8s/paired-shell.ts). */
  workerExit?: () => void;
  /** false: no browser environment, no Chromium started or needed (a server for shell sandboxes, as `grove swe run`
   * embeds); browser sandboxes are then refused as unsupported_sandbox_type. Default true. */
  browser?: boolean;
}

export async function startServer(config: GroveConfig, opts: StartServerOptions = {}): Promise<RunningServer> {
  // Environments handed in (e.g. the kubernetes backend's worker pods) need no Chromium in this process, nor does a
  // shell pod's worker (`pod` isolation: the pod serves its one shell sandbox, often on an image without Chromium).
  // Claw-Eval services without bubblewrap: a Claw-Eval worker pod only (the pod is their boundary), never a server a
  // client talks to directly, and with no override (a create body cannot ask for it: it is this setting alone).
  const clawEvalPod = config.clawEvalIsolation === 'pod';
  if (clawEvalPod && opts.worker !== true) {
    throw new ConfigError('clawEvalIsolation "pod" is for Claw-Eval worker pods (grove worker in a pod the orchestrator made), where the pod is the services\' boundary; here they would run unconfined as this server\'s user. Use bwrap (the default).');
  }
  if (clawEvalPod && !config.clawEval) throw new ConfigError('clawEvalIsolation "pod" needs the checkout (--claw-eval DIR) in the pod.');
  // A shell pod's or a Claw-Eval pod's worker needs no browser (their images may lack Chromium).
  const shellPod = opts.worker === true && (config.shellIsolation === 'pod' || clawEvalPod);
  const browser = opts.browser !== false && !shellPod;
  if (!opts.environments && browser) {
    try {
      await access(config.chromiumPath, constants.X_OK);
    } catch {
      throw new ConfigError(`chromiumPath ${config.chromiumPath} is not an executable file; set --chromium-path or GROVE_CHROMIUM_PATH`);
    }
  }
  mkdirSync(config.dataDir, { recursive: true });

  // The environment logs through the app's (pino) logger, so it is built inside buildApp.
  const environments =
    opts.environments ??
    (async (log: Logger): Promise<LocalEnvironments> => {
      // A worker's episodes are graded by its orchestrator, which also answers their simulated users.
      const clawEval = clawEvalHostFor(config, log, opts.worker ? { gradedElsewhere: true, isolation: config.clawEvalIsolation } : {});
      // A Claw-Eval pod serves its one episode: no shells beside the services (their commands would share the pod's
      // user with the services' state and audit the grade reads; sandbox tools get a pod of their own).
      const shell = clawEvalPod ? undefined : await shellEnvironment(config, log, { worker: opts.worker });
      // the checkout's episodes get this server's shells (sandbox tools) and user model (simulated users)
      if (clawEval) equipClawEvalHost(clawEval, config, shell);
      return {
        browser: !browser
          ? undefined
          : await createBrowserEnvironment({
            executablePath: config.chromiumPath,
            processes: config.browserProcesses,
            recycleAfter: config.recycleAfter,
            warmPool: config.warmPool,
            warmPoolMaxMb: config.warmPoolMaxMb,
            frameCache: config.frameCache,
            dataDir: path.resolve(config.dataDir, 'browser'),
            headless: true,
            extraArgs: [],
            limits: { maxTabs: config.maxTabs, maxDownloads: config.maxDownloads, maxDownloadBytes: config.maxDownloadBytes },
            log,
          }),
        shell,
        ...(clawEval ? { claw: new ClawEnvironment({ clawEval }) } : {}),
      };
    });
  const app = await buildApp({ config, environments, logger: true, logStream: opts.logStream });
  if (opts.worker) registerWorkerRoutes(app, config.recordingsDir, opts.workerExit);
  // Long-polls (/wait up to 600 s) must not be cut by the default request timeout.
  app.server.requestTimeout = 0;
  app.server.keepAliveTimeout = 65_000;
  app.server.headersTimeout = 66_000;

  if (config.authDisabled && config.unsafeNoAuthRemote) {
    app.log.error(
      { host: config.host },
      'UNSAFE: authentication is DISABLED on a non-loopback address (--unsafe-no-auth-remote): anyone who can reach this port controls the sandboxes and the network they may reach',
    );
  } else if (config.authDisabled) {
    app.log.warn({ host: config.host }, 'authentication is DISABLED (--no-auth): anyone who can reach this port controls the sandboxes');
  } else if (config.apiKeySource === 'generated') {
    // Logged once: it is the only way to learn a generated key.
    app.log.warn({ api_key: config.apiKey }, 'no API key configured; generated one for this run (send it as X-API-Key)');
  }

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      const timer = setTimeout(() => {
        app.log.error({ timeout_ms: config.shutdownTimeoutMs }, 'graceful shutdown is taking too long; closing connections');
        app.server.closeAllConnections();
      }, config.shutdownTimeoutMs);
      try {
        await app.close();
      } finally {
        clearTimeout(timer);
      }
    })());
  return { app: app, url: `http://${host}:${port}`, close };
}

/**
 * The shell environment when this host can run it (root + bubblewrap); otherwise shell sandboxes answer 400. In a
 * worker pod (`grove worker`) with shellIsolation "pod", the pod is the boundary and commands run without
 * bubblewrap; anywhere else that mode is refused unless forced (unsafeShellIsolationPod).
 */
export async function shellEnvironment(config: GroveConfig, log: Logger, opts: { worker?: boolean } = {}): Promise<ShellEnvironment | undefined> {
  const limits = {
    cpu: config.shellCpu,
    memoryMb: config.shellMemoryMb,
    maxProcesses: config.shellMaxProcesses,
    maxOutputBytes: config.shellMaxOutputBytes,
    maxFileBytes: config.shellMaxFileBytes,
    execTimeoutMs: config.shellExecTimeoutS * 1000,
    diskMb: config.shellDiskMb,
    egressMaxConnections: config.shellEgressMaxConnections,
    egressIdleTimeoutS: config.shellEgressIdleTimeoutS,
  };
  if (config.shellIsolation === 'pod') {
    if (!opts.worker && !config.unsafeShellIsolationPod) {
      throw new ConfigError(
        'shellIsolation "pod" is for Kubernetes worker pods (grove worker), where the pod is the isolation boundary; here commands would run unconfined as this server\'s user. Use bwrap, or force it with unsafeShellIsolationPod (GROVE_UNSAFE_SHELL_ISOLATION_POD=1).',
      );
    }
    if (!opts.worker) log.error({ workspace: config.shellPodWorkspace }, 'UNSAFE: shell sandboxes run WITHOUT bubblewrap (shellIsolation pod outside a worker pod): commands run as this server\'s user');
    return createPodShellEnvironment({ workspace: config.shellPodWorkspace, network: config.shellPodNetwork, limits, log });
  }
  const avail = shellAvailability();
  if (!avail.ok) {
    log.warn({ reason: avail.reason }, 'shell sandboxes are not available on this server');
    return undefined;
  }
  return createShellEnvironment({
    dataDir: path.resolve(config.dataDir, 'shell'),
    images: config.shellImages,
    uidBase: config.shellUidBase,
    limits,
    log,
  });
}

/**
 * Resolves after the first SIGINT/SIGTERM once the server is closed. A second signal during the
 * shutdown is reported back (exit code 130) so the caller can exit at once.
 */
export function closeOnSignal(server: RunningServer, signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): Promise<{ signal: NodeJS.Signals; forced: boolean }> {
  return new Promise((resolve, reject) => {
    let received: NodeJS.Signals | null = null;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        server.app.log.warn({ signal }, 'second signal: exiting without waiting');
        resolve({ signal, forced: true });
        return;
      }
      received = signal;
      server.app.log.info({ signal }, 'shutting down');
      server.close().then(
        () => {
          for (const s of signals) process.off(s, onSignal);
          resolve({ signal, forced: false });
        },
        (err: unknown) => {
          for (const s of signals) process.off(s, onSignal);
          reject(err);
        },
      );
    };
    for (const s of signals) process.on(s, onSignal);
  });
}
