import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: processes and the Temporal server killed mid-flight, hostile inputs.
 * Same setup as the main suite (a fresh dist/, one dev server for the run); slower, so it runs on
 * its own and not in `npm test`.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    // The scenarios kill and restart processes on a 2-core machine: one file at a time.
    maxWorkers: 1,
  },
});
