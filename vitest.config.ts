import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Worker-creating test files segfault under `threads` (CONTRIBUTING.md); forks isolate them.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more parallel files than this only adds contention with the Temporal server.
    maxWorkers: 2,
    // The per-user state folder (a running dev's addresses, hooked projects' tokens): the suite's own, never the
    // user's, so no test finds a dev someone else runs, and no dev a test starts is found outside the suite.
    env: { AGENT_JUDGE_HOME: join(tmpdir(), `agent-judge-test-home-${process.pid}`) },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Pure code, no Temporal Runtime: the files share their fork's module cache instead of importing the SDK,
          // zod and the schemas again each (import time 90 s -> 13 s for the unit files on this machine).
          isolate: false,
          // The same setup as the system tests (it runs once for both): some unit tests drive installed tools.
          globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['test/**/*.test.ts'],
          // The fault suite (processes killed mid-flight) runs on its own: `npm run test:faults`.
          exclude: ['test/unit/**', 'test/faults/**', 'test/cluster/**', '**/node_modules/**'],
          // One Temporal Runtime per process, installed by the first file that needs one: each file gets its own
          // process (the default isolation).
          globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
        },
      },
    ],
  },
});
