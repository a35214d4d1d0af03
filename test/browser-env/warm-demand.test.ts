// The warm pool's size learned from waves (browser-env/warm-demand.ts), on a fake clock.
import { describe, expect, it } from 'vitest';
import { BURST_MS, DECAY_MS, WARM_CONTEXT_MB, WarmDemand } from '../../browser-env/warm-demand.ts';

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => { t += ms; } };
}

describe('WarmDemand', () => {
  it('keeps the configured floor before any demand, and with learning off', () => {
    expect(new WarmDemand(3, 1024).target()).toBe(3);
    const off = new WarmDemand(2, 0);
    for (let i = 0; i < 16; i++) off.note();
    expect(off.target()).toBe(2);
  });

  it('learns the largest burst of claims, not the total over time', () => {
    const c = clock();
    const d = new WarmDemand(0, 4096, c.now);
    for (let i = 0; i < 16; i++) { d.note(); c.advance(20); }
    expect(d.target()).toBe(16);
    // Claims spread out (one every 2 burst windows) never make a bigger wave.
    for (let i = 0; i < 40; i++) { c.advance(BURST_MS * 2); d.note(); }
    expect(d.target()).toBe(16);
    // A later wave of 20 raises it.
    c.advance(BURST_MS * 2);
    for (let i = 0; i < 20; i++) d.note();
    expect(d.target()).toBe(20);
  });

  it('stays within the memory budget', () => {
    const d = new WarmDemand(0, 5 * WARM_CONTEXT_MB);
    for (let i = 0; i < 64; i++) d.note();
    expect(d.learned).toBe(64);
    expect(d.target()).toBe(5);
  });

  it('halves the learned size for each idle period, never below the floor', () => {
    const c = clock();
    const d = new WarmDemand(2, 4096, c.now);
    for (let i = 0; i < 16; i++) d.note();
    c.advance(DECAY_MS - 1);
    expect(d.target()).toBe(16);
    c.advance(1);
    expect(d.target()).toBe(8);
    c.advance(2 * DECAY_MS);
    expect(d.target()).toBe(2);
  });
});
