// Everything an install needs, as Kubernetes objects built from one K8sConfig: `grove k8s render` prints them as
// YAML and k8s/base/ holds the default render with a kustomization. Namespace-scoped RBAC only (no ClusterRole).
import { stringify } from 'yaml';
import type { K8sConfig } from './config.ts';
import { baseLabels, L } from './labels.ts';
import { WORKER_SERVICE_ACCOUNT, workerLabels, workerPodSpec } from './pods.ts';
import { MAX_PAIRED_SHELLS } from './paired-shell.ts';

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<string, unknown>;

export const ORCHESTRATOR = 'grove-orchestrator';
/** The Secret the operator creates (docs/kubernetes.md): the API key clients send, and the worker-token secret. */
export const SECRET = 'grove-secrets';
export const CONFIG_MAP = 'grove-k8s-config';

/** Private, link-local, loopback, CGNAT and metadata ranges sandbox pods never reach, even with the network on. */
export const BLOCKED_V4 = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8', '0.0.0.0/8'];
export const BLOCKED_V6 = ['fc00::/7', 'fe80::/10', '::1/128', 'fd00:ec2::254/128'];

function meta(cfg: K8sConfig, name: string, component: 'orchestrator' | 'worker' | 'sandbox', namespaced = true) {
  return { name, ...(namespaced ? { namespace: cfg.namespace } : {}), labels: baseLabels(cfg.instance, component) };
}

/** Where the orchestrators mount the shared recordings volume (config `recordings`). */
export const RECORDINGS_DIR = '/var/lib/grove/recordings';
const orchestratorSelector = (cfg: K8sConfig) => ({ [L.instance]: cfg.instance, [L.component]: 'orchestrator' });
const workerSelector = (cfg: K8sConfig) => ({ [L.instance]: cfg.instance, [L.component]: 'worker' });

export function renderManifests(cfg: K8sConfig): Manifest[] {
  const out: Manifest[] = [];
  out.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: cfg.namespace, labels: { ...baseLabels(cfg.instance, 'orchestrator'), 'pod-security.kubernetes.io/enforce': 'restricted' } } });
  out.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(cfg, ORCHESTRATOR, 'orchestrator') });
  // Sandbox pods run under an account with no permissions and no mounted token.
  out.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(cfg, WORKER_SERVICE_ACCOUNT, 'worker'), automountServiceAccountToken: false });
  out.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: meta(cfg, ORCHESTRATOR, 'orchestrator'),
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
      // A shell paired with a claw sandbox: its worker is an ephemeral container added to the claw pod (k8s/paired-shell.ts).
      { apiGroups: [''], resources: ['pods/ephemeralcontainers'], verbs: ['patch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
    ],
  });
  out.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: meta(cfg, ORCHESTRATOR, 'orchestrator'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ORCHESTRATOR },
    subjects: [{ kind: 'ServiceAccount', name: ORCHESTRATOR, namespace: cfg.namespace }],
  });
  out.push({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(cfg, CONFIG_MAP, 'orchestrator'),
    data: { 'k8s.json': JSON.stringify({ ...cfg, kubeconfig: undefined }, null, 2) + '\n' },
  });
  if (cfg.recordings?.size) {
    out.push({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta(cfg, cfg.recordings.claimName, 'orchestrator'),
      spec: {
        // Every replica writes and reads it at once.
        accessModes: ['ReadWriteMany'],
        resources: { requests: { storage: cfg.recordings.size } },
        ...(cfg.recordings.storageClassName ? { storageClassName: cfg.recordings.storageClassName } : {}),
      },
    });
  }
  out.push(orchestratorDeployment(cfg));
  out.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(cfg, ORCHESTRATOR, 'orchestrator'),
    spec: {
      selector: orchestratorSelector(cfg),
      // No session affinity: every replica serves every sandbox (records on the pods, k8s/records.ts).
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  });
  for (const name of Object.keys(cfg.templates)) {
    out.push({
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: meta(cfg, `grove-sandbox-${name}`, 'worker'),
      template: { metadata: { labels: workerLabels(cfg, name) }, spec: workerPodSpec(cfg, name, null) },
    });
  }
  out.push(...networkPolicies(cfg));
  if (cfg.pdb && cfg.orchestratorReplicas > 1) {
    out.push({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: meta(cfg, ORCHESTRATOR, 'orchestrator'),
      spec: { minAvailable: 1, selector: { matchLabels: orchestratorSelector(cfg) } },
    });
  }
  return out;
}

function orchestratorDeployment(cfg: K8sConfig): Manifest {
  const labels = { ...baseLabels(cfg.instance, 'orchestrator') };
  const secretEnv = (name: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: SECRET, key } } });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(cfg, ORCHESTRATOR, 'orchestrator'),
    spec: {
      replicas: cfg.orchestratorReplicas,
      selector: { matchLabels: orchestratorSelector(cfg) },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: ORCHESTRATOR,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 10001,
            runAsGroup: 10001,
            // The shared recordings volume is writable by the replicas' group.
            ...(cfg.recordings ? { fsGroup: 10001 } : {}),
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'orchestrator',
              image: cfg.orchestratorImage,
              imagePullPolicy: cfg.imagePullPolicy,
              args: ['serve', '--backend', 'kubernetes', '--k8s-config', '/etc/grove/k8s.json', '--host', '0.0.0.0', '--port', String(cfg.orchestratorPort)],
              env: [
                secretEnv('GROVE_API_KEY', 'api-key'),
                secretEnv('GROVE_K8S_TOKEN_SECRET', 'worker-token-secret'),
                // The replica's identity: owner label of the pods it claims, holder of its liveness Lease.
                { name: 'GROVE_K8S_REPLICA_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'GROVE_DATA_DIR', value: '/tmp/grove' },
                ...(cfg.recordings ? [{ name: 'GROVE_RECORDINGS_DIR', value: RECORDINGS_DIR }] : []),
              ],
              ports: [{ name: 'http', containerPort: cfg.orchestratorPort, protocol: 'TCP' }],
              readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 10, failureThreshold: 6 },
              resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'config', mountPath: '/etc/grove', readOnly: true },
                { name: 'tmp', mountPath: '/tmp' },
                ...(cfg.recordings ? [{ name: 'recordings', mountPath: RECORDINGS_DIR }] : []),
              ],
            },
          ],
          volumes: [
            { name: 'config', configMap: { name: CONFIG_MAP } },
            { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
            ...(cfg.recordings ? [{ name: 'recordings', persistentVolumeClaim: { claimName: cfg.recordings.claimName } }] : []),
          ],
        },
      },
    },
  };
}

function networkPolicies(cfg: K8sConfig): Manifest[] {
  const out: Manifest[] = [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta(cfg, 'grove-sandbox-ingress', 'worker'),
      spec: {
        podSelector: { matchLabels: workerSelector(cfg) },
        policyTypes: ['Ingress'],
        // Only the orchestrator may talk to a worker, and only on its port and the ports of the paired shells' workers
        // (ephemeral containers of a claw pod, k8s/paired-shell.ts).
        ingress: [
          {
            from: [{ podSelector: { matchLabels: orchestratorSelector(cfg) } }],
            ports: [
              { protocol: 'TCP', port: cfg.workerPort },
              { protocol: 'TCP', port: cfg.workerPort + 1, endPort: cfg.workerPort + MAX_PAIRED_SHELLS },
            ],
          },
        ],
      },
    },
  ];
  const egress =
    cfg.network === 'deny'
      ? []
      : [
          // Public internet only: not private ranges (the cluster's pods and nodes), not the metadata address.
          {
            to: [
              { ipBlock: { cidr: '0.0.0.0/0', except: [...BLOCKED_V4, ...cfg.blockedCidrs.filter((c) => !c.includes(':'))] } },
              { ipBlock: { cidr: '::/0', except: [...BLOCKED_V6, ...cfg.blockedCidrs.filter((c) => c.includes(':'))] } },
            ],
          },
          // DNS through the cluster's resolver, nothing else inside the cluster.
          {
            to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
            ports: [
              { protocol: 'UDP', port: 53 },
              { protocol: 'TCP', port: 53 },
            ],
          },
        ];
  out.push({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(cfg, 'grove-sandbox-egress', 'worker'),
    spec: { podSelector: { matchLabels: workerSelector(cfg) }, policyTypes: ['Egress'], egress },
  });
  return out;
}

/** Multi-document YAML, one object per document, in apply order. */
export function toYaml(manifests: Manifest[]): string {
  return manifests.map((m) => stringify(m, { lineWidth: 0 }).trimEnd()).join('\n---\n') + '\n';
}

/** A kustomization listing the files written by writeBase-style renders (one file per object). */
export function fileNameOf(m: Manifest): string {
  return `${m.kind.toLowerCase()}-${m.metadata.name}.yaml`;
}

export function kustomization(manifests: Manifest[], namespace: string): string {
  return stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', namespace, resources: manifests.map(fileNameOf) }, { lineWidth: 0 });
}
