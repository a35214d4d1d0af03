// Writes that follow a claim made from memory (warm-share.ts): the claim itself (labels + the sandbox record),
// then the record turning ready. They leave the claim path: a sandbox starts on its worker while they are sent.
// Per pod, one write is in flight at a time and those queued meanwhile are merged into the next one, each a
// resourceVersion-guarded read-modify-write (pod-writer.ts) computed in order, so a later change sees the earlier.
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeApi } from './kube.ts';
import type { PodCache } from './pod-cache.ts';
import { updatePod, type MetaChange } from './pod-writer.ts';

/** A change computed from the pod as it will be (null: nothing to write). */
export type Change = (pod: V1Pod) => MetaChange | null;

interface Waiter {
  resolve(pod: V1Pod | null): void;
  reject(err: unknown): void;
}

interface Queue {
  changes: Change[];
  waiters: Waiter[];
  sending: Promise<void> | null;
}

export class ClaimWrites {
  private readonly queues = new Map<string, Queue>();
  private stopped = false;

  constructor(
    private readonly api: KubeApi,
    private readonly cache: PodCache,
  ) {}

  /** Queues a change; resolves with the pod once it is written (null: the pod is gone). */
  write(pod: string, change: Change): Promise<V1Pod | null> {
    const q = this.queues.get(pod) ?? { changes: [], waiters: [], sending: null };
    this.queues.set(pod, q);
    return new Promise<V1Pod | null>((resolve, reject) => {
      q.changes.push(change);
      q.waiters.push({ resolve, reject });
      if (!q.sending) q.sending = this.pump(pod, q);
    });
  }

  /** True while a write for the pod is queued or in flight. */
  pending(pod: string): boolean {
    return this.queues.has(pod);
  }

  /** Resolves once nothing is queued or in flight for the pod (whatever the writes' outcome). */
  async flushed(pod: string): Promise<void> {
    for (let q = this.queues.get(pod); q?.sending; q = this.queues.get(pod)) await q.sending;
  }

  /** A crash, for tests: queued writes are never sent. */
  stop(): void {
    this.stopped = true;
  }

  private async pump(pod: string, q: Queue): Promise<void> {
    while (q.changes.length > 0 && !this.stopped) {
      const changes = q.changes.splice(0);
      const waiters = q.waiters.splice(0);
      try {
        const written = await updatePod(this.api, this.cache, pod, (p) => composed(p, changes));
        for (const w of waiters) w.resolve(written);
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    }
    this.queues.delete(pod);
  }
}

/** The changes applied in order, as one: each sees the pod as the ones before it left it. */
function composed(pod: V1Pod, changes: Change[]): MetaChange | null {
  let cur = pod;
  const out: Required<MetaChange> = { labels: {}, annotations: {} };
  let any = false;
  for (const change of changes) {
    const c = change(cur);
    if (!c) continue;
    any = true;
    Object.assign(out.labels, c.labels);
    Object.assign(out.annotations, c.annotations);
    cur = { ...cur, metadata: { ...cur.metadata, labels: apply(cur.metadata?.labels, c.labels), annotations: apply(cur.metadata?.annotations, c.annotations) } };
  }
  return any ? out : null;
}

function apply(base: Record<string, string> | undefined, change: Record<string, string | null> | undefined): Record<string, string> {
  const out = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(change ?? {})) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
