import { defineConfig } from 'vitest/config';

// Test files run in parallel processes against one Redis; each file takes its own key prefix
// (see libs/testkit/src/redis.ts), so they never see each other's queues or counters.
export default defineConfig({
  test: {
    include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['libs/testkit/src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
