// Shell pods under the restricted defaults: pod isolation (no root, no bubblewrap), a writable /workspace emptyDir,
// the read-only root file system, all capabilities dropped, seccomp RuntimeDefault — rendered and created pods,
// validated offline against the Kubernetes OpenAPI schema (kubernetes-models), for default and non-default configs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { V1PodSpec } from '@kubernetes/client-node';
import { parseK8sConfig, type K8sConfigInput } from '../../k8s/config.ts';
import { renderManifests } from '../../k8s/manifests.ts';
import { CLAW_EVAL_CACHE, CLAW_EVAL_CHECKOUT, SHELL_WORKSPACE, workerPod } from '../../k8s/pods.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';

function shellSpecs(input: K8sConfigInput): V1PodSpec[] {
  const cfg = parseK8sConfig(input);
  const rendered = renderManifests(cfg)
    .filter((m) => m.kind === 'PodTemplate')
    .map((m) => {
      validateK8sObject(m);
      return (m as unknown as { template: { spec: V1PodSpec } }).template.spec;
    });
  const created = Object.entries(cfg.templates).map(([name]) => {
    const pod = workerPod(cfg, name, `grove-${name}-0123456789`, 'gwt_token');
    validateK8sObject(pod as never);
    return pod.spec!;
  });
  return [...rendered, ...created].filter((s) => s.containers[0]!.env!.some((e) => e.name === 'GROVE_SHELL_ISOLATION'));
}

const env = (s: V1PodSpec) => Object.fromEntries(s.containers[0]!.env!.map((e) => [e.name, e.value]));

describe('shell pods', () => {
  test.each([
    ['default', {}, 'deny'],
    ['internet, own template', { network: 'internet', runtimeClassName: 'gvisor', templates: { swe: { type: 'shell', placement: 'pod', workspaceSize: '20Gi' } } }, 'internet'],
  ] as Array<[string, K8sConfigInput, string]>)('%s: restricted defaults, pod isolation, /workspace and /tmp emptyDirs', (_name, input, network) => {
    const specs = shellSpecs(input);
    expect(specs.length).toBe(2);
    for (const s of specs) {
      const c = s.containers[0]!;
      expect(s.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
      expect(s.automountServiceAccountToken).toBe(false);
      expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
      expect(env(s)).toMatchObject({ GROVE_SHELL_ISOLATION: 'pod', GROVE_SHELL_POD_WORKSPACE: SHELL_WORKSPACE, GROVE_SHELL_POD_NETWORK: network, GROVE_MAX_SANDBOXES: '1' });
      expect(c.volumeMounts).toEqual([
        { name: 'tmp', mountPath: '/tmp' },
        { name: 'workspace', mountPath: '/workspace' },
      ]);
      const vols = Object.fromEntries(s.volumes!.map((v) => [v.name, v]));
      expect(vols.tmp?.emptyDir).toBeDefined();
      expect(vols.workspace?.emptyDir?.sizeLimit).toBe(input.templates ? '20Gi' : '4Gi');
    }
  });

  test('a shell template shared by several sandboxes is refused (the pod is the boundary)', () => {
    expect(() => parseK8sConfig({ templates: { s: { type: 'shell', placement: 'shared' } } })).toThrow(/templates\.s\.placement.*placement "pod"/);
  });

  test('browser pods keep their own volumes and no shell isolation', () => {
    const cfg = parseK8sConfig({});
    const pod = workerPod(cfg, 'browser', 'grove-browser-0123456789', 'gwt_token');
    expect(pod.spec!.containers[0]!.env!.some((e) => e.name === 'GROVE_SHELL_ISOLATION')).toBe(false);
    expect(pod.spec!.volumes!.map((v) => v.name)).toEqual(['tmp', 'dshm']);
  });

  test('claw-eval pods: the checkout and its venv where scripts/claw-eval-image.sh puts them, never under the /tmp emptyDir', () => {
    const cfg = parseK8sConfig({ templates: { ce: { type: 'claw-eval', placement: 'pod', image: 'localhost/grove-claw-eval-x:1' } } });
    const pod = workerPod(cfg, 'ce', 'grove-ce-0123456789', 'gwt_token');
    validateK8sObject(pod as never);
    expect(env(pod.spec!)).toMatchObject({ GROVE_CLAW_EVAL: CLAW_EVAL_CHECKOUT, GROVE_CLAW_EVAL_CACHE: CLAW_EVAL_CACHE, GROVE_CLAW_EVAL_ISOLATION: 'pod' });
    expect(CLAW_EVAL_CHECKOUT.startsWith('/tmp/')).toBe(false);
    // the Dockerfile's literal paths are these
    const dockerfile = readFileSync(path.join(__dirname, '../../k8s/Dockerfile.claw-eval'), 'utf8');
    expect(dockerfile).toContain(`COPY checkout/ ${CLAW_EVAL_CHECKOUT}/`);
    expect(dockerfile).toContain(`CHECKOUT=${CLAW_EVAL_CHECKOUT} CACHE=${CLAW_EVAL_CACHE}`);
    expect(pod.spec!.containers[0]!.image).toBe('localhost/grove-claw-eval-x:1');
    // the image is required: the worker image holds no checkout
    expect(() => parseK8sConfig({ templates: { ce: { type: 'claw-eval', placement: 'pod' } } })).toThrow(/placement "pod" and `image`/);
  });
});
