import { defineConfig } from 'vitest/config';

// Two projects: `fast` (pure units, no browser, no child processes) and `slow`
// (real Chromium, real servers, process-cleanup tests). Both run in CI.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'fast',
          sequence: { groupOrder: 0 },
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.slow.test.ts'],
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
    ],
  },
});
