import { defineConfig } from 'vitest/config';

// Test files run in parallel processes against one Redis; each file takes its own key prefix
// (see libs/testkit/src/redis.ts), so they never see each other's queues or counters.
export default defineConfig({
  test: {
    include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'clients/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['libs/testkit/src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most files spend their time waiting (slow mail servers, deadlines, worker takeovers), so four
    // run side by side even on two cores; and a worker process keeps the modules it loaded from one
    // file to the next (no test mocks a module, stubs the environment or fakes timers, and each
    // takes its own Redis prefix). The suite here: 173 s with two isolated workers, 118 s with
    // four, 88 s with four that share their module cache.
    maxWorkers: 4,
    isolate: false,
    coverage: {
      provider: 'v8',
      include: ['libs/*/src/**/*.ts', 'services/*/src/**/*.ts'],
      exclude: ['libs/testkit/**', '**/main.ts', '**/index.ts', '**/types.ts'],
      reporter: ['text-summary'],
      // The pure heart of verification (checks, the reply table, the SMTP conversation) must stay
      // covered: the run fails when it drops below these figures.
      thresholds: {
        'services/verify-worker/src/checks/**': { statements: 95, branches: 90, functions: 95, lines: 95 },
        'services/verify-worker/src/smtp/**': { statements: 90, branches: 80, functions: 85, lines: 95 },
      },
    },
  },
});
