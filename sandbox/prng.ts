// Seeded randomness for everything that must come out the same on every run and machine: the offline sites' data
// and delays, the Claw fixture worlds and fault sequences. One generator, mulberry32 (Tommy Ettinger's public-domain
// 32-bit generator): small, fast, and good enough for test data; not for anything secret.

/** A generator of numbers in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One of `xs`, drawn from `rnd`. */
export function pick<T>(rnd: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rnd() * xs.length)];
}

/** Small stable string hash (32-bit FNV-1a), e.g. for deterministic per-request delays. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
