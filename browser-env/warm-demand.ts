// How many warm contexts the pool keeps when it learns the wave: the peak number of default-look creates and
// resets (claims a warm context could serve) that came within one burst, bounded by a memory budget. An RL
// trainer starts its episodes in waves of the same size; after the first wave the pool holds enough for the next
// one, where a fixed default of 0 made every wave start cold (16 starts at once: 1.96x raw Playwright).
// The configured `warmPool` stays the floor; `warmPoolMaxMb` 0 turns learning off.

/** Claims closer together than this are one wave (a wave of 16 creates arrives within well under a second). */
export const BURST_MS = 3000;
/**
 * What a warm context is counted at against the budget, MiB: a blank page's renderer plus the context's share
 * of the browser, rounded up (the core bench's idle session on its fixture page reads ~73 MB PSS; a blank one less).
 */
export const WARM_CONTEXT_MB = 64;
/** After this long without a claim the learned size halves (a trainer that stopped gives the memory back). */
export const DECAY_MS = 10 * 60_000;

export class WarmDemand {
  private claims: number[] = [];
  private peak = 0;
  private lastClaim = 0;

  constructor(
    private readonly floor: number,
    private readonly budgetMb: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** A claim (served warm or not): it counts toward the burst it belongs to. */
  note(): void {
    const t = this.now();
    this.decay(t);
    this.lastClaim = t;
    this.claims.push(t);
    while (this.claims.length && this.claims[0] < t - BURST_MS) this.claims.shift();
    this.peak = Math.max(this.peak, this.claims.length);
  }

  /** The most warm contexts the memory budget allows. */
  get cap(): number {
    return Math.floor(this.budgetMb / WARM_CONTEXT_MB);
  }

  /** How many warm contexts to keep now: the configured floor, or the learned peak within the budget. */
  target(): number {
    this.decay(this.now());
    return Math.max(this.floor, Math.min(this.peak, this.cap));
  }

  /** The learned peak (metrics). */
  get learned(): number {
    return this.peak;
  }

  private decay(t: number): void {
    if (!this.peak || !this.lastClaim) return;
    const idle = t - this.lastClaim;
    if (idle < DECAY_MS) return;
    this.peak = Math.floor(this.peak / 2 ** Math.floor(idle / DECAY_MS));
    this.lastClaim = t;
  }
}
