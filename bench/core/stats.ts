// Counts, percentiles and the pause between measured blocks, shared by every block of the core bench.
export const QUICK = process.argv.includes('--quick') || process.env.GROVE_BENCH_QUICK === '1';
// The default viewport (Orchard-GUI setting), so warm-pool hits are measured as a default create sees them.
export const VIEWPORT = { width: 1280, height: 1000 };
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic',
];

export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
export const now = () => performance.now();
export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
/**
 * A pause before every measured block: work a block leaves behind (GC in the server or the client, renderers
 * finishing a frame) must not land in the next block's time, whichever side that is.
 */
export const quiet = () => sleep(500);
export const r2 = (x: number) => Math.round(x * 100) / 100;

/** Where a block reports: its printed lines and its figures (saved in bench/results/core.json). */
export interface Report {
  results: Record<string, number>;
  say(line: string): void;
}

/** Runs `blocks` `rounds` times in a rotating order: no side always runs right after another's block. */
export async function interleave(rounds: number, blocks: (() => Promise<unknown>)[]): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < blocks.length; k++) {
      await quiet();
      await blocks[(round + k) % blocks.length]();
    }
  }
}
