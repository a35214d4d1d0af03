// A watched view of the install's worker pods (list, then watch from the list's resourceVersion; re-list when the
// watch expires, is dropped or answers 410 Gone). Waiting for a pod to become ready reads this cache: one watch
// serves every sandbox, instead of one poll per pod.
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../sandbox/log.ts';
import type { KubeApi, WatchEventType } from './kube.ts';

type Listener = (pod: V1Pod, type: 'ADDED' | 'MODIFIED' | 'DELETED') => void;

export class PodCache {
  private readonly pods = new Map<string, V1Pod>();
  private readonly listeners = new Set<Listener>();
  private stopWatch: (() => void) | null = null;
  private stopped = false;
  private resourceVersion = '';
  private synced: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private nextSync: Promise<void> | null = null;
  private lastSyncStart = 0;
  /** Counters for tests and /metrics. */
  relists = 0;
  watchRestarts = 0;
  syncs = 0;

  constructor(
    private readonly api: KubeApi,
    private readonly selector: string,
    private readonly log: Logger,
    /** Least time between two sync() lists: a flood of lookups costs at most one LIST per this many ms. */
    private readonly syncGapMs = 250,
  ) {}

  /** Lists once and starts watching; resolves after the first list. */
  start(): Promise<void> {
    return (this.synced ??= this.relist());
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.stopWatch?.();
    this.stopWatch = null;
  }

  get(name: string): V1Pod | undefined {
    return this.pods.get(name);
  }

  all(): V1Pod[] {
    return [...this.pods.values()];
  }

  /** Calls fn on every change until the returned function is called. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Catches up with the API server now (a consistent LIST, beside the watch, which may lag another replica's write
   * by a few ms). Callers share lists: every caller waits for a list that started after it called, and lists start
   * at most every syncGapMs.
   */
  sync(): Promise<void> {
    return (this.nextSync ??= (async () => {
      await this.syncing?.catch(() => undefined);
      const wait = this.lastSyncStart + this.syncGapMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.nextSync = null;
      this.lastSyncStart = Date.now();
      this.syncing = this.listOnce();
      return this.syncing;
    })());
  }

  private async listOnce(): Promise<void> {
    this.syncs++;
    const { items, resourceVersion } = await this.api.listPods(this.selector);
    const seen = new Set<string>();
    for (const pod of items) {
      seen.add(pod.metadata!.name!);
      this.remember(pod);
    }
    // Gone at the list's version (a pod the watch delivered since is newer and stays).
    for (const [name, pod] of [...this.pods]) {
      if (!seen.has(name) && Number(pod.metadata?.resourceVersion) <= Number(resourceVersion)) this.set(name, pod, 'DELETED');
    }
  }

  /** Applies an object the backend got back from a write (create/patch), so the cache never lags its own writes. */
  remember(pod: V1Pod): void {
    const name = pod.metadata?.name;
    if (!name) return;
    const old = this.pods.get(name);
    if (old && Number(old.metadata?.resourceVersion) > Number(pod.metadata?.resourceVersion)) return;
    this.set(name, pod, old ? 'MODIFIED' : 'ADDED');
  }

  private set(name: string, pod: V1Pod, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    if (type === 'DELETED') this.pods.delete(name);
    else this.pods.set(name, pod);
    for (const fn of this.listeners) {
      try {
        fn(pod, type);
      } catch (err) {
        this.log.error({ err }, 'pod cache listener failed');
      }
    }
  }

  private async relist(): Promise<void> {
    this.relists++;
    const { items, resourceVersion } = await this.api.listPods(this.selector);
    const seen = new Set<string>();
    for (const pod of items) {
      const name = pod.metadata!.name!;
      seen.add(name);
      this.set(name, pod, this.pods.has(name) ? 'MODIFIED' : 'ADDED');
    }
    // Deleted while we were not watching.
    for (const [name, pod] of [...this.pods]) if (!seen.has(name)) this.set(name, pod, 'DELETED');
    this.resourceVersion = resourceVersion;
    await this.watch();
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    let gone = false;
    const onEvent = (type: WatchEventType, obj: V1Pod & { code?: number }) => {
      if (type === 'ERROR') {
        // 410 Gone: our resourceVersion is older than the server keeps; only a fresh list can catch up.
        if (obj.code === 410) gone = true;
        return;
      }
      if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
      if (type === 'BOOKMARK') return;
      this.set(obj.metadata!.name!, obj, type);
    };
    const done = (err: unknown) => {
      this.stopWatch = null;
      if (this.stopped) return;
      this.watchRestarts++;
      const relist = gone || (err as { statusCode?: number } | null)?.statusCode === 410;
      if (err) this.log.warn({ err: String(err) }, 'pod watch ended with an error; restarting');
      this.restart(relist, err ? 500 : 0);
    };
    try {
      this.stopWatch = await this.api.watchPods(this.selector, this.resourceVersion, onEvent, done);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'pod watch could not be opened; re-listing');
      this.restart(true, 1000);
    }
  }

  private restart(relist: boolean, delayMs: number): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      const next = relist ? this.relist() : this.watch();
      next.catch((err: unknown) => {
        this.log.warn({ err: String(err) }, 'pod re-list failed; retrying');
        this.restart(true, 1000);
      });
    }, delayMs);
    this.retryTimer.unref();
  }
}
