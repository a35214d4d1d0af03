// A small worker pool: runs `work(item)` for each item with at most `concurrency` in flight.
// Stops handing out new items once `shouldStop()` says so (time/cost caps, abort); running items finish.

export interface PoolOptions<T> {
  concurrency: number;
  items: readonly T[];
  work: (item: T, index: number) => Promise<void>;
  /** Checked before each item is started. */
  shouldStop?: () => boolean;
}

/** Resolves when every started item has finished. Rejections from `work` propagate after the others settle. */
export async function runPool<T>(opts: PoolOptions<T>): Promise<{ started: number }> {
  const n = Math.max(1, Math.floor(opts.concurrency));
  let next = 0;
  let firstError: unknown;
  let failed = false;
  const worker = async (): Promise<void> => {
    for (;;) {
      if (failed || next >= opts.items.length || opts.shouldStop?.()) return;
      const i = next++;
      try {
        await opts.work(opts.items[i], i);
      } catch (e) {
        if (!failed) {
          failed = true;
          firstError = e;
        }
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, Math.max(1, opts.items.length)) }, () => worker()));
  if (failed) throw firstError;
  return { started: next };
}
