// Bounded concurrency for Kubernetes API calls, with retries and backoff (429 honours Retry-After; 5xx and
// network errors back off exponentially with jitter). The queue length is what "under pressure" means to the
// backend: past maxQueue, new sandboxes are refused with 503 + Retry-After instead of piling up.

export interface ThrottleOptions {
  concurrency: number;
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/** What a failed call tells the retry loop. */
export interface CallFailure {
  status: number;
  retryAfterSeconds?: number;
}

export function isRetryable(f: CallFailure): boolean {
  return f.status === 0 || f.status === 429 || f.status === 500 || f.status === 502 || f.status === 503 || f.status === 504;
}

/**
 * Background calls (warm-pool refills, reconciler deletes) have a quarter of the slots to themselves and never take
 * more: a refill burst cannot hold the slots claims need, and claims cannot starve the refill either.
 */
export class Throttle {
  private active = 0;
  private activeBackground = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly waitingBackground: Array<() => void> = [];
  /** Requests sent (retries included). */
  calls = 0;
  retried = 0;
  /** Most calls in flight at once so far. */
  maxActive = 0;

  constructor(
    private readonly opts: ThrottleOptions,
    private readonly classify: (err: unknown) => CallFailure,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** Foreground calls waiting for a slot (background refills do not count as pressure). */
  get queued(): number {
    return this.waiting.length;
  }

  private get backgroundLimit(): number {
    return Math.max(1, Math.floor(this.opts.concurrency / 4));
  }
  get inFlight(): number {
    return this.active;
  }

  private async acquire(background: boolean): Promise<void> {
    if (!background && this.active < this.opts.concurrency) this.active++;
    else if (background && this.active < this.opts.concurrency && this.activeBackground < this.backgroundLimit) {
      this.active++;
      this.activeBackground++;
    } else {
      // release() hands its slot straight to the next waiter (active stays the same).
      await new Promise<void>((resolve) => (background ? this.waitingBackground : this.waiting).push(resolve));
    }
    this.maxActive = Math.max(this.maxActive, this.active);
  }

  private release(background: boolean): void {
    if (background) this.activeBackground--;
    if (this.activeBackground < this.backgroundLimit && this.waitingBackground.length > 0) {
      this.activeBackground++;
      return this.waitingBackground.shift()!();
    }
    const next = this.waiting.shift();
    if (next) return next();
    this.active--;
  }

  /** Runs fn in a slot; retries retryable failures (attempt is 0 on the first try). */
  async run<T>(fn: (attempt: number) => Promise<T>, background = false): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      await this.acquire(background);
      let failure: CallFailure;
      let error: unknown;
      try {
        this.calls++;
        return await fn(attempt);
      } catch (err) {
        error = err;
        failure = this.classify(err);
      } finally {
        this.release(background);
      }
      if (attempt >= this.opts.retries || !isRetryable(failure)) throw error;
      this.retried++;
      // Sleep outside the slot, so a throttled server does not hold every slot asleep.
      await this.sleep(this.backoff(attempt, failure));
    }
  }

  backoff(attempt: number, f: CallFailure): number {
    if (f.retryAfterSeconds !== undefined) return Math.min(this.opts.maxBackoffMs, f.retryAfterSeconds * 1000);
    const cap = Math.min(this.opts.maxBackoffMs, this.opts.backoffMs * 2 ** attempt);
    return cap / 2 + Math.random() * (cap / 2);
  }
}
