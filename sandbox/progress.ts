// One progress object per operation (a step: action → settle → observation → recovery), in the spirit of
// Playwright's ProgressController: every wait inside the operation is bounded by what is left, and an operation
// that runs out of time is cancelled, not abandoned. A Progress carries an AbortSignal that fires when its time is
// up (or its parent's, or abort() is called); the cleanups the operation registered (cleanupWhenAborted) run then,
// and a `race` that gives up on a promise runs its `cancel` and disposes of a late result (a page opened after the
// caller left is closed, not leaked). Stages take a child (`within`) or keep time back for later stages
// (`reserve`); a child never ends after its parent and is aborted with it.

export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${Math.max(0, Math.round(ms))} ms`);
    this.name = 'TimeoutError';
  }
}

/** What a race does with the work it gives up on. */
export interface RaceCleanup<T> {
  /** Stops the work (Page.stopLoading, cancelling a download): run once when the race is lost to the deadline. */
  cancel?: () => unknown;
  /** Undoes a result that arrives after the race was lost (closes a page opened too late). */
  dispose?: (late: T) => unknown;
}

type Cleanup = () => unknown;

export class Progress {
  /** Epoch ms at which the operation must be over. */
  readonly at: number;
  /** What the progress bounds (in error messages). */
  readonly what: string;
  private controller: AbortController | null = null;
  private timer: NodeJS.Timeout | undefined;
  private detach: (() => void) | undefined;
  private readonly cleanups = new Set<Cleanup>();

  private constructor(
    at: number,
    what: string,
    private readonly parent: Progress | null,
    private readonly owner: AbortSignal | null = null,
  ) {
    this.at = at;
    this.what = what;
  }

  /**
   * A progress ending `ms` from now. With `signal` (the life of what the operation works on, e.g. a sandbox's), it
   * is also aborted, with that signal's reason, when the signal is: closing a sandbox stops the step running in it.
   */
  static after(ms: number, what = 'operation', opts: { signal?: AbortSignal } = {}): Progress {
    return new Progress(Date.now() + Math.max(0, ms), what, null, opts.signal ?? null);
  }

  /** Milliseconds left (never negative; 0 once aborted). */
  remaining(): number {
    if (this.controller?.signal.aborted || this.owner?.aborted) return 0;
    return Math.max(0, this.at - Date.now());
  }

  /** Whether the time is up or the operation was aborted. */
  get expired(): boolean {
    return this.remaining() === 0 || !!this.parent?.expired;
  }

  /** A child ending `ms` from now, or with this one if that is earlier; aborted when this one is. */
  within(ms: number, what = this.what): Progress {
    return new Progress(Math.min(this.at, Date.now() + Math.max(0, ms)), what, this);
  }

  /** A child ending `ms` before this one: the time kept back belongs to the stages after it. */
  reserve(ms: number, what = this.what): Progress {
    return new Progress(Math.max(Date.now(), this.at - Math.max(0, ms)), what, this);
  }

  /**
   * Aborted when the time is up (a TimeoutError), when the parent is, or by abort(). Made on first use: a child
   * nobody listens to holds no timer.
   */
  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const c = new AbortController();
    this.controller = c;
    const parent = this.parent?.signal ?? this.owner;
    if (parent?.aborted) this.fire(parent.reason);
    else if (Date.now() >= this.at) this.fire(new TimeoutError(this.what, 0));
    else {
      const budget = this.at - Date.now();
      this.timer = setTimeout(() => this.fire(new TimeoutError(this.what, budget)), budget);
      // A deadline alone must not keep the process alive.
      this.timer.unref();
      if (parent) {
        const onParent = () => this.fire(parent.reason);
        parent.addEventListener('abort', onParent, { once: true });
        this.detach = () => parent.removeEventListener('abort', onParent);
      }
    }
    return c.signal;
  }

  /** Aborts the operation now (a sandbox closing under a step): its cleanups run, every race it holds rejects. */
  abort(reason: unknown = new Error(`${this.what} was aborted`)): void {
    void this.signal;
    this.fire(reason);
  }

  /** Throws the abort reason (a TimeoutError once the time is up): call between the awaits of a long operation. */
  throwIfAborted(): void {
    if (this.expired) this.signal.throwIfAborted();
    // Expired by the clock a moment before its timer fired.
    if (this.expired) throw new TimeoutError(this.what, 0);
  }

  /**
   * Runs `fn` if the operation is aborted before `off()` is called (or at once when it already was): the work the
   * operation started is stopped, not left running. Returns `off`, for when the work ended by itself.
   */
  cleanupWhenAborted(fn: Cleanup): () => void {
    const signal = this.signal;
    if (signal.aborted) {
      runQuietly(fn);
      return () => {};
    }
    this.cleanups.add(fn);
    return () => this.cleanups.delete(fn);
  }

  /**
   * Settles like `p`, or rejects when the operation is aborted (a TimeoutError naming `what`, by default the
   * progress's own, when its time ran out). Losing the race, it runs `cancel` to stop the work and `dispose` on a result that comes later; a late
   * rejection of `p` is swallowed (a page may answer long after we gave up on it).
   */
  race<T>(p: Promise<T>, what = this.what, cleanup: RaceCleanup<T> = {}): Promise<T> {
    const ms = this.remaining();
    const signal = this.signal;
    let lost = false;
    p.then(
      (v) => {
        if (lost && cleanup.dispose) runQuietly(() => cleanup.dispose!(v));
      },
      () => {},
    );
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        lost = true;
        if (cleanup.cancel) runQuietly(cleanup.cancel);
        reject(signal.reason instanceof TimeoutError ? new TimeoutError(what, ms) : signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  /** Resolves after `ms`, or when the operation ends (time up or aborted), whichever is first. */
  sleep(ms: number): Promise<void> {
    const wait = Math.min(Math.max(0, ms), this.remaining());
    if (wait === 0) return Promise.resolve();
    const signal = this.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, wait);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** The operation ended by itself: its timer goes and its cleanups are dropped (not run). */
  done(): void {
    clearTimeout(this.timer);
    this.detach?.();
    this.cleanups.clear();
  }

  private fire(reason: unknown): void {
    const c = this.controller!;
    if (c.signal.aborted) return;
    clearTimeout(this.timer);
    this.detach?.();
    const fns = [...this.cleanups];
    this.cleanups.clear();
    for (const fn of fns) runQuietly(fn);
    c.abort(reason);
  }
}

/** Runs a cleanup; its failure (sync or async) is nobody's to handle. */
function runQuietly(fn: () => unknown): void {
  try {
    const r = fn();
    if (r instanceof Promise) r.catch(() => {});
  } catch {
    // best effort
  }
}
