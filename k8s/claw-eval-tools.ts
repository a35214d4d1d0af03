// The sandbox tools (Bash, Read, Write, …) of a Claw-Eval episode on the kubernetes backend: a shell sandbox of its
// own on a shell pod of the claw-eval template's `sandboxTemplate` (pod isolation, the install's egress policy, no
// network asked), never in the claw-eval pod that holds the task's mock services and the trace — as in Claw-Eval,
// where the agent's sandbox is a container apart from the services. The orchestrator runs each call there over the
// worker's shell API (k8s/remote-claw-eval.ts), records it in the episode's trace on the claw-eval pod, and collects
// the env snapshot there before grading. The shell's record names its episode (`of`): it is no sandbox of the API
// (never listed, adopted or served by id, k8s/shared.ts), another replica serving the episode finds it by that
// (attachToolsShell), it goes with its episode (dropToolsShells at release; the leader closes one whose episode is
// gone, k8s/sandbox-expiry.ts), and it lives as long as its episode's TTL (its idle timeout is that TTL: the episode's
// own idleness is what counts).
import { randomUUID } from 'node:crypto';
import { GroveClient } from '../client/index.ts';
import { GroveError } from '../protocol/errors.ts';
import { ShellCreateOptions } from '../protocol/sandbox.ts';
import type { ExecInput, ExecResult } from '../protocol/shell.ts';
import type { K8sConfig, Template } from './config.ts';
import type { KubeApi } from './kube.ts';
import type { PodCache } from './pod-cache.ts';
import { podRecords } from './records.ts';
import type { RemoteSandbox } from './remote-sandbox.ts';
import type { RemoteShellSandbox } from './remote-shell.ts';
import { placementOf, type SharedState } from './shared.ts';

/** Where the sandbox tools' server runs in a `sandboxTemplate` image by default (k8s/Dockerfile.claw-eval-sandbox). */
export const DEFAULT_SANDBOX_PYTHON = '/opt/grove-claw-eval/sandbox/bin/python';

/** The shell the sandbox tools run in (claw-env's ClawEvalShell shape), the Python there, and its end. */
export interface ToolsShell {
  shell: { exec(req: ExecInput): Promise<ExecResult>; upload(path: string, data: Uint8Array | string): Promise<unknown> };
  python: string;
  close(): Promise<void>;
}

export interface ClawEvalToolsDeps {
  cfg: K8sConfig;
  api: KubeApi;
  cache: PodCache;
  tokenSecret: string;
  shared: SharedState;
  /** Creates a shell sandbox whose record says it is `of` this episode (KubernetesBackend.create). */
  create(id: string, spec: ShellCreateOptions, of: string): RemoteShellSandbox;
}

/** The shell template of a claw-eval template's sandbox tools (undefined: it has none, the tasks are refused). */
export function toolsTemplate(cfg: K8sConfig, clawEvalTemplate: string): [string, Template] | undefined {
  const name = cfg.templates[clawEvalTemplate]?.sandboxTemplate;
  const t = name ? cfg.templates[name] : undefined;
  return name && t?.type === 'shell' ? [name, t] : undefined;
}

/** A new shell pod for the episode's sandbox tools, ready; on a failure nothing is left (its pod deleted). */
export async function openToolsShell(d: ClawEvalToolsDeps, episode: RemoteSandbox, ttl: number): Promise<ToolsShell> {
  const t = toolsTemplate(d.cfg, episode.templateName);
  if (!t) throw new GroveError('not_supported_on_backend', `The claw-eval template "${episode.templateName}" names no sandboxTemplate: sandbox-tool tasks cannot run on it.`);
  // No network, as the local server's tools shell (server/claw-eval.ts); a pod's network is its install's policy, so
  // on an `internet` install the worker is told it has public egress (the pod cannot be cut off alone).
  const spec = ShellCreateOptions.parse({ type: 'shell', block_network: d.cfg.network !== 'internet', labels: { template: t[0] }, ttl_seconds: ttl, idle_timeout_seconds: ttl });
  const sb = d.create(`cet-${randomUUID()}`, spec, episode.id);
  const close = () => sb.close();
  // the episode closed while its shell starts: the shell gives up too
  const onAbort = () => void close();
  episode.aborted.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await sb.ready();
  } catch (err) {
    await close();
    throw err instanceof GroveError ? err : new GroveError('internal_error', `The sandbox tools' shell of ${episode.id} did not start: ${(err as Error).message}`);
  } finally {
    episode.aborted.signal.removeEventListener('abort', onAbort);
  }
  return { shell: { exec: (req) => sb.exec(req as Parameters<RemoteShellSandbox['exec']>[0]), upload: (p, data) => sb.writeFile(p, Buffer.from(data)) }, python: pythonOf(d.cfg, episode.templateName), close };
}

/** The episode's tools shell another replica created, from its record (calls only: its creator or the episode's
 * release ends it). */
export function attachToolsShell(d: ClawEvalToolsDeps, episode: RemoteSandbox): ToolsShell {
  const found = d.shared.toolsOf(episode.id);
  const pod = found ? d.cache.get(found.pod) : undefined;
  const at = pod && found?.rec.worker ? placementOf(pod, d.cfg, d.tokenSecret, found.rec) : null;
  if (!found || !at) throw new GroveError('worker_lost', `The sandbox tools' shell of episode ${episode.id} is gone.`);
  const wid = found.rec.worker!;
  const client = new GroveClient({ baseUrl: at.url, apiKey: at.token });
  return {
    shell: { exec: (req) => client.exec(wid, req), upload: (p, data) => client.uploadFile(wid, p, data) },
    python: pythonOf(d.cfg, episode.templateName),
    close: async () => client.close(),
  };
}

/** At an episode's release: the pods of its tools shells (whichever replica created them) are deleted. */
export async function dropToolsShells(d: Pick<ClawEvalToolsDeps, 'api' | 'cache'>, episode: string): Promise<number> {
  let n = 0;
  for (const pod of d.cache.all()) {
    const name = pod.metadata?.name;
    if (!name || pod.metadata?.deletionTimestamp) continue;
    if ([...podRecords(pod).values()].some((r) => r.of === episode) && (await d.api.deletePod(name))) n++;
  }
  return n;
}

/** The sandbox server's Python in the tools shell's image, as the claw-eval template says. */
function pythonOf(cfg: K8sConfig, clawEvalTemplate: string): string {
  return cfg.templates[clawEvalTemplate]?.sandboxPython ?? DEFAULT_SANDBOX_PYTHON;
}
