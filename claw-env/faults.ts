// Fault injection per sandbox: a share of tool calls answers 429 (with Retry-After) or 500, or answers late.
// A seeded generator makes a run's fault sequence reproducible; faults are decided before a call runs, so a
// failed call never changes state (a retry is always safe).
import type { z } from 'zod';
import { ClawFaults } from '../protocol/claw.ts';

export const FaultConfig = ClawFaults;
export type FaultConfig = z.infer<typeof FaultConfig>;
export type FaultConfigInput = z.input<typeof FaultConfig>;

export type Fault = { kind: 'none' } | { kind: '429' } | { kind: '500' } | { kind: 'slow'; ms: number };

/** mulberry32: small, fast, good enough for test data and fault sequences. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultInjector {
  private next: () => number;
  readonly config: FaultConfig;
  constructor(config: FaultConfigInput = {}) {
    this.config = FaultConfig.parse(config);
    this.next = rng(this.config.seed);
  }
  get active(): boolean {
    const c = this.config;
    return c.rate_429 + c.rate_500 + c.rate_slow > 0;
  }
  reset(): void {
    this.next = rng(this.config.seed);
  }
  /** One draw per call: 429 first, then 500, then slow, by cumulative rate. */
  decide(): Fault {
    if (!this.active) return { kind: 'none' };
    const c = this.config;
    const x = this.next();
    if (x < c.rate_429) return { kind: '429' };
    if (x < c.rate_429 + c.rate_500) return { kind: '500' };
    if (x < c.rate_429 + c.rate_500 + c.rate_slow) return { kind: 'slow', ms: c.slow_ms };
    return { kind: 'none' };
  }
}
