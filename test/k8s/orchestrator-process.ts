// Real orchestrator processes against the simulated API server: `grove serve --backend kubernetes` reading a
// kubeconfig file that names the simulated API server (replicas-recording.slow; containers.ts writes the same file
// for orchestrator containers).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GroveClient } from '../../client/index.ts';
import type { KubeSim } from '../../k8s/sim/api-server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A kubeconfig naming the simulated API server (its URL and token, namespace grove). */
export function simKubeconfig(sim: KubeSim): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: sim, cluster: {server: "${sim.url}", insecure-skip-tls-verify: true}}]`,
    `users: [{name: grove, user: {token: "${sim.token}"}}]`,
    'contexts: [{name: sim, context: {cluster: sim, user: grove, namespace: grove}}]',
    'current-context: sim',
    '',
  ].join('\n');
}

/** Writes `kubeconfig` (simKubeconfig) and `k8s.json` (the given config, naming that kubeconfig) into `dir`;
 * returns the path of k8s.json for `--k8s-config`. */
export function writeSimConfig(sim: KubeSim, dir: string, k8s: Record<string, unknown>): string {
  writeFileSync(path.join(dir, 'kubeconfig'), simKubeconfig(sim));
  writeFileSync(path.join(dir, 'k8s.json'), JSON.stringify({ kubeconfig: path.join(dir, 'kubeconfig'), ...k8s }));
  return path.join(dir, 'k8s.json');
}

export interface OrchestratorProcess {
  proc: ChildProcess;
  client: GroveClient;
  url: string;
  /** Its GROVE_DATA_DIR (a new folder under the test's). */
  dataDir: string;
  /** The last of what it wrote to stderr. */
  stderr(): string;
}

export interface OrchestratorProcessOptions {
  /** The test's folder: the orchestrator's data directory is made in it. */
  dir: string;
  k8sConfig: string;
  replica: string;
  apiKey: string;
  tokenSecret: string;
  /** More `grove serve` arguments. */
  args?: string[];
}

/** Starts `grove serve --backend kubernetes` (pushed onto `started` at once); resolves once it listens. */
export async function spawnOrchestrator(o: OrchestratorProcessOptions, started: ChildProcess[]): Promise<OrchestratorProcess> {
  const dataDir = mkdtempSync(path.join(o.dir, `orch-${o.replica}-`));
  const args = ['--import', 'tsx', path.join(ROOT, 'cli/main.ts'), 'serve', '--backend', 'kubernetes', '--k8s-config', o.k8sConfig, '--port', '0', ...(o.args ?? [])];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, GROVE_API_KEY: o.apiKey, GROVE_K8S_TOKEN_SECRET: o.tokenSecret, GROVE_K8S_REPLICA_ID: o.replica, GROVE_DATA_DIR: dataDir, GROVE_LOG_LEVEL: 'warn', GROVE_CONFIG: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(proc);
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      stderr = (stderr + String(d)).slice(-20_000);
      const m = stderr.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]!);
    });
    proc.on('exit', (code) => reject(new Error(`orchestrator exited ${code}: ${stderr}`)));
  });
  return { proc, url, dataDir, client: new GroveClient({ baseUrl: url, apiKey: o.apiKey }), stderr: () => stderr };
}
