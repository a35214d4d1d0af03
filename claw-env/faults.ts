// Fault injection per sandbox: a share of tool calls answers 429 (with Retry-After) or 500, or answers late.
// A seeded generator makes a run's fault sequence reproducible; faults are decided before a call runs, so a
// failed call never changes state (a retry is always safe).
import type { z } from 'zod';
import { ClawFaults } from '../protocol/claw.ts';
import { mulberry32 } from '../sandbox/prng.ts';

export const FaultConfig = ClawFaults;
export type FaultConfig = z.infer<typeof FaultConfig>;
export type FaultConfigInput = z.input<typeof FaultConfig>;

export type Fault = { kind: 'none' } | { kind: '429' } | { kind: '500' } | { kind: 'slow'; ms: number };

export class FaultInjector {
  private next: () => number;
  readonly config: FaultConfig;
  constructor(config: FaultConfigInput = {}) {
    this.config = FaultConfig.parse(config);
    this.next = mulberry32(this.config.seed);
  }
  get active(): boolean {
    const c = this.config;
    return c.rate_429 + c.rate_500 + c.rate_slow > 0;
  }
  reset(): void {
    this.next = mulberry32(this.config.seed);
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
