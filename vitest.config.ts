import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Worker-creating test files segfault under `threads` (CONTRIBUTING.md); forks isolate them.
    pool: 'forks',
    globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    // The fault suite (processes killed mid-flight) runs on its own: `npm run test:faults`.
    exclude: ['test/faults/**', 'test/cluster/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more parallel files than this only adds contention with the Temporal server.
    maxWorkers: 2,
  },
});
