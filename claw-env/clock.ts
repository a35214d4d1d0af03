// The per-sandbox clock: starts at the fixture's `now` and advances one second per tool call, so the same
// calls give the same timestamps on every run (reproducible tasks), independent of the machine's time.
export class SandboxClock {
  private ms: number;
  constructor(start: string | number, private readonly tickMs = 1000) {
    this.ms = typeof start === 'number' ? start : Date.parse(start);
  }
  now(): number {
    return this.ms;
  }
  /** Advances by one tick and answers the new time. */
  tick(): number {
    this.ms += this.tickMs;
    return this.ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}
