// Shell sandboxes isolated by their Kubernetes pod (shellIsolation "pod"): which create options such a pod can
// honour. Its network is the pod's NetworkPolicy (k8s config `network`), decided per install, not per sandbox; there
// is no per-sandbox proxy. Asked by the worker (shell-env) and, for an early 400, by the orchestrator (k8s).
import type { ShellCreateOptions } from '../protocol/sandbox.ts';

export type PodNetwork = 'deny' | 'internet';

/** Why a pod-isolated shell sandbox cannot have these options (null: it can). */
export function podShellRefusal(spec: Pick<ShellCreateOptions, 'block_network' | 'allow'>, network: PodNetwork): string | null {
  if (spec.allow?.length) return "allow is not available for pod-isolated shell sandboxes: their network is the pod's NetworkPolicy (public addresses only, or none).";
  if (spec.block_network === false && network === 'deny') {
    return 'block_network: false needs sandbox pods that may reach the internet (kubernetes config network: "internet"); this install denies their egress.';
  }
  if (spec.block_network !== false && network === 'internet') {
    return 'This install lets sandbox pods reach the internet (kubernetes config network: "internet"), so block_network: true cannot be honoured: create the shell sandbox with block_network: false, or use an install with network: "deny".';
  }
  return null;
}
