// One deadline handed down a whole operation (a step: action → settle → observation → recovery), in the spirit
// of Playwright's Progress/timeout object: every wait inside the operation is bounded by what is left, so nothing
// can outlive its caller — not a settle, not a dialog, not a busy renderer. Stages take a sub-deadline
// (`within`) or keep time back for later stages (`reserve`); a sub-deadline never ends after its parent.

export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${Math.max(0, Math.round(ms))} ms`);
    this.name = 'TimeoutError';
  }
}

export class Deadline {
  /** Epoch ms at which the operation must be over. */
  readonly at: number;
  /** What the deadline bounds (in error messages). */
  readonly what: string;

  private constructor(at: number, what: string) {
    this.at = at;
    this.what = what;
  }

  /** A deadline `ms` from now. */
  static after(ms: number, what = 'operation'): Deadline {
    return new Deadline(Date.now() + Math.max(0, ms), what);
  }

  /** Milliseconds left (never negative). */
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }

  get expired(): boolean {
    return Date.now() >= this.at;
  }

  /** A sub-deadline ending `ms` from now, or with this one if that is earlier. */
  within(ms: number, what = this.what): Deadline {
    return new Deadline(Math.min(this.at, Date.now() + Math.max(0, ms)), what);
  }

  /** This deadline moved `ms` earlier: the time kept back belongs to the stages after this one. */
  reserve(ms: number, what = this.what): Deadline {
    return new Deadline(Math.max(Date.now(), this.at - Math.max(0, ms)), what);
  }

  /**
   * Races `p` against the time left; rejects with a TimeoutError naming `what` when it runs out. The loser is
   * never left floating: a late rejection of `p` is swallowed (a page may answer long after we gave up on it).
   */
  race<T>(p: Promise<T>, what: string): Promise<T> {
    p.catch(() => {});
    const ms = this.remaining();
    let timer: NodeJS.Timeout | undefined;
    const t = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(what, ms)), Math.max(1, ms));
    });
    return Promise.race([p, t]).finally(() => clearTimeout(timer));
  }

  /** Resolves after `ms`, or when the deadline comes, whichever is first. */
  sleep(ms: number): Promise<void> {
    const wait = Math.min(Math.max(0, ms), this.remaining());
    return new Promise((resolve) => setTimeout(resolve, wait));
  }
}
