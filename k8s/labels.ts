// The labels and annotations Grove puts on what it creates. They are the source of truth shared by every
// orchestrator replica: no database holds who owns which pod.
export const L = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  template: 'grove.dev/template',
  placement: 'grove.dev/placement',
  /** `warm` (ready, unclaimed) or `claimed`. */
  state: 'grove.dev/state',
  /** The orchestrator replica that claimed the pod. */
  owner: 'grove.dev/owner',
  /** One-pod-per-sandbox placement: the sandbox the pod runs. */
  sandbox: 'grove.dev/sandbox',
} as const;

export const A = {
  /** ISO time after which the pod may be deleted whatever its owner says (the sandbox TTL). */
  expiresAt: 'grove.dev/expires-at',
  claimedAt: 'grove.dev/claimed-at',
  /** Shared placement: JSON array of the sandbox ids the worker hosts (its load). */
  sandboxes: 'grove.dev/sandboxes',
} as const;

/** Labels every object of an install carries. */
export function baseLabels(instance: string, component: 'orchestrator' | 'worker' | 'sandbox'): Record<string, string> {
  return { [L.name]: 'grove', [L.instance]: instance, [L.component]: component, [L.managedBy]: 'grove' };
}

/** Selector of the worker pods of an install. */
export function workerSelector(instance: string): string {
  return `${L.instance}=${instance},${L.component}=worker,${L.managedBy}=grove`;
}
