import { defineConfig } from 'vitest/config';

// Three projects: `fast` (pure units, no browser, no child processes), `slow` (real Chromium, real servers,
// process-cleanup tests) and `load` (tests that load the whole machine on purpose: alone, after the others, so
// their load is theirs and no other test runs under it). All run in CI.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'fast',
          sequence: { groupOrder: 0 },
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.slow.test.ts', 'test/**/*.load.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'slow',
          // Runs after the fast project (different worker limits need distinct groups).
          sequence: { groupOrder: 1 },
          include: ['test/**/*.slow.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Chromium-heavy files run a few at a time on a 2-core machine.
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
      {
        test: {
          name: 'load',
          sequence: { groupOrder: 2 },
          include: ['test/**/*.load.test.ts'],
          testTimeout: 1_800_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
          fileParallelism: false,
        },
      },
    ],
  },
});
