// The manifests `grove k8s render` prints, validated offline against the Kubernetes OpenAPI schema
// (kubernetes-models) for the default and non-default configs, and checked for the secure defaults.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseK8sConfig, type K8sConfigInput } from '../../k8s/config.ts';
import { fileNameOf, kustomization, renderManifests, toYaml, type Manifest } from '../../k8s/manifests.ts';
import { workerPod } from '../../k8s/pods.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';

const CONFIGS: Record<string, K8sConfigInput> = {
  default: {},
  internet: {
    namespace: 'agents',
    instance: 'rl-a',
    network: 'internet',
    blockedCidrs: ['10.244.0.0/16', 'fd00:10::/64'],
    runtimeClassName: 'gvisor',
    orchestratorReplicas: 3,
    imagePullPolicy: 'Always',
    templates: {
      web: { type: 'browser', placement: 'shared', maxPerWorker: 12, warmPool: 4, resources: { requests: { cpu: '2', memory: '3Gi' }, limits: { cpu: '4', memory: '6Gi' } } },
      swe: { type: 'shell', placement: 'pod', warmPool: 1, image: 'registry.example/grove-swe:1' },
    },
  },
  single: { orchestratorReplicas: 1, pdb: true, templates: { b: { type: 'browser', placement: 'pod' } } },
};

function render(input: K8sConfigInput): Manifest[] {
  return renderManifests(parseK8sConfig(input));
}

function podSpecs(ms: Manifest[]): Array<Record<string, any>> {
  return ms.filter((m) => m.kind === 'PodTemplate').map((m) => (m as any).template.spec);
}

describe.each(Object.entries(CONFIGS))('config %s', (_name, input) => {
  const ms = render(input);

  test('every manifest validates against the Kubernetes OpenAPI schema, also after a YAML round trip', () => {
    for (const m of ms) validateK8sObject(m);
    const docs = parseAllDocuments(toYaml(ms)).map((d) => d.toJS());
    expect(docs).toEqual(JSON.parse(JSON.stringify(ms)));
    for (const d of docs) validateK8sObject(d);
  });

  test('RBAC is namespaced: a Role and a RoleBinding, no ClusterRole', () => {
    expect(ms.some((m) => m.kind.startsWith('Cluster'))).toBe(false);
    const role = ms.find((m) => m.kind === 'Role') as any;
    expect(role.metadata.namespace).toBe(parseK8sConfig(input).namespace);
    expect(role.rules.flatMap((r: any) => r.resources).sort()).toEqual(['leases', 'pods', 'pods/ephemeralcontainers']);
    // Ephemeral containers (a paired shell's worker): added, never anything else.
    expect(role.rules.find((r: any) => r.resources.includes('pods/ephemeralcontainers')).verbs).toEqual(['patch']);
  });

  test('the orchestrator Service needs no session affinity: every replica serves every sandbox', () => {
    const svc = ms.find((m) => m.kind === 'Service') as any;
    expect(svc.spec.sessionAffinity ?? 'None').toBe('None');
    const deploy = ms.find((m) => m.kind === 'Deployment') as any;
    expect(deploy.spec.replicas).toBe(parseK8sConfig(input).orchestratorReplicas);
  });

  test('sandbox pods: non-root, read-only root, no capabilities, no token, seccomp, requests and limits', () => {
    const cfg = parseK8sConfig(input);
    const specs = podSpecs(ms);
    expect(specs).toHaveLength(Object.keys(cfg.templates).length);
    for (const spec of specs) {
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(spec.runtimeClassName).toBe(cfg.runtimeClassName);
      const c = spec.containers[0];
      expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
      expect(Object.keys(c.resources).sort()).toEqual(['limits', 'requests']);
      // The rendered template carries no token: the orchestrator adds one per pod.
      expect(c.env.some((e: any) => e.name === 'GROVE_API_KEY')).toBe(false);
    }
  });

  test('network: ingress only from the orchestrator; egress denied or public-only', () => {
    const cfg = parseK8sConfig(input);
    const ingress = ms.find((m) => m.metadata.name === 'grove-sandbox-ingress') as any;
    expect(ingress.spec.ingress).toEqual([
      { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': cfg.instance, 'app.kubernetes.io/component': 'orchestrator' } } }], ports: [{ protocol: 'TCP', port: cfg.workerPort }, { protocol: 'TCP', port: cfg.workerPort + 1, endPort: cfg.workerPort + 8 }] },
    ]);
    const egress = ms.find((m) => m.metadata.name === 'grove-sandbox-egress') as any;
    expect(egress.spec.policyTypes).toEqual(['Egress']);
    if (cfg.network === 'deny') expect(egress.spec.egress).toEqual([]);
    else {
      const v4 = egress.spec.egress[0].to[0].ipBlock;
      expect(v4.cidr).toBe('0.0.0.0/0');
      for (const c of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', ...cfg.blockedCidrs.filter((x) => !x.includes(':'))]) expect(v4.except).toContain(c);
      expect(egress.spec.egress[0].to[1].ipBlock.except).toContain('fd00:10::/64');
    }
  });

  test('a PodDisruptionBudget only with more than one orchestrator replica', () => {
    const cfg = parseK8sConfig(input);
    expect(ms.some((m) => m.kind === 'PodDisruptionBudget')).toBe(cfg.pdb && cfg.orchestratorReplicas > 1);
  });

  test('the pods the backend creates validate too (warm and claimed)', () => {
    const cfg = parseK8sConfig(input);
    for (const t of Object.keys(cfg.templates)) {
      validateK8sObject(workerPod(cfg, t, `grove-${t}-0a1b2c3d4e`, 'gwt_token'));
      validateK8sObject(workerPod(cfg, t, `grove-${t}-0a1b2c3d4f`, 'gwt_token', { owner: 'orch-1', sandboxId: 'sb_01', expiresAt: new Date(0).toISOString() }));
    }
  });
});

test('a manifest the schema refuses is caught (the validator can fail)', () => {
  const [pod] = podSpecs(render({}));
  const bad = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { ...pod, containers: [{ ...pod!.containers[0], ports: [{ containerPort: '8321' }] }] } };
  expect(() => validateK8sObject(bad)).toThrow(/containerPort must be integer/);
});

test('bad configs name the setting', () => {
  expect(() => parseK8sConfig({ network: 'open' })).toThrow(/network/);
  expect(() => parseK8sConfig({ templates: { b: { type: 'browser', placement: 'pod', resources: { requests: { cpu: 'lots', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } } } })).toThrow(/templates\.b\.resources\.requests\.cpu/);
  expect(() => parseK8sConfig({ templates: {} })).toThrow(/at least one template/);
});

test('k8s/base is the default render (kustomize base, no drift)', () => {
  const dir = path.resolve(import.meta.dirname, '../../k8s/base');
  const ms = render({});
  const files = readdirSync(dir).sort();
  expect(files).toEqual([...ms.map(fileNameOf), 'kustomization.yaml'].sort());
  for (const m of ms) expect(readFileSync(path.join(dir, fileNameOf(m)), 'utf8')).toBe(toYaml([m]));
  expect(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')).toBe(kustomization(ms, 'grove'));
});
