// Pods and their ephemeral containers as the real worker app in this process (buildApp + the worker routes), each on
// its pod's loopback address: the claw pod's apps, a paired shell's pod-isolated shell worker (shell-pairing tests).
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PodIps } from '../../k8s/sim/kubelets.ts';
import type { Kubelet } from '../../k8s/sim/pod-status.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { silentLogger } from '../../sandbox/log.ts';
import { buildApp } from '../../server/app.ts';
import { shellEnvironment } from '../../server/server.ts';
import { registerWorkerRoutes } from '../../server/worker-routes.ts';

type Obj = Record<string, any>;
const envOf = (c: Obj) => Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e.value])) as Record<string, string>;

/** Pods and their ephemeral containers as the real worker app in this process, on the pod's loopback address. */
export class AppKubelet implements Kubelet {
  readonly ips = new PodIps();

  /** `dir`: the folder the workers' data folders are made in. */
  constructor(private readonly dir: string) {}

  readonly apps = new Map<string, { app: FastifyInstance; url: string; token: string }>();
  readonly exited: string[] = [];
  /** When set, an ephemeral container starts only once it resolves (a container slow to start). */
  gate: Promise<void> | null = null;
  private async serve(key: string, env: Record<string, string>, ip: string, port: number, exit?: () => void): Promise<void> {
    const shell = env.GROVE_SHELL_ISOLATION === 'pod';
    const flags = { apiKey: env.GROVE_API_KEY, dataDir: path.join(this.dir, key.replace('/', '_')), reaperIntervalMs: 200, ...(shell ? { shellIsolation: 'pod' as const, shellPodWorkspace: path.join(this.dir, key.replace('/', '_'), 'ws'), shellPodNetwork: env.GROVE_SHELL_POD_NETWORK as 'deny' } : {}) };
    const config = loadConfig({ env: {}, flags });
    const app = await buildApp({ config, environments: shell ? { shell: await shellEnvironment(config, silentLogger, { worker: true }) } : {} });
    registerWorkerRoutes(app, config.recordingsDir, exit);
    await app.listen({ host: ip, port });
    this.apps.set(key, { app, url: `http://${ip}:${(app.server.address() as AddressInfo).port}`, token: env.GROVE_API_KEY! });
  }
  async start(pod: Obj): Promise<{ ip: string }> {
    const ip = this.ips.next();
    await this.serve(pod.metadata.name, envOf(pod.spec.containers[0]), ip, pod.spec.containers[0].ports[0].containerPort);
    return { ip };
  }
  async startEphemeral(pod: Obj, c: Obj, exited: (code: number) => void): Promise<void> {
    const key = `${pod.metadata.name}/${c.name}`;
    const env = envOf(c);
    await this.gate;
    await this.serve(key, env, pod.status.podIP, Number(env.GROVE_PORT), () => {
      const w = this.apps.get(key);
      this.apps.delete(key);
      this.exited.push(key);
      void w?.app.close().then(() => exited(0));
    });
  }
  async stop(pod: Obj): Promise<void> {
    for (const key of [pod.metadata.name, ...(pod.spec.ephemeralContainers ?? []).map((c: Obj) => `${pod.metadata.name}/${c.name}`)]) {
      const w = this.apps.get(key);
      this.apps.delete(key);
      await w?.app.close();
    }
  }

  /** Closes the apps still serving (after the API server closed: what its stop left). */
  async closeAll(): Promise<void> {
    for (const w of this.apps.values()) await w.app.close();
    this.apps.clear();
  }
}
