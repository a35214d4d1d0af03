// Configuration of the Kubernetes backend and of the manifests `grove k8s render` prints: one zod schema, read
// from a JSON file (`--k8s-config`), defaults filled in. Secrets never live here (they come from Kubernetes Secrets
// through the environment, read by sandbox/config.ts).
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const Quantity = z.string().regex(/^[0-9.]+(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/, 'a Kubernetes quantity such as 500m, 2, 1Gi');
const Resources = z
  .object({
    requests: z.object({ cpu: Quantity, memory: Quantity }),
    limits: z.object({ cpu: Quantity, memory: Quantity }),
  })
  .strict();

const NAME = /^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/;

export const TemplateSchema = z
  .object({
    /** `claw-eval`: pods hosting one Claw-Eval episode each (claw sandboxes with `claw_eval_task`): their image holds the
     * checkout and its Python environment at `clawEval` (scripts/claw-eval-image.sh), their worker starts the services
     * without bubblewrap (the pod is the boundary) and the orchestrator grades (docs/kubernetes.md). */
    type: z.enum(['browser', 'shell', 'claw-eval']),
    /** `pod`: one pod per sandbox (strongest isolation). `shared`: worker pods hosting up to maxPerWorker sandboxes. */
    placement: z.enum(['pod', 'shared']),
    maxPerWorker: z.number().int().min(1).max(64).default(8),
    /** Ready, unclaimed worker pods kept for this template (replenished in the background). */
    warmPool: z.number().int().min(0).max(1000).default(0),
    resources: Resources.default({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } }),
    /** Overrides workerImage for this template. */
    image: z.string().min(1).optional(),
    /** Shell templates: size limit of the /workspace emptyDir (default 4Gi). */
    workspaceSize: Quantity.optional(),
    /** claw-eval templates: the checkout's path in the image (default /opt/grove-claw-eval/checkout) and where its built
     * Python environment is (default /opt/grove-claw-eval/cache), as scripts/claw-eval-image.sh builds them: a venv
     * is bound to its absolute path, so these are the paths the image was built with. */
    clawEval: z.string().regex(/^(\/[A-Za-z0-9._+-]+)+$/, 'an absolute path').optional(),
    clawEvalCache: z.string().regex(/^(\/[A-Za-z0-9._+-]+)+$/, 'an absolute path').optional(),
    /** claw-eval templates: the shell template whose pods run the sandbox tools (Bash, Read, …) of the tasks that have
     * them, one shell pod per episode (k8s/claw-eval-tools.ts); absent, those tasks are refused. Its image needs the
     * Python that runs the checkout's sandbox server (scripts/claw-eval-image.sh builds one), at `sandboxPython`
     * (default /opt/grove-claw-eval/sandbox/bin/python). */
    sandboxTemplate: z.string().regex(NAME).optional(),
    sandboxPython: z.string().regex(/^(\/[A-Za-z0-9._+-]+)+$/, 'an absolute path').optional(),
  })
  .strict()
  .refine((t) => t.type !== 'claw-eval' || (t.placement === 'pod' && t.image !== undefined), { message: 'claw-eval templates need placement "pod" and `image` (scripts/claw-eval-image.sh)', path: ['type'] })
  // A shell pod is its sandbox's isolation boundary (pod isolation: one user, one file system, one network).
  .refine((t) => t.type !== 'shell' || t.placement === 'pod', { message: 'shell templates need placement "pod" (the pod is the shell sandbox\'s isolation boundary)', path: ['placement'] });
export type Template = z.infer<typeof TemplateSchema>;

export const K8sConfigSchema = z
  .object({
    namespace: z.string().regex(NAME).default('grove'),
    /** app.kubernetes.io/instance of everything created: two Grove installs in one namespace stay apart. */
    instance: z.string().regex(NAME).default('grove'),
    workerImage: z.string().min(1).default('grove-worker:0.1.0'),
    orchestratorImage: z.string().min(1).default('grove-orchestrator:0.1.0'),
    imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).default('IfNotPresent'),
    /** Port the worker listens on inside its pod; the orchestrator dials podIP:workerPort. */
    workerPort: z.number().int().min(1).max(65535).default(8321),
    orchestratorPort: z.number().int().min(1).max(65535).default(8321),
    orchestratorReplicas: z.number().int().min(1).max(20).default(2),
    templates: z
      .record(z.string().regex(NAME), TemplateSchema)
      .refine((t) => Object.keys(t).length > 0, 'at least one template')
      .default({
        browser: { type: 'browser', placement: 'shared', maxPerWorker: 8, warmPool: 2, resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } } },
        shell: { type: 'shell', placement: 'pod', maxPerWorker: 1, warmPool: 0, resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } } },
      }),
    /** Sandbox pod egress: `deny` (none) or `internet` (public addresses only: no private ranges, pods, metadata). */
    network: z.enum(['deny', 'internet']).default('deny'),
    /** Extra CIDRs sandbox pods may never reach in `internet` mode (e.g. the cluster's pod and service CIDRs). */
    blockedCidrs: z.array(z.string().min(1)).default([]),
    /** Images a shell sandbox's `image` may name, run as its pod's image (k8s/pod-image.ts): exact references, or
     * prefixes ending in `*` (e.g. "docker.io/swebench/sweb.eval.x86_64.*"). Empty: `image` is refused. */
    shellImages: z.array(z.string().min(1).max(256)).max(256).default([]),
    /** Folders of a shell sandbox's image its commands must own: before the worker starts, an init container of the
     * image itself (as the pod's user) copies each into an emptyDir mounted at the same path, which then belongs to
     * the pod's user (k8s/pod-image.ts). SWE-bench's images are built as root: files their setup made after its
     * `chmod -R 777 /testbed` are root's, read-only to a non-root pod. A path the image lacks is an empty folder. */
    shellImageOwnedPaths: z
      .array(z.string().regex(/^(\/[A-Za-z0-9._-]+)+$/, 'an absolute path of plain names').refine((p) => !p.split('/').some((c) => c === '.' || c === '..'), 'no . or .. components'))
      .max(8)
      .default(['/testbed']),
    /** Recordings (episodes, frames, HARs, verdicts) on a volume every orchestrator replica mounts, so `grove view`,
     * exports and reads work whichever replica recorded: a ReadWriteMany PersistentVolumeClaim, named (made by the
     * operator) or rendered here with `size` (and `storageClassName`). Absent: each replica's own /tmp. */
    recordings: z
      .object({
        claimName: z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/),
        size: Quantity.optional(),
        storageClassName: z.string().min(1).max(253).optional(),
      })
      .strict()
      .optional(),
    /** gVisor / Kata: the RuntimeClass sandbox pods run under. */
    runtimeClassName: z.string().min(1).optional(),
    /** A PodDisruptionBudget for the orchestrator (only rendered with more than one replica). */
    pdb: z.boolean().default(true),
    api: z
      .object({
        /** Kubernetes API calls in flight at once (per orchestrator replica). */
        concurrency: z.number().int().min(1).max(256).default(8),
        /** Calls waiting for a slot beyond which new sandboxes get 503 + Retry-After. */
        maxQueue: z.number().int().min(1).max(100_000).default(256),
        retries: z.number().int().min(0).max(20).default(5),
        backoffMs: z.number().int().min(1).max(60_000).default(200),
        maxBackoffMs: z.number().int().min(1).max(300_000).default(5000),
      })
      .strict()
      .default({ concurrency: 8, maxQueue: 256, retries: 5, backoffMs: 200, maxBackoffMs: 5000 }),
    /** Pods still starting beyond which new sandboxes get 503 + Retry-After (cold starts, not warm claims). */
    maxStartingPods: z.number().int().min(1).max(10_000).default(64),
    readyTimeoutSeconds: z.number().int().min(1).max(3600).default(180),
    /** Orchestrator liveness Lease: renewed every leaseDurationSeconds / 3; the reconciler treats the pods of a
     * replica whose Lease lapsed as orphans. The same duration governs the reconciler's leader Lease. */
    leaseDurationSeconds: z.number().int().min(1).max(600).default(15),
    reconcileIntervalSeconds: z.number().int().min(1).max(3600).default(10),
    /** A kubeconfig file; absent: in-cluster service account, else $KUBECONFIG / ~/.kube/config. */
    kubeconfig: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const [name, t] of Object.entries(c.templates)) {
      if (t.sandboxTemplate !== undefined && c.templates[t.sandboxTemplate]?.type !== 'shell') {
        ctx.addIssue({ code: 'custom', path: ['templates', name, 'sandboxTemplate'], message: `"${t.sandboxTemplate}" is not a shell template` });
      }
    }
  });

export type K8sConfig = z.output<typeof K8sConfigSchema>;
export type K8sConfigInput = z.input<typeof K8sConfigSchema>;

export class K8sConfigError extends Error {
  readonly code = 'invalid_config';
}

export function parseK8sConfig(input: unknown, where = 'kubernetes config'): K8sConfig {
  const r = K8sConfigSchema.safeParse(input ?? {});
  if (!r.success) {
    throw new K8sConfigError(`${where}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return r.data;
}

export function loadK8sConfig(file?: string): K8sConfig {
  if (!file) return parseK8sConfig({});
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new K8sConfigError(`kubernetes config ${file}: ${why}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new K8sConfigError(`kubernetes config ${file}: not valid JSON (${(err as Error).message})`);
  }
  return parseK8sConfig(raw, `kubernetes config ${file}`);
}

/** The template a sandbox of this type uses: `labels.template` when given, else the first template of the type.
 * Claw sandboxes run on browser workers (the worker image serves the Claw apps, and a paired browser joins them). */
export function templateFor(cfg: K8sConfig, type: string, labels: Record<string, string> | undefined, clawEval = false): [string, Template] | null {
  const wanted = labels?.template;
  // A claw sandbox with claw_eval_task on a claw-eval template (its image holds the checkout).
  const podType = type === 'claw' ? (clawEval ? 'claw-eval' : 'browser') : type;
  for (const [name, t] of Object.entries(cfg.templates)) {
    if (t.type !== podType) continue;
    if (wanted === undefined || wanted === name) return [name, t];
  }
  return null;
}
