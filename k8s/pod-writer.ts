// Read-modify-write of a pod's labels/annotations, guarded by its resourceVersion: the change is computed from
// the cached pod, sent with that resourceVersion, and on 409 (another replica wrote first) recomputed from a fresh
// read. This is how replicas share sandbox records without a lock or a database (records.ts).
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeApi } from './kube.ts';
import { KubeError } from './kube.ts';
import type { PodCache } from './pod-cache.ts';

export interface MetaChange {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

const ATTEMPTS = 12;

/**
 * Applies `change(pod)` to the named pod; `change` returns null when there is nothing to write (the result is then
 * the pod as read). Resolves with the pod after the write, or null when the pod does not exist.
 */
export async function updatePod(api: KubeApi, cache: PodCache, name: string, change: (pod: V1Pod) => MetaChange | null): Promise<V1Pod | null> {
  let pod: V1Pod | undefined = cache.get(name);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (!pod) pod = (await fresh(api, cache, name)) ?? undefined;
    if (!pod) return null;
    const c = change(pod);
    if (!c) return pod;
    try {
      const written = await api.patchPodMeta(name, { ...c, resourceVersion: pod.metadata!.resourceVersion });
      cache.remember(written);
      return written;
    } catch (err) {
      if (!(err instanceof KubeError) || (err.status !== 409 && err.status !== 404)) throw err;
      if (err.status === 404) return null;
      pod = undefined;
    }
  }
  throw new KubeError(409, `pod ${name} kept changing under ${ATTEMPTS} guarded writes`);
}

/** A fresh read of a pod (remembered by the cache); null when it is gone. */
export async function fresh(api: KubeApi, cache: PodCache, name: string): Promise<V1Pod | null> {
  try {
    const pod = await api.getPod(name);
    cache.remember(pod);
    return pod;
  } catch (err) {
    if (err instanceof KubeError && err.status === 404) return null;
    throw err;
  }
}
