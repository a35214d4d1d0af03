// The responsiveness probe waits longer on a starved machine (a live renderer waits its turn there; a page called
// hung is reopened and loses what the episode typed), never shorter than on an idle one, and boundedly so.
import { describe, expect, it } from 'vitest';
import { PROBE_MS, probeMs } from '../../browser-env/sandbox-state.ts';

describe('probeMs', () => {
  it('is min(PROBE_MS, T/4) with a core to spare', () => {
    expect(probeMs(10_000, 0)).toBe(2500);
    expect(probeMs(10_000, 1)).toBe(2500);
    expect(probeMs(60_000, 0.5)).toBe(PROBE_MS);
  });
  it('grows with the run queue per core, up to four times', () => {
    expect(probeMs(10_000, 2)).toBe(5000);
    expect(probeMs(10_000, 3.5)).toBe(8750);
    expect(probeMs(10_000, 25)).toBe(10_000);
    expect(probeMs(4000, 25)).toBe(4000);
  });
});
