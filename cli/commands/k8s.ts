// `grove k8s render`: the manifests of an install (k8s/manifests.ts) as YAML, for the given kubernetes config.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';

const usage = `grove k8s render [--k8s-config FILE] [--out DIR]

Prints the Kubernetes manifests of a Grove install (Namespace, ServiceAccounts, Role/RoleBinding, ConfigMap,
orchestrator Deployment and Service, one sandbox PodTemplate per template, NetworkPolicies, PodDisruptionBudget)
as multi-document YAML for the given kubernetes config (JSON; defaults without it). With --out, writes one file
per object and a kustomization.yaml into DIR instead (k8s/base/ is the default render).`;

export const k8sCommand: Command = {
  name: 'k8s',
  summary: 'Kubernetes manifests: grove k8s render',
  usage,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub !== 'render') {
      process.stderr.write(`grove k8s: unknown subcommand "${sub ?? ''}"\n\n${usage}\n`);
      return 2;
    }
    let values: { 'k8s-config'?: string; out?: string };
    try {
      ({ values } = parseArgs({ args: rest, options: { 'k8s-config': { type: 'string' }, out: { type: 'string' } }, strict: true }));
    } catch (err) {
      process.stderr.write(`grove k8s render: ${(err as Error).message}\n`);
      return 2;
    }
    const [{ loadK8sConfig, K8sConfigError }, { renderManifests, toYaml, fileNameOf, kustomization }] = await Promise.all([
      import('../../k8s/config.ts'),
      import('../../k8s/manifests.ts'),
    ]);
    let cfg;
    try {
      cfg = loadK8sConfig(values['k8s-config']);
    } catch (err) {
      if (err instanceof K8sConfigError) {
        process.stderr.write(`grove k8s render: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
    const manifests = renderManifests(cfg);
    if (!values.out) {
      process.stdout.write(toYaml(manifests));
      return 0;
    }
    mkdirSync(values.out, { recursive: true });
    for (const m of manifests) writeFileSync(path.join(values.out, fileNameOf(m)), toYaml([m]));
    writeFileSync(path.join(values.out, 'kustomization.yaml'), kustomization(manifests, cfg.namespace));
    process.stderr.write(`grove k8s render: wrote ${manifests.length} manifests and kustomization.yaml to ${values.out}\n`);
    return 0;
  },
};
