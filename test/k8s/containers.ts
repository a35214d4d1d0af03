// Test support for the Kubernetes tests with real containers: the simulated API server with the podman kubelet
// (worker pods are containers of localhost/grove-worker:dev), and orchestrators as containers of
// localhost/grove-orchestrator:dev, each read-only, non-root, without capabilities, on the host network (the
// simulated cluster's addresses are loopback ones). Every container is labelled with the kubelet's run, so
// `cleanup()` removes all of them even when a test failed midway.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GroveClient } from '../../client/index.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { PodmanKubelet, podmanImageMissing } from '../../k8s/sim/podman-kubelet.ts';
import { simKubeconfig } from './orchestrator-process.ts';

export const WORKER_IMAGE = 'localhost/grove-worker:dev';
export const ORCHESTRATOR_IMAGE = 'localhost/grove-orchestrator:dev';
export const API_KEY = 'k8s-containers-api-key-0123456789';
export const TOKEN_SECRET = 'containers-worker-token-secret-0123456789';
const UID = 10001;

/** Why the container tests cannot run here (podman or an image missing), or null. */
export function containersMissing(): string | null {
  return podmanImageMissing(WORKER_IMAGE) ?? podmanImageMissing(ORCHESTRATOR_IMAGE);
}

export interface OrchestratorContainer {
  name: string;
  proc: ChildProcess;
  client: GroveClient;
  url: string;
  /** The orchestrator's GROVE_DATA_DIR on the host (mounted at /data). */
  dataDir: string;
}

export class ContainerCluster {
  readonly kubelet = new PodmanKubelet({ readyTimeoutMs: 240_000 });
  readonly sim = new KubeSim(this.kubelet);
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-containers-'));
  private readonly orchestrators: OrchestratorContainer[] = [];

  constructor() {
    this.kubelet.sim = this.sim;
  }

  /** Starts the API server and writes the kubeconfig and k8s config the orchestrator containers read. */
  async start(k8s: Record<string, unknown>): Promise<void> {
    await this.sim.start();
    const etc = path.join(this.dir, 'etc');
    mkdirSync(etc);
    writeFileSync(path.join(etc, 'kubeconfig'), simKubeconfig(this.sim));
    writeFileSync(path.join(etc, 'k8s.json'), JSON.stringify({ kubeconfig: '/etc/grove/kubeconfig', workerImage: WORKER_IMAGE, imagePullPolicy: 'Never', ...k8s }));
    for (const f of ['kubeconfig', 'k8s.json']) chmodSync(path.join(etc, f), 0o644);
    chmodSync(this.dir, 0o755);
    chmodSync(etc, 0o755);
  }

  /** `grove serve --backend kubernetes` in the orchestrator image; resolves with a client once it listens. */
  async orchestrator(replica: string, podmanArgs: string[] = []): Promise<OrchestratorContainer> {
    const dataDir = mkdtempSync(path.join(this.dir, `orch-${replica}-`));
    chownSync(dataDir, UID, UID);
    const name = `grove-sim-orch-${replica}-${process.pid}`;
    const args = [
      'run', '--rm', '--pull=never', '--network=host', `--name=${name}`,
      `--label=grove.sim=${this.kubelet.run}`, `--label=grove.sim.pid=${process.pid}`,
      '--read-only', '--read-only-tmpfs=false', '--tmpfs=/tmp:rw,nosuid,nodev,mode=1777,size=536870912',
      `--user=${UID}:${UID}`, '--cap-drop=all', '--security-opt=no-new-privileges',
      `--volume=${path.join(this.dir, 'etc')}:/etc/grove:ro`, `--volume=${dataDir}:/data:rw`,
      '--env', `GROVE_API_KEY=${API_KEY}`, '--env', `GROVE_K8S_TOKEN_SECRET=${TOKEN_SECRET}`,
      '--env', `GROVE_K8S_REPLICA_ID=${replica}`, '--env', 'GROVE_DATA_DIR=/data', '--env', 'GROVE_LOG_LEVEL=warn',
      ...podmanArgs, ORCHESTRATOR_IMAGE, 'serve', '--backend', 'kubernetes', '--k8s-config', '/etc/grove/k8s.json', '--host', '127.0.0.1', '--port', '0',
    ];
    const proc = spawn('/usr/bin/podman', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      proc.stderr!.on('data', (d) => {
        stderr = (stderr + String(d)).slice(-8000);
        const m = stderr.match(/listening on (http:\/\/\S+)/);
        if (m) resolve(m[1]!);
      });
      proc.once('close', (code) => reject(new Error(`orchestrator container exited ${code}: ${stderr}`)));
    });
    const o = { name, proc, url, dataDir, client: new GroveClient({ baseUrl: url, apiKey: API_KEY }) };
    this.orchestrators.push(o);
    return o;
  }

  /**
   * createAndWait through `client`, retried (up to 3 times) when the worker answered 503 capture_timeout ("retry
   * later": on a machine at load 50+ a fresh page's first capture can miss its deadline); any other failure is
   * thrown with what the kubelet saw of containers that ended on their own.
   */
  async create(client: GroveClient, spec: Parameters<GroveClient['createAndWait']>[0]): Promise<Awaited<ReturnType<GroveClient['createAndWait']>>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await client.createAndWait(spec, 240);
      } catch (err) {
        if ((err as { code?: string }).code === 'capture_timeout' && attempt < 3) continue;
        const exits = this.kubelet.exits.map((e) => `${e.container} exited ${e.code}: ${e.stderr.slice(-600)}`).join('\n');
        throw new Error(`${(err as Error).message}${exits ? `\ncontainers that ended on their own:\n${exits}` : ''}`, { cause: err });
      }
    }
  }

  /** SIGKILLs an orchestrator's container (`podman kill`) and waits for it to be gone. */
  async killOrchestrator(o: OrchestratorContainer): Promise<void> {
    const gone = exitOf(o.proc);
    await podman(['kill', '--signal', 'KILL', o.name]);
    await gone;
  }

  /** Stops an orchestrator's container gracefully (SIGTERM, SIGKILL after 30 s); resolves with its exit code. */
  async stopOrchestrator(o: OrchestratorContainer): Promise<number | null> {
    const gone = exitOf(o.proc);
    await podman(['stop', '-t', '30', o.name]);
    return gone;
  }

  /** Runs a command in a running container (`podman exec`), as the container's user. */
  exec(container: string, script: string): Promise<{ code: number | null; stdout: string }> {
    return podman(['exec', container, '/bin/sh', '-c', script]);
  }

  /** This run's containers that still exist. */
  async leftovers(): Promise<string[]> {
    const r = await podman(['ps', '-a', '--filter', `label=grove.sim=${this.kubelet.run}`, '--format', '{{.Names}}']);
    return r.stdout.split('\n').filter(Boolean);
  }

  /** Everything goes: orchestrators, worker containers, the API server, the temporary folder. */
  async cleanup(): Promise<void> {
    for (const o of this.orchestrators) if (o.proc.exitCode === null) await podman(['rm', '-f', '-t', '0', o.name]);
    await this.kubelet.removeAll();
    await this.sim.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// podman runs asynchronously: the simulated API server lives in this process and must keep answering meanwhile
// (a blocking spawnSync of `podman stop` starved the orchestrator's own shutdown calls until its SIGKILL).
function podman(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn('/usr/bin/podman', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    p.stdout.on('data', (d) => (stdout += String(d)));
    p.stderr.on('data', (d) => (stdout += String(d)));
    p.once('close', (code) => resolve({ code, stdout }));
  });
}

function exitOf(proc: ChildProcess): Promise<number | null> {
  return new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(proc.exitCode) : proc.once('close', (code) => r(code))));
}
