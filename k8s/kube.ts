// The Kubernetes API as the backend uses it: pods and Leases of one namespace, through @kubernetes/client-node
// 1.4.0, every call through one Throttle (bounded concurrency, retries, backoff) and counted.
import * as k8s from '@kubernetes/client-node';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { Throttle, type CallFailure, type ThrottleOptions } from './throttle.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** An API failure with its HTTP status (0: no answer). */
export class KubeError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

function toKubeError(err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  if (err instanceof k8s.ApiException) {
    const headers = (err.headers ?? {}) as Record<string, string>;
    const ra = headers['retry-after'];
    let msg = `HTTP ${err.code}`;
    const body = err.body as unknown;
    try {
      const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
      if (parsed?.message) msg += `: ${parsed.message}`;
    } catch {
      // not JSON
    }
    return new KubeError(err.code, msg, ra && /^\d+$/.test(ra) ? Number(ra) : undefined);
  }
  return new KubeError(0, err instanceof Error ? err.message : String(err));
}

function classify(err: unknown): CallFailure {
  const e = toKubeError(err);
  return { status: e.status, retryAfterSeconds: e.retryAfterSeconds };
}

/** Loads a kubeconfig file, else the in-cluster service account, else $KUBECONFIG / ~/.kube/config. */
export function loadKubeConfig(file?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}

const MERGE = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const STRATEGIC = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

export class KubeApi {
  readonly throttle: Throttle;
  private readonly core: k8s.CoreV1Api;
  private readonly coordination: k8s.CoordinationV1Api;
  private readonly watcher: k8s.Watch;

  constructor(
    kc: k8s.KubeConfig,
    readonly namespace: string,
    throttle: ThrottleOptions,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    this.watcher = new k8s.Watch(kc);
    this.throttle = new Throttle(throttle, classify);
  }

  private call<T>(fn: (attempt: number) => Promise<T>, background = false): Promise<T> {
    return this.throttle.run(async (attempt) => {
      try {
        return await fn(attempt);
      } catch (err) {
        throw toKubeError(err);
      }
    }, background);
  }

  /** Creates a pod; a retry that finds the pod already there (the first try landed) returns it. Background: a refill. */
  createPod(pod: V1Pod, background = false): Promise<V1Pod> {
    const name = pod.metadata!.name!;
    return this.call(async (attempt) => {
      try {
        return await this.core.createNamespacedPod({ namespace: this.namespace, body: pod });
      } catch (err) {
        if (attempt > 0 && toKubeError(err).status === 409) return this.core.readNamespacedPod({ name, namespace: this.namespace });
        throw err;
      }
    }, background);
  }

  getPod(name: string): Promise<V1Pod> {
    return this.call(() => this.core.readNamespacedPod({ name, namespace: this.namespace }));
  }

  /**
   * Deletes a pod; one already gone counts as deleted (returns false). With `resourceVersion`, only that version of
   * the pod is deleted (a precondition: 409 when another replica changed it since, e.g. placed a sandbox on it).
   */
  async deletePod(name: string, background = false, resourceVersion?: string): Promise<boolean> {
    const body = resourceVersion ? { preconditions: { resourceVersion } } : undefined;
    try {
      await this.call(() => this.core.deleteNamespacedPod({ name, namespace: this.namespace, ...(body ? { body } : {}) }), background);
      return true;
    } catch (err) {
      if (err instanceof KubeError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * JSON merge patch of a pod's labels/annotations. With `resourceVersion`, the server refuses (409) when the pod
   * changed since it was read: that is how two replicas never claim the same warm pod.
   */
  patchPodMeta(
    name: string,
    meta: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; resourceVersion?: string },
    background = false,
  ): Promise<V1Pod> {
    const body = { metadata: meta };
    return this.call(() => this.core.patchNamespacedPod({ name, namespace: this.namespace, body }, MERGE), background);
  }

  /**
   * Adds an ephemeral container to a running pod (the `ephemeralcontainers` subresource, a strategic-merge patch as
   * `kubectl debug` sends: the list merges by name). With `resourceVersion`, 409 when the pod changed since it was read.
   */
  addEphemeralContainer(name: string, container: k8s.V1EphemeralContainer, resourceVersion?: string): Promise<V1Pod> {
    const body = { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), spec: { ephemeralContainers: [container] } };
    return this.call(() => this.core.patchNamespacedPodEphemeralcontainers({ name, namespace: this.namespace, body }, STRATEGIC));
  }

  async listPods(labelSelector: string): Promise<{ items: V1Pod[]; resourceVersion: string }> {
    const list = await this.call(() => this.core.listNamespacedPod({ namespace: this.namespace, labelSelector }));
    return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  /**
   * Opens a watch of pods from resourceVersion; `done` is called once when the stream ends or fails.
   * Returns a function that stops it. Opening the watch is counted and throttled; the stream is not.
   */
  async watchPods(
    labelSelector: string,
    resourceVersion: string,
    onEvent: (type: WatchEventType, obj: V1Pod & { code?: number }) => void,
    done: (err: unknown) => void,
  ): Promise<() => void> {
    const ctl = await this.call(() =>
      this.watcher.watch(
        `/api/v1/namespaces/${this.namespace}/pods`,
        { labelSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300 },
        (type: string, obj: V1Pod & { code?: number }) => onEvent(type as WatchEventType, obj),
        done,
      ),
    );
    return () => ctl.abort();
  }

  getLease(name: string): Promise<V1Lease | null> {
    return this.call(async () => {
      try {
        return await this.coordination.readNamespacedLease({ name, namespace: this.namespace });
      } catch (err) {
        if (toKubeError(err).status === 404) return null;
        throw err;
      }
    });
  }

  /** Creates a Lease; null when someone else created it first (409). */
  createLease(lease: V1Lease): Promise<V1Lease | null> {
    return this.call(async () => {
      try {
        return await this.coordination.createNamespacedLease({ namespace: this.namespace, body: lease });
      } catch (err) {
        if (toKubeError(err).status === 409) return null;
        throw err;
      }
    });
  }

  /** Replaces a Lease at its resourceVersion; null on conflict (someone else wrote it). */
  replaceLease(lease: V1Lease): Promise<V1Lease | null> {
    return this.call(async () => {
      try {
        return await this.coordination.replaceNamespacedLease({ name: lease.metadata!.name!, namespace: this.namespace, body: lease });
      } catch (err) {
        if (toKubeError(err).status === 409) return null;
        throw err;
      }
    });
  }

  async listLeases(labelSelector: string): Promise<V1Lease[]> {
    const list = await this.call(() => this.coordination.listNamespacedLease({ namespace: this.namespace, labelSelector }));
    return list.items;
  }

  async deleteLease(name: string): Promise<void> {
    try {
      await this.call(() => this.coordination.deleteNamespacedLease({ name, namespace: this.namespace }));
    } catch (err) {
      if (!(err instanceof KubeError && err.status === 404)) throw err;
    }
  }
}
