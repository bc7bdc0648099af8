import { defineConfig } from 'vitest/config';

/**
 * The failover tests of `npm run test:cluster` (scripts/test-cluster.sh): they kill the processes of the cluster
 * scripts/cluster.sh runs, so they need it (AGENT_JUDGE_TEST_TEMPORAL_ADDRESS) and never run in `npm test`.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    maxWorkers: 1,
  },
});
